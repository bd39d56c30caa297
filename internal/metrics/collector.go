package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/replicate"
)

// StatusSource is what the collector reads at scrape time.
type StatusSource interface {
	Status() replicate.Status
}

// Collector turns a pipeline's status into Prometheus metrics.
type Collector struct {
	src     StatusSource
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
	{"paraply_lag_seconds", "Seconds since the source committed the oldest transaction not yet applied, dated as paraply_lag_method says.", nil},
	{"paraply_lag_method", "1 for the method that dates paraply_lag_seconds: receive-time (arrival, or the source's second through its clock offset) or heartbeat (--heartbeat-table).", []string{"method"}},
	{"paraply_source_clock_offset_seconds", "paraply's clock minus the source's, as measured from the source's NOW(6).", nil},
	{"paraply_delay_seconds", "The configured --delay: transactions are applied no earlier than their source commit time plus this.", nil},
	{"paraply_checkpoint_age_seconds", "Seconds since the checkpoint was last saved on the target.", nil},
	{"paraply_low_water_mark", "Relay log index up to which everything is applied.", nil},
	{"paraply_filtered_transactions_total", "Transactions every change of which --include/--exclude left out: recorded as applied, nothing else done.", nil},
	{"paraply_filtered_rows_total", "Row changes --include/--exclude left out.", nil},
	{"paraply_filtered_statements_total", "DDL and statement-format DML statements --include/--exclude left out.", nil},
	{"paraply_dependency_causes_total", "Transactions serialized beyond their rows, by cause (ddl, keyless_table, ...).", []string{"cause"}},
	{"paraply_workers", "Configured workers (the pool's size).", nil},
	{"paraply_workers_limit", "Workers that may have work at once: the pool's size, or with --workers auto the count found to apply fastest.", nil},
	{"paraply_worker_applied_transactions_total", "Source transactions applied, per worker.", []string{"worker"}},
	{"paraply_worker_busy_seconds_total", "Time executing statements and committing, per worker.", []string{"worker"}},
	{"paraply_worker_commit_seconds_total", "Time in COMMIT, per worker.", []string{"worker"}},
	{"paraply_worker_retries_total", "Retried attempts (deadlocks, lock waits, lost connections), per worker.", []string{"worker"}},
	{"paraply_large_transaction_bytes", "Size of the large transaction a worker applies piece by piece (absent when none).", []string{"worker", "gtid"}},
	{"paraply_large_transaction_applied_bytes", "Bytes of it applied so far (its target transaction commits at the end).", []string{"worker", "gtid"}},
	{"paraply_large_transaction_rows", "Row changes in that large transaction.", []string{"worker", "gtid"}},
	{"paraply_large_transaction_applied_rows", "Row changes of it applied so far (counted on the SQL path).", []string{"worker", "gtid"}},
}

// NewCollector reads src (and the workers' counters) at each scrape.
func NewCollector(src StatusSource, workers *Workers) *Collector {
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

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Status()
	g := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, v, labels...)
	}
	n := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, v, labels...)
	}
	b := func(ok bool) float64 {
		if ok {
			return 1
		}
		return 0
	}
	now := st.Now
	g("paraply_up", 1)
	g("paraply_source_connected", b(st.Receiver.Connected))
	n("paraply_source_reconnects_total", float64(st.Receiver.Reconnects))
	if !st.Receiver.LastEvent.IsZero() {
		g("paraply_source_last_event_age_seconds", now.Sub(st.Receiver.LastEvent).Seconds())
	}
	n("paraply_received_transactions_total", float64(st.Receiver.Transactions))
	n("paraply_received_events_total", float64(st.Receiver.Events))
	n("paraply_received_bytes_total", float64(st.Receiver.Bytes))
	g("paraply_relay_log_bytes", float64(st.Relay.Bytes))
	g("paraply_relay_log_segments", float64(st.Relay.Segments))
	n("paraply_relay_log_blocked_seconds_total", st.Relay.BlockedTime.Seconds())
	s := st.Scheduler
	g("paraply_queued_transactions", float64(s.Pending))
	g("paraply_ready_transactions", float64(s.Ready))
	n("paraply_assigned_transactions_total", float64(s.Assigned))
	n("paraply_applied_transactions_total", float64(s.Committed))
	n("paraply_skipped_transactions_total", float64(s.Skipped))
	n("paraply_target_transactions_total", float64(s.Works))
	var turnCount int64
	var turn float64
	workers := c.workers.Snapshot()
	for _, w := range workers {
		turn += w.TurnSeconds
		turnCount += w.TurnWaits
	}
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
		n("paraply_coordinator_waits_total", float64(r.count), r.reason)
		n("paraply_coordinator_wait_seconds_total", r.secs, r.reason)
	}
	g("paraply_lag_seconds", st.Lag.Seconds())
	g("paraply_delay_seconds", st.Delay.Seconds())
	if st.LagMethod != "" {
		g("paraply_lag_method", 1, st.LagMethod)
	}
	if st.ClockOffset != nil {
		g("paraply_source_clock_offset_seconds", st.ClockOffset.Seconds())
	}
	if !st.CheckpointSaved.IsZero() {
		g("paraply_checkpoint_age_seconds", now.Sub(st.CheckpointSaved).Seconds())
	}
	g("paraply_low_water_mark", float64(s.LowWaterMark))
	if f := st.Filters; f != nil {
		n("paraply_filtered_transactions_total", float64(f.Transactions))
		n("paraply_filtered_rows_total", float64(f.Rows))
		n("paraply_filtered_statements_total", float64(f.Statements))
	}
	for i, v := range st.Dependencies.Tracker.Causes {
		if v > 0 {
			n("paraply_dependency_causes_total", float64(v), deptrack.Cause(i).String())
		}
	}
	g("paraply_workers", float64(st.Workers))
	g("paraply_workers_limit", float64(st.Scheduler.Limit))
	for _, w := range workers {
		id := strconv.Itoa(w.Worker)
		n("paraply_worker_applied_transactions_total", float64(w.Transactions), id)
		n("paraply_worker_busy_seconds_total", w.ExecSeconds+w.CommitSeconds, id)
		n("paraply_worker_commit_seconds_total", w.CommitSeconds, id)
		n("paraply_worker_retries_total", float64(w.Retries), id)
		if l := w.Large; l != nil {
			g("paraply_large_transaction_bytes", float64(l.Bytes), id, l.GTID)
			g("paraply_large_transaction_applied_bytes", float64(l.BytesDone), id, l.GTID)
			g("paraply_large_transaction_rows", float64(l.Rows), id, l.GTID)
			g("paraply_large_transaction_applied_rows", float64(l.RowsDone), id, l.GTID)
		}
	}
	c.workers.batch.Collect(ch)
}
