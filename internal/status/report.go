// Package status answers "why is my replica lagging, and what do I
// change": it samples a running pipeline every second, serves the samples,
// the Prometheus metrics and a web page over HTTP, computes the
// coordinator statistics of the last interval (MySQL's "Multi-threaded
// replica statistics", live), and turns them into a diagnosis in words.
// `paraply status` prints the same report from another process.
package status

import (
	"sort"
	"time"

	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
)

// Sample is the pipeline's counters at one instant.
type Sample struct {
	Time         time.Time `json:"time"`
	Received     int64     `json:"received"`
	Applied      int64     `json:"applied"`
	Assigned     int64     `json:"assigned"`
	Works        int64     `json:"works"`
	Pending      int       `json:"pending"`
	LagSeconds   float64   `json:"lag_seconds"`
	RelayBytes   int64     `json:"relay_bytes"`
	RelayBlocked float64   `json:"relay_blocked_seconds"`
	Connected    bool      `json:"source_connected"`
	// Waits of the coordinator, cumulative, by reason.
	DepWaits, BusyWaits, FullWaits          int64
	DepWaitSecs, BusyWaitSecs, FullWaitSecs float64
	SourceWaits                             int64   `json:"source_waits"`
	SourceWaitSecs                          float64 `json:"source_wait_seconds"`
	BarrierWaits                            int64   `json:"barrier_waits"`
	BarrierWaitSecs                         float64 `json:"barrier_wait_seconds"`
	// Workers' cumulative time (summed over workers).
	ExecSecs, TurnSecs, CommitSecs float64
	TurnWaits, Retries             int64
	// Heartbeats received so far: paraply's own writes on the source.
	Heartbeats int64 `json:"heartbeats"`
	// Serialized counts transactions serialized beyond their rows, by
	// cause (see serializing), so that an interval says which it saw.
	Serialized [len(serializing)]int64 `json:"-"`
}

// serializing are the dependency causes that serialize transactions
// beyond their rows, with what the diagnosis calls them.
var serializing = [...]struct{ cause, what string }{
	{"ddl", "DDL"}, {"statement", "statement-format DML"}, {"unknown_table", "tables without a known schema"},
	{"schema_mismatch", "row images not matching the schema"}, {"missing_key_column", "row images without their key columns (binlog_row_image=MINIMAL)"},
	{"keyless_table", "tables without a primary or unique key"}, {"fk_cascade", "cascading foreign keys"},
}

func takeSample(st replicate.Status, ws []metrics.WorkerStats) Sample {
	s := Sample{
		Time: st.Now, Received: st.Receiver.Transactions, Applied: st.Scheduler.Committed,
		Assigned: st.Scheduler.Assigned, Works: st.Scheduler.Works, Pending: st.Scheduler.Pending,
		LagSeconds: st.Lag.Seconds(), RelayBytes: st.Relay.Bytes, RelayBlocked: st.Relay.BlockedTime.Seconds(),
		Connected: st.Receiver.Connected,
		DepWaits:  st.Scheduler.DepWaits, BusyWaits: st.Scheduler.BusyWaits, FullWaits: st.Scheduler.FullWaits,
		DepWaitSecs: st.Scheduler.DepWaitTime.Seconds(), BusyWaitSecs: st.Scheduler.BusyWaitTime.Seconds(),
		FullWaitSecs: st.Scheduler.FullWaitTime.Seconds(),
		SourceWaits:  st.Scheduler.SourceWaits, SourceWaitSecs: st.Scheduler.SourceWaitTime.Seconds(),
		BarrierWaits: st.Scheduler.BarrierWaits, BarrierWaitSecs: st.Scheduler.BarrierWaitTime.Seconds(),
		Heartbeats: st.Heartbeats,
	}
	for i, c := range serializing {
		s.Serialized[i] = causeCount(st.Dependencies.Tracker.Causes[:], c.cause)
	}
	for _, w := range ws {
		s.ExecSecs += w.ExecSeconds
		s.TurnSecs += w.TurnSeconds
		s.CommitSecs += w.CommitSeconds
		s.TurnWaits += w.TurnWaits
		s.Retries += w.Retries
	}
	return s
}

// Interval is what happened between two samples: the coordinator
// statistics of seed 000, per second where it helps.
type Interval struct {
	Seconds float64 `json:"seconds"`
	// Assigned is "events assigned": transactions handed to workers.
	Assigned     int64   `json:"assigned"`
	AppliedRate  float64 `json:"applied_per_second"`
	ReceivedRate float64 `json:"received_per_second"`
	// SourceRate is what the source wrote: ReceivedRate less paraply's
	// own heartbeats.
	SourceRate float64 `json:"source_per_second"`
	AvgBatch   float64 `json:"avg_batch"`
	// Waits by reason: dependency ("waited at clock conflicts"),
	// workers_busy ("waited when workers occupied"), queue_full ("waited
	// due a worker queue full"), commit_order (workers waiting for their
	// turn to commit, summed over workers), source (a worker free and
	// everything admitted handed out: waiting for the source, no problem).
	Waits map[string]Wait `json:"waits"`
	// Worker time shares, summed over workers, as a fraction of
	// workers x seconds.
	ExecShare   float64 `json:"exec_share"`
	TurnShare   float64 `json:"turn_share"`
	CommitShare float64 `json:"commit_share"`
	IdleShare   float64 `json:"idle_share"`
	// AvgCommitMs is the mean COMMIT duration.
	AvgCommitMs float64 `json:"avg_commit_ms"`
	Retries     int64   `json:"retries"`
	LagStart    float64 `json:"lag_start_seconds"`
	LagEnd      float64 `json:"lag_end_seconds"`
	// LagMax is the highest lag sampled in the interval.
	LagMax       float64 `json:"lag_max_seconds"`
	RelayBlocked float64 `json:"relay_blocked_seconds"`
	// Serialized counts, by cause, transactions serialized beyond their
	// rows in the interval (DDL, keyless tables, ...).
	Serialized map[string]int64 `json:"serialized,omitempty"`
}

// Wait is a count and a time.
type Wait struct {
	Count   int64   `json:"count"`
	Seconds float64 `json:"seconds"`
}

// between computes the interval from a to b, for a pool of n workers.
func between(a, b Sample, n int) Interval {
	iv := Interval{Seconds: b.Time.Sub(a.Time).Seconds(), Assigned: b.Assigned - a.Assigned,
		Retries: b.Retries - a.Retries, LagStart: a.LagSeconds, LagEnd: b.LagSeconds,
		LagMax: max(a.LagSeconds, b.LagSeconds), RelayBlocked: b.RelayBlocked - a.RelayBlocked}
	for i, c := range serializing {
		if n := b.Serialized[i] - a.Serialized[i]; n > 0 {
			if iv.Serialized == nil {
				iv.Serialized = map[string]int64{}
			}
			iv.Serialized[c.cause] = n
		}
	}
	if iv.Seconds <= 0 {
		return iv
	}
	iv.AppliedRate = float64(b.Applied-a.Applied) / iv.Seconds
	iv.ReceivedRate = float64(b.Received-a.Received) / iv.Seconds
	iv.SourceRate = max(0, float64(b.Received-a.Received-(b.Heartbeats-a.Heartbeats))/iv.Seconds)
	if works := b.Works - a.Works; works > 0 {
		iv.AvgBatch = float64(b.Assigned-a.Assigned) / float64(works)
		iv.AvgCommitMs = 1000 * (b.CommitSecs - a.CommitSecs) / float64(works)
	}
	iv.Waits = map[string]Wait{
		"dependency":   {b.DepWaits - a.DepWaits, b.DepWaitSecs - a.DepWaitSecs},
		"barrier":      {b.BarrierWaits - a.BarrierWaits, b.BarrierWaitSecs - a.BarrierWaitSecs},
		"workers_busy": {b.BusyWaits - a.BusyWaits, b.BusyWaitSecs - a.BusyWaitSecs},
		"queue_full":   {b.FullWaits - a.FullWaits, b.FullWaitSecs - a.FullWaitSecs},
		"commit_order": {b.TurnWaits - a.TurnWaits, b.TurnSecs - a.TurnSecs},
		"source":       {b.SourceWaits - a.SourceWaits, b.SourceWaitSecs - a.SourceWaitSecs},
	}
	capacity := iv.Seconds * float64(max(n, 1))
	iv.ExecShare = (b.ExecSecs - a.ExecSecs) / capacity
	iv.TurnShare = (b.TurnSecs - a.TurnSecs) / capacity
	iv.CommitShare = (b.CommitSecs - a.CommitSecs) / capacity
	iv.IdleShare = max(0, 1-iv.ExecShare-iv.TurnShare-iv.CommitShare)
	return iv
}

// Report is what /status.json serves and `paraply status` prints.
type Report struct {
	Status    replicate.Status      `json:"status"`
	Workers   []metrics.WorkerStats `json:"workers"`
	Interval  Interval              `json:"interval"`
	HotTables []Count               `json:"hot_tables"`
	Diagnosis []Finding             `json:"diagnosis"`
}

// Count is a name with a number.
type Count struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

func topCounts(m map[string]int64, n int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Count > out[j].Count || out[i].Count == out[j].Count && out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
