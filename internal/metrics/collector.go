package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/replicate"
)

// StatusSource is a running pipeline, read by status's sampler.
type StatusSource interface {
	Status() replicate.Status
}

// Snapshot is what /metrics serves at a scrape: a sample the status server
// takes for it, numbered, and the figures status computed from it over
// its window. /status.json?snapshot=N, the status page (/?snapshot=N) and
// `paraply status --snapshot N` show the same numbers for it:
// paraply_status_snapshot says which N.
type Snapshot struct {
	// ID numbers the status server's samples; Time is when it was taken.
	ID   int64
	Time time.Time
	// Status and Workers are the pipeline's state and the pool's counters
	// at Time.
	Status  replicate.Status
	Workers []WorkerStats
	// CapacitySeconds is the worker time the limit allowed since the
	// status server started: the workers allowed at once (Status.AtOnce)
	// integrated over time. The workers' time shares are of it.
	CapacitySeconds float64
	// Window holds the figures over the last window.
	Window Window
}

// Window is what status computed over the last window (10 s unless asked
// otherwise): the one definition of these figures, which /metrics only
// serves.
type Window struct {
	// Seconds is the span the figures cover (from the newest sample at
	// least the window before Time).
	Seconds float64
	// AppliedPerSecond is source transactions committed on the target per
	// second.
	AppliedPerSecond float64
	// Shares of the workers' time (of CapacitySeconds over the window):
	// executing, waiting for their commit turn, in COMMIT, waiting for a
	// target that does not answer, and idle (the rest).
	Exec, Turn, Commit, TargetWait, Idle float64
}

// SnapshotSource is what the collector reads at scrape time.
type SnapshotSource interface {
	Snapshot() Snapshot
}

// Collector turns a status snapshot into Prometheus metrics.
type Collector struct {
	src     SnapshotSource
	workers *Workers
	descs   map[string]*prometheus.Desc
}

// metric describes one exported metric.
type metric struct {
	name, help string
	labels     []string
}

// Metrics lists every metric paraply exports (the dashboard test checks
// the dashboard queries only these), besides paraply_batch_transactions.
var Metrics = []metric{
	{"paraply_up", "1 while the pipeline runs.", nil},
	{"paraply_target_up", "1 while the target answers (paraply pings it every second on a connection of its own), 0 while it does not or has not yet: the workers, the checkpoint and the lock wait for it.", nil},
	{"paraply_target_down_seconds_total", "Time the target did not answer paraply's pings, since the start (an outage in progress included).", nil},
	{"paraply_target_checkpoint_age_ratio", "The target's Innodb_checkpoint_age over Innodb_checkpoint_max_age at the last ping (absent while it has not reported them): from 0.875 InnoDB writes pages out at once, and at 1 it holds commits until it has.", nil},
	{"paraply_target_redo_log_full_share", "Share of the last ten pings (one a second) that found the target's redo log full (checkpoint age at 7/8 of its maximum or above): most of the time means raise innodb_log_file_size.", nil},
	{"paraply_target_lock_held", "1 while the stream holds its lock on the target, 0 while it has lost it and is taking it back (or has not started).", nil},
	{"paraply_source_connected", "1 while the replication connection to the source is up.", nil},
	{"paraply_source_reconnects_total", "Reconnections to the source.", nil},
	{"paraply_source_last_event_age_seconds", "Seconds since the source sent anything (heartbeats included).", nil},
	{"paraply_received_transactions_total", "Transactions received from the source.", nil},
	{"paraply_received_events_total", "Binlog events received from the source, heartbeats included.", nil},
	{"paraply_received_bytes_total", "Bytes of transactions received from the source.", nil},
	{"paraply_relay_log_bytes", "Bytes in the relay log.", nil},
	{"paraply_relay_log_segments", "Segment files in the relay log.", nil},
	{"paraply_relay_log_blocked_seconds_total", "Time receiving waited because the relay log was full.", nil},
	{"paraply_queued_transactions", "Transactions admitted to the look-ahead window and not yet committed.", nil},
	{"paraply_ready_transactions", "Transactions whose dependencies are met, waiting for a worker.", nil},
	{"paraply_assigned_transactions_total", "Transactions handed to workers (events assigned).", nil},
	{"paraply_applied_transactions_total", "Transactions committed on the target.", nil},
	{"paraply_skipped_transactions_total", "Transactions skipped because the target already had them.", nil},
	{"paraply_target_transactions_total", "Target transactions (batches) committed.", nil},
	{"paraply_coordinator_waits_total", "Times the coordinator could not hand out work, by reason: dependency, barrier (a dependency wait a DDL or keyless table explains), workers_busy, queue_full, commit_order (workers' turn waits), source (everything handed out: waiting for the source, not a problem).", []string{"reason"}},
	{"paraply_coordinator_wait_seconds_total", "Time the coordinator could not hand out work, by reason (see paraply_coordinator_waits_total).", []string{"reason"}},
	{"paraply_status_snapshot", "Number of the status snapshot these values are from (each scrape takes one): /status.json?snapshot=N, the status page (/?snapshot=N) and paraply status --snapshot N show the same values for it.", nil},
	{"paraply_status_snapshot_timestamp_seconds", "When that snapshot was taken (Unix time).", nil},
	{"paraply_status_window_seconds", "Seconds that paraply_status_applied_per_second and paraply_status_worker_time_share cover: the status page's and paraply status's window (10 s).", nil},
	{"paraply_status_applied_per_second", "Source transactions committed on the target per second over the last paraply_status_window_seconds; as rate(paraply_applied_transactions_total[10s]).", nil},
	{"paraply_status_worker_time_share", "Share of the workers' time over the last paraply_status_window_seconds, by state: exec, turn (waiting for the commit turn), commit, target_wait (the target did not answer), idle (the rest); of the time of the workers allowed (paraply_worker_capacity_seconds_total). As increase(paraply_worker_seconds_total{state=...}[10s]) / increase(paraply_worker_capacity_seconds_total[10s]).", []string{"state"}},
	{"paraply_worker_seconds_total", "Workers' time, summed over workers, by state: exec (executing statements), turn (waiting for the commit turn), commit (in COMMIT). Counted when each target transaction commits.", []string{"state"}},
	{"paraply_worker_capacity_seconds_total", "Worker time the limit allowed: paraply_workers_limit integrated over time (sampled every second and at each scrape), since the status server started. The denominator of the workers' time shares.", nil},
	{"paraply_lag_seconds", "Seconds since the source committed the oldest transaction not yet applied, dated as paraply_lag_method says; with --delay it includes the delay (see paraply_lag_beyond_delay_seconds).", nil},
	{"paraply_lag_beyond_delay_seconds", "The lag less the configured --delay, at least 0: how far behind the target is beyond the delay asked for (paraply_lag_seconds without --delay).", nil},
	{"paraply_lag_method", "1 for the method that dates paraply_lag_seconds: receive-time (arrival, or the source's second through its clock offset) or heartbeat (--heartbeat-table).", []string{"method"}},
	{"paraply_source_clock_offset_seconds", "paraply's clock minus the source's, as measured from the source's NOW(6).", nil},
	{"paraply_delay_seconds", "The configured --delay: transactions are applied no earlier than their source commit time plus this.", nil},
	{"paraply_checkpoint_age_seconds", "Seconds since the checkpoint was last saved on the target.", nil},
	{"paraply_low_water_mark", "Relay log index up to which everything is applied.", nil},
	{"paraply_filtered_transactions_total", "Transactions every change of which --include/--exclude left out: recorded as applied, nothing else done.", nil},
	{"paraply_filtered_rows_total", "Row changes --include/--exclude left out.", nil},
	{"paraply_filtered_statements_total", "DDL and statement-format DML statements --include/--exclude left out.", nil},
	{"paraply_statement_transactions_total", "Transactions with statement-format DML (a MIXED or STATEMENT source); paraply_dependency_causes_total{cause=\"statement\"} counts those of them serialized because their rows could not be told from the text.", nil},
	{"paraply_dependency_causes_total", "Transactions serialized beyond their rows, by cause (ddl, keyless_table, ...).", []string{"cause"}},
	{"paraply_workers", "Configured workers (the pool's size).", nil},
	{"paraply_workers_limit", "Workers that may have work at once: the pool's size, or with --workers auto the count found to apply fastest.", nil},
	{"paraply_worker_applied_transactions_total", "Source transactions applied, per worker.", []string{"worker"}},
	{"paraply_worker_busy_seconds_total", "Time with a target transaction in hand (executing, waiting for the commit turn, committing), per worker.", []string{"worker"}},
	{"paraply_worker_commit_seconds_total", "Time in COMMIT, per worker.", []string{"worker"}},
	{"paraply_worker_retries_total", "Retried attempts (deadlocks, lock waits, lost connections), per worker.", []string{"worker"}},
	{"paraply_large_transaction_bytes", "Size of the large transaction a worker applies piece by piece (absent when none).", []string{"worker", "gtid"}},
	{"paraply_large_transaction_applied_bytes", "Bytes of it applied so far (its target transaction commits at the end).", []string{"worker", "gtid"}},
	{"paraply_large_transaction_rows", "Row changes in that large transaction.", []string{"worker", "gtid"}},
	{"paraply_large_transaction_applied_rows", "Row changes of it applied so far (counted on the SQL path).", []string{"worker", "gtid"}},
}

// NewCollector reads src's snapshot at each scrape; workers holds the
// batch size histogram, observed as batches commit.
func NewCollector(src SnapshotSource, workers *Workers) *Collector {
	c := &Collector{src: src, workers: workers, descs: map[string]*prometheus.Desc{}}
	for _, m := range Metrics {
		c.descs[m.name] = prometheus.NewDesc(m.name, m.help, m.labels, nil)
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	c.workers.batch.Describe(ch)
}

// Collect implements prometheus.Collector: it reads one snapshot and sends
// its metrics group by group, then the batch size histogram.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.src.Snapshot()
	st := &snap.Status
	e := emitter{ch: ch, descs: c.descs}
	e.snapshot(&snap)
	e.source(st)
	e.scheduler(st)
	turnCount, turn := e.workerTime(snap.Workers, snap.CapacitySeconds)
	e.waits(st, turnCount, turn)
	e.progress(st)
	e.dependencies(st)
	e.workers(st, snap.Workers)
	c.workers.batch.Collect(ch)
}

// emitter sends one scrape's metrics down ch, each by the name Metrics
// gives it.
type emitter struct {
	ch    chan<- prometheus.Metric
	descs map[string]*prometheus.Desc
}

// gauge sends v as the gauge name, with labels.
func (e emitter) gauge(name string, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(e.descs[name], prometheus.GaugeValue, v, labels...)
}

// counter sends v as the counter name, with labels.
func (e emitter) counter(name string, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(e.descs[name], prometheus.CounterValue, v, labels...)
}

// boolean is a flag as Prometheus has it: 1 or 0.
func boolean(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// snapshot sends which status snapshot the scrape took, and the figures
// status computed over its window.
func (e emitter) snapshot(snap *Snapshot) {
	e.gauge("paraply_up", 1)
	e.gauge("paraply_status_snapshot", float64(snap.ID))
	if !snap.Time.IsZero() {
		e.gauge("paraply_status_snapshot_timestamp_seconds", float64(snap.Time.UnixMicro())/1e6)
	}
	w := snap.Window
	e.gauge("paraply_status_window_seconds", w.Seconds)
	e.gauge("paraply_status_applied_per_second", w.AppliedPerSecond)
	for _, sh := range []struct {
		state string
		v     float64
	}{{"exec", w.Exec}, {"turn", w.Turn}, {"commit", w.Commit}, {"target_wait", w.TargetWait}, {"idle", w.Idle}} {
		e.gauge("paraply_status_worker_time_share", sh.v, sh.state)
	}
}

// source sends the receiver's connection and counters, whether the target
// answers (and its lock and redo log), and the relay log's size.
func (e emitter) source(st *replicate.Status) {
	e.gauge("paraply_source_connected", boolean(st.Receiver.Connected))
	e.gauge("paraply_target_up", boolean(st.TargetConnection.Connected))
	e.counter("paraply_target_down_seconds_total", st.TargetConnection.DownTime.Seconds())
	if r := st.TargetRedo; r.Known && r.MaxAgeBytes > 0 {
		e.gauge("paraply_target_checkpoint_age_ratio", float64(r.AgeBytes)/float64(r.MaxAgeBytes))
		e.gauge("paraply_target_redo_log_full_share", r.FullShare)
	}
	e.gauge("paraply_target_lock_held", boolean(st.LockHeld))
	e.counter("paraply_source_reconnects_total", float64(st.Receiver.Reconnects))
	if !st.Receiver.LastEvent.IsZero() {
		e.gauge("paraply_source_last_event_age_seconds", st.Now.Sub(st.Receiver.LastEvent).Seconds())
	}
	e.counter("paraply_received_transactions_total", float64(st.Receiver.Transactions))
	e.counter("paraply_received_events_total", float64(st.Receiver.Events))
	e.counter("paraply_received_bytes_total", float64(st.Receiver.Bytes))
	e.gauge("paraply_relay_log_bytes", float64(st.Relay.Bytes))
	e.gauge("paraply_relay_log_segments", float64(st.Relay.Segments))
	e.counter("paraply_relay_log_blocked_seconds_total", st.Relay.BlockedTime.Seconds())
}

// scheduler sends the coordinator's transaction counts.
func (e emitter) scheduler(st *replicate.Status) {
	s := st.Scheduler
	e.gauge("paraply_queued_transactions", float64(s.Pending))
	e.gauge("paraply_ready_transactions", float64(s.Ready))
	e.counter("paraply_assigned_transactions_total", float64(s.Assigned))
	e.counter("paraply_applied_transactions_total", float64(s.Committed))
	e.counter("paraply_skipped_transactions_total", float64(s.Skipped))
	e.counter("paraply_target_transactions_total", float64(s.Works))
}

// workerTime sends the workers' time summed over workers, by state, and
// the capacity it is a share of. It returns the turn waits and their
// seconds, which are the coordinator's commit_order waits.
func (e emitter) workerTime(workers []WorkerStats, capacity float64) (turnCount int64, turn float64) {
	var exec, commit float64
	for _, w := range workers {
		exec += w.ExecSeconds
		turn += w.TurnSeconds
		commit += w.CommitSeconds
		turnCount += w.TurnWaits
	}
	e.counter("paraply_worker_seconds_total", exec, "exec")
	e.counter("paraply_worker_seconds_total", turn, "turn")
	e.counter("paraply_worker_seconds_total", commit, "commit")
	e.counter("paraply_worker_capacity_seconds_total", capacity)
	return turnCount, turn
}

// waits sends the coordinator's waits by reason; commit order's are the
// workers' turn waits (turnCount of them, turn seconds).
func (e emitter) waits(st *replicate.Status, turnCount int64, turn float64) {
	s := st.Scheduler
	for _, r := range []struct {
		reason string
		count  int64
		secs   float64
	}{
		{"dependency", s.DepWaits, s.DepWaitTime.Seconds()},
		{"barrier", s.BarrierWaits, s.BarrierWaitTime.Seconds()},
		{"workers_busy", s.BusyWaits, s.BusyWaitTime.Seconds()},
		{"queue_full", s.FullWaits, s.FullWaitTime.Seconds()},
		{"source", s.SourceWaits, s.SourceWaitTime.Seconds()},
		{"commit_order", turnCount, turn},
	} {
		e.counter("paraply_coordinator_waits_total", float64(r.count), r.reason)
		e.counter("paraply_coordinator_wait_seconds_total", r.secs, r.reason)
	}
}

// progress sends how far behind the target is: the lag, the delay, the
// checkpoint's age and the low water mark.
func (e emitter) progress(st *replicate.Status) {
	e.gauge("paraply_lag_seconds", st.Lag.Seconds())
	e.gauge("paraply_lag_beyond_delay_seconds", st.LagBeyondDelay().Seconds())
	e.gauge("paraply_delay_seconds", st.Delay.Seconds())
	if st.LagMethod != "" {
		e.gauge("paraply_lag_method", 1, st.LagMethod)
	}
	if st.ClockOffset != nil {
		e.gauge("paraply_source_clock_offset_seconds", st.ClockOffset.Seconds())
	}
	if !st.CheckpointSaved.IsZero() {
		e.gauge("paraply_checkpoint_age_seconds", st.Now.Sub(st.CheckpointSaved).Seconds())
	}
	e.gauge("paraply_low_water_mark", float64(st.Scheduler.LowWaterMark))
}

// dependencies sends what the filters left out and why transactions were
// serialized.
func (e emitter) dependencies(st *replicate.Status) {
	if f := st.Filters; f != nil {
		e.counter("paraply_filtered_transactions_total", float64(f.Transactions))
		e.counter("paraply_filtered_rows_total", float64(f.Rows))
		e.counter("paraply_filtered_statements_total", float64(f.Statements))
	}
	e.counter("paraply_statement_transactions_total", float64(st.Dependencies.Tracker.Statements))
	for i, v := range st.Dependencies.Tracker.Causes {
		if v > 0 {
			e.counter("paraply_dependency_causes_total", float64(v), deptrack.Cause(i).String())
		}
	}
}

// workers sends the pool's size and limit and each worker's counters,
// with the large transaction it applies, if any.
func (e emitter) workers(st *replicate.Status, workers []WorkerStats) {
	e.gauge("paraply_workers", float64(st.Workers))
	e.gauge("paraply_workers_limit", float64(st.Scheduler.Limit))
	for _, w := range workers {
		id := strconv.Itoa(w.Worker)
		e.counter("paraply_worker_applied_transactions_total", float64(w.Transactions), id)
		e.counter("paraply_worker_busy_seconds_total", w.ExecSeconds+w.TurnSeconds+w.CommitSeconds, id)
		e.counter("paraply_worker_commit_seconds_total", w.CommitSeconds, id)
		e.counter("paraply_worker_retries_total", float64(w.Retries), id)
		if l := w.Large; l != nil {
			e.gauge("paraply_large_transaction_bytes", float64(l.Bytes), id, l.GTID)
			e.gauge("paraply_large_transaction_applied_bytes", float64(l.BytesDone), id, l.GTID)
			e.gauge("paraply_large_transaction_rows", float64(l.Rows), id, l.GTID)
			e.gauge("paraply_large_transaction_applied_rows", float64(l.RowsDone), id, l.GTID)
		}
	}
}
