package replicate

import (
	"cmp"
	"time"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/prepare"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/scheduler"
	"github.com/paraply/paraply/internal/source"
)

// Status is a snapshot of a running pipeline, for `paraply status`, the
// metrics and the demo. Endpoints appear without passwords. Its JSON is
// the "status" of /status.json (statusjson.go, docs/status-json.md).
type Status struct {
	// Now is when the snapshot was taken.
	Now time.Time
	// Stream is the stream on the target (checkpoint.DefaultStream
	// unless --name says otherwise).
	Stream         string
	Source, Target string
	// TargetConnection says whether the target answers (a connection of
	// paraply's own asks it every second), since when, and its last error.
	TargetConnection Connection
	// TargetRedo is the target's redo log, as the same connection reads
	// it every second.
	TargetRedo RedoLog
	Flavor     string
	Dependency string
	Workers    int
	// AutoWorkers is --workers auto: Scheduler.Limit of the Workers may
	// have work at once, for Scheduler.LimitReason.
	AutoWorkers   bool
	PreserveOrder bool
	Started       time.Time
	// SourcePosition is the source's GTID position as last read (every
	// second while the pipeline runs; at the start, what inspecting the
	// source found), at SourcePositionTime; "" for binlog files.
	SourcePosition     string
	SourcePositionTime time.Time
	Receiver           source.Status
	Relay              relaylog.Stats
	Scheduler          scheduler.Stats
	Dependencies       prepare.Stats
	// Checkpoint is the last low-water mark saved on the target.
	Checkpoint      scheduler.Progress
	CheckpointSaved time.Time
	// LockHeld says the stream holds its lock on the target (false while
	// it is lost and being taken again, and before the pipeline runs).
	LockHeld bool
	// Shared names the tables this stream writes that another stream on
	// the target writes too, with those streams ("db.t (other, ...)").
	Shared []string
	// Lag is how long ago the source committed the oldest transaction not
	// yet applied (0 when nothing is waiting), dated by LagMethod (see
	// package lag): "receive-time" or "heartbeat". It is how far the
	// target is behind the source, so with --delay it includes the delay
	// (a transaction waits at least Delay): LagBeyondDelay is the part
	// that is not asked for.
	Lag       time.Duration
	LagMethod string
	// ClockOffset is paraply's clock minus the source's, nil until
	// measured.
	ClockOffset *time.Duration
	// HeartbeatError says why --heartbeat-table is not in use, when set.
	HeartbeatError string
	// Heartbeats counts heartbeat transactions received: paraply's own
	// writes, which are not the source's load.
	Heartbeats int64
	// Backlog is the number of transactions received and not yet applied.
	Backlog int64
	// Delay is --delay: transactions are applied no earlier than their
	// source commit time plus Delay (Dependencies.DelayedUntil says until
	// when the next one is held).
	Delay time.Duration
	// Filters are --include, --exclude and --rewrite-db and what they
	// left out; nil without them.
	Filters *FilterStatus
}

// AtOnce is how many workers may have work at once: the limit --workers
// auto chose, or the pool. Shares of the workers' time are of these.
func (s Status) AtOnce() int {
	if s.Scheduler.Limit > 0 {
		return s.Scheduler.Limit
	}
	return s.Workers
}

// LagBeyondDelay is the lag less --delay, at least 0: how far behind the
// target is beyond what the delay asks for (the lag itself without
// --delay). A transaction is held until its source second plus the delay
// (MariaDB dates events in whole seconds), so a delayed replica keeping up
// lags the delay less up to a second, and this is 0.
func (s Status) LagBeyondDelay() time.Duration {
	return max(0, s.Lag-s.Delay)
}

// Stream is the replica's stream on the target.
func (r *Replica) Stream() string { return cmp.Or(r.cfg.Name, checkpoint.DefaultStream) }

// Status returns a snapshot; it is safe to call while Run runs.
func (r *Replica) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := Status{
		Now: time.Now(), Stream: r.Stream(),
		Source: r.feed.String(), Target: r.cfg.Target.String(),
		Flavor: r.info.Flavor.String(), Dependency: r.cfg.Mode.String(),
		Workers: r.cfg.Pool(), AutoWorkers: r.cfg.Auto(), PreserveOrder: r.cfg.PreserveOrder,
		Started: r.started, SourcePosition: r.info.Position,
		Scheduler: r.stats, Checkpoint: r.saved, CheckpointSaved: r.savedAt,
		Delay: r.cfg.Delay,
	}
	if pos, at := r.srcPos.get(); !at.IsZero() {
		st.SourcePosition, st.SourcePositionTime = pos, at
	} else if r.info.Position != "" {
		st.SourcePositionTime = r.started
	}
	st.TargetConnection = r.target.state(st.Now)
	st.TargetRedo = r.redo.state()
	st.LockHeld = r.lock != nil && r.lock.Held()
	st.Shared = checkpoint.Shared(withStream(r.shared, r.Stream()))
	if r.receiver != nil {
		st.Receiver = r.receiver.Status()
	}
	if r.relay != nil {
		st.Relay = r.relay.Stats()
	}
	if r.prep != nil {
		st.Dependencies = r.prep.Stats()
	}
	r.filterStatus(&st)
	r.readLag(&st)
	return st
}

// withStream adds stream to each table's writers, so that checkpoint.Shared
// lists every table shared with another.
func withStream(shared map[checkpoint.Object][]string, stream string) map[checkpoint.Object][]string {
	out := make(map[checkpoint.Object][]string, len(shared))
	for t, others := range shared {
		out[t] = append([]string{stream}, others...)
	}
	return out
}
