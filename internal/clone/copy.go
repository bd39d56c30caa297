package clone

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// maxStatement bounds an INSERT the copy sends: large enough that a
// statement's round trip is a small part of its cost, well under the
// default max_allowed_packet (16 MiB).
const maxStatement = 4 << 20

// copyRows copies the rows of runs: the readers read their holes, each
// in its snapshot session, and send chunks, which the workers write;
// a table whose rows are all in is finished (indexes, triggers) beside.
func (c *Cloner) copyRows(ctx context.Context, st *started, snap *snapshot, cat *catalog, runs []*tableRun) error {
	c.setPhase("copying rows")
	c.log.Info("copying rows", "tables", len(runs), "workers", c.cfg.Workers, "readers", len(snap.sessions), "load_data", c.loads,
		"since_start_seconds", time.Since(c.started).Seconds())
	biggestFirst(runs)
	maxPacket, err := targetMaxPacket(ctx, st.tgt)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	chunks := make(chan *chunk, 2*c.cfg.Workers)
	b := newBudget(c.cfg.budget())
	f := c.finisher(st, cat)
	finishing := make(chan struct{}, c.cfg.Workers) // bounds the finishes at once
	finish := func(tr *tableRun) {
		g.Go(func() error {
			select {
			case finishing <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			defer func() { <-finishing }()
			return f.finish(gctx, tr)
		})
	}
	w := &writer{tgt: st.wdb, store: st.clones, budget: b, maxStatement: min(maxStatement, maxPacket-1024), maxPacket: maxPacket,
		done: func(ch *chunk) {
			if ch.tr.committed(ch.rec.Rows, ch.rec.Bytes) {
				finish(ch.tr)
			}
		}}
	// The tables left to read, biggest first; each reader takes the next.
	var mu sync.Mutex
	next := 0
	take := func() *tableRun {
		mu.Lock()
		defer mu.Unlock()
		for next < len(runs) {
			tr := runs[next]
			next++
			if len(tr.holes) > 0 {
				return tr
			}
			if tr.readAll() {
				finish(tr) // nothing left to read: a killed run copied it all
			}
		}
		return nil
	}
	var readers sync.WaitGroup
	th := &throttle{rate: c.cfg.Rate}
	for _, conn := range snap.sessions {
		r := &reader{conn: conn, position: snap.Position, rows: c.cfg.ChunkRows, bytes: c.cfg.ChunkBytes, budget: b, throttle: th, out: chunks}
		readers.Add(1)
		g.Go(func() error {
			defer readers.Done()
			// Once it has read its last table, the session's snapshot ends:
			// the source keeps no history for it, and its tables' metadata
			// locks go (DDL on them waits until then).
			defer endSession(conn)
			for tr := take(); tr != nil; tr = take() {
				if err := r.table(gctx, tr); err != nil {
					return err
				}
				if tr.readAll() {
					finish(tr)
				}
			}
			return nil
		})
	}
	snap.sessions = nil // each reader ends its own
	go func() {
		readers.Wait()
		close(chunks)
	}()
	for range c.cfg.Workers {
		g.Go(func() error {
			for ch := range chunks {
				if err := w.write(gctx, ch); err != nil {
					return err
				}
			}
			return nil
		})
	}
	stop := c.showProgress(ctx)
	err = g.Wait()
	stop()
	if err != nil {
		// Unblock a reader waiting to send: nothing writes any more.
		for range chunks {
		}
	}
	return err
}

// finisher is the finisher of this run.
func (c *Cloner) finisher(st *started, cat *catalog) *finisher {
	return &finisher{src: st.src, tgt: st.tgt, store: st.clones, rules: &c.cfg.Stream.Filter, triggers: cat.triggers,
		log: func(msg string, args ...any) { c.log.Info(msg, args...) }}
}

// showProgress shows the progress every Config.ProgressEvery until the
// returned function is called (which shows it a last time).
func (c *Cloner) showProgress(ctx context.Context) (stop func()) {
	if c.cfg.Progress == nil || c.cfg.ProgressEvery <= 0 {
		return func() {}
	}
	d := &display{w: c.cfg.Progress, terminal: c.cfg.Terminal}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(c.cfg.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				d.show(c.Progress())
			case <-done:
				d.show(c.Progress())
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// targetMaxPacket reads the target's max_allowed_packet.
func targetMaxPacket(ctx context.Context, tgt *sql.DB) (int, error) {
	var n int
	if err := tgt.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&n); err != nil {
		return 0, fmt.Errorf("target: reading max_allowed_packet: %w", err)
	}
	return n, nil
}
