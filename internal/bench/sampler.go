package bench

import (
	"context"
	"database/sql"
	"sort"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// sampleEvery is the period of the processlist sampler.
const sampleEvery = 200 * time.Millisecond

// sampler counts what the sessions of the applying server are doing
// during a run, from its processlist: where an applier spends its time
// seen from the target (waiting for a commit, for a row lock, for the
// client...). Start it with startSampler and end it with stop.
type sampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	// counts and samples are written by the sampling goroutine only, and
	// read after done is closed.
	counts    map[string]int
	lockWaits int
	samples   int
}

// startSampler starts sampling s's processlist until stop is called.
// Sampling is best effort: a failed query ends it quietly.
func startSampler(ctx context.Context, s *sandbox.Server) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	sp := &sampler{cancel: cancel, done: make(chan struct{}), counts: map[string]int{}}
	db, err := s.DB("")
	if err != nil {
		close(sp.done)
		return sp
	}
	go func() {
		defer close(sp.done)
		defer db.Close()
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := sp.sample(ctx, db); err != nil {
				return
			}
		}
	}()
	return sp
}

// sample adds one look at the processlist: every session but this one,
// the daemon threads and the binlog dump, by command and state.
func (sp *sampler) sample(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT COMMAND, STATE FROM information_schema.PROCESSLIST
		WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Daemon', 'Binlog Dump')`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var command, state sql.NullString
		if err := rows.Scan(&command, &state); err != nil {
			return err
		}
		key := command.String
		if state.String != "" {
			key += ": " + state.String
		}
		sp.counts[key]++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// Row lock waits look like any other "Updating" in the processlist.
	var waits int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'").Scan(&waits); err != nil {
		return err
	}
	sp.lockWaits += waits
	sp.samples++
	return nil
}

// maxStates is how many states a run keeps, the most frequent first.
const maxStates = 8

// stop ends sampling and returns the most frequent states with the
// average number of sessions in each, and the average number of InnoDB
// transactions waiting for a row lock (nil and 0 if nothing was sampled).
func (sp *sampler) stop() ([]SessionState, float64) {
	sp.cancel()
	<-sp.done
	if sp.samples == 0 {
		return nil, 0
	}
	var states []SessionState
	for k, n := range sp.counts {
		states = append(states, SessionState{State: k, Sessions: round(float64(n)/float64(sp.samples), 2)})
	}
	sort.Slice(states, func(i, j int) bool {
		if states[i].Sessions != states[j].Sessions {
			return states[i].Sessions > states[j].Sessions
		}
		return states[i].State < states[j].State
	})
	if len(states) > maxStates {
		states = states[:maxStates]
	}
	return states, round(float64(sp.lockWaits)/float64(sp.samples), 2)
}

// SessionState is one processlist state of the applying server and the
// average number of its sessions in it during a run.
type SessionState struct {
	State    string  `json:"state"`
	Sessions float64 `json:"sessions"`
}
