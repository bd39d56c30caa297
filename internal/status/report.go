// Package status answers "why is my replica lagging, and what do I
// change": it samples a running pipeline (every second, and for each
// request for the newest figures), serves the samples,
// the Prometheus metrics and a web page over HTTP, computes the
// coordinator statistics of the last interval (MySQL's "Multi-threaded
// replica statistics", live), and turns them into a diagnosis in words.
// `paraply status` prints the same report from another process.
package status

import (
	"fmt"
	"sort"
	"time"

	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
)

// Sample is the pipeline's counters at one instant. The server takes one
// a second, and one for each request for the newest figures; every figure
// status shows is computed from two of them (between), so that the text,
// /status.json, the page and /metrics of one sample agree.
type Sample struct {
	// ID numbers the server's samples, 1 for the first: the snapshot
	// number the page, the text and paraply_status_snapshot show.
	ID           int64     `json:"id"`
	Time         time.Time `json:"time"`
	Received     int64     `json:"received"`
	Applied      int64     `json:"applied"`
	Assigned     int64     `json:"assigned"`
	Works        int64     `json:"works"`
	Pending      int       `json:"pending"`
	LagSeconds   float64   `json:"lag_seconds"`
	DelaySeconds float64   `json:"delay_seconds"`
	// BeyondDelaySeconds is Status.LagBeyondDelay, taken as it is rather
	// than recomputed from the two above: floats subtracted here differ
	// from durations subtracted there in the last digit, and the page and
	// /metrics must print the same number.
	BeyondDelaySeconds float64 `json:"lag_beyond_delay_seconds"`
	RelayBytes         int64   `json:"relay_bytes"`
	RelayBlocked       float64 `json:"relay_blocked_seconds"`
	Connected          bool    `json:"source_connected"`
	// TargetUp says the target answered at the sample, TargetDownSecs
	// how long in all it did not since the start (Connection.DownTime).
	TargetUp       bool    `json:"target_connected"`
	TargetDownSecs float64 `json:"target_down_seconds"`
	// SourceTxns counts the transactions of the source's position as
	// read at SourceAt (zero: no reading, binlog files): two samples'
	// difference is what the source wrote, apart from what was received.
	SourceTxns int64     `json:"-"`
	SourceAt   time.Time `json:"-"`
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
	// Limit is how many workers were allowed at once (0 before the
	// coordinator runs: no worker can apply then, so no worker time is
	// allowed), and
	// CapacitySecs the worker time allowed since the server's first
	// sample: Limit integrated over time, between samples by the mean of
	// the two ends (samples are a second apart or less; the limit moves
	// at most every quarter of a second, and only with a backlog). The
	// workers' time shares are of it.
	Limit        int     `json:"limit"`
	CapacitySecs float64 `json:"capacity_seconds"`
	// Heartbeats received so far: paraply's own writes on the source.
	Heartbeats int64 `json:"heartbeats"`
	// Prepared counts transactions whose dependencies were computed,
	// Statements those of them with statement-format DML.
	Prepared   int64 `json:"prepared"`
	Statements int64 `json:"statements"`
	// Serialized counts transactions serialized beyond their rows, by
	// cause (see serializing), so that an interval says which it saw.
	Serialized [len(serializing)]int64 `json:"-"`

	// st and workers are the whole state the sample was taken from, for
	// the report of this snapshot; tick marks a sample the server took on
	// its own (a second apart), not for a request.
	st      replicate.Status
	workers []metrics.WorkerStats
	tick    bool
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
		LagSeconds: st.Lag.Seconds(), DelaySeconds: st.Delay.Seconds(),
		BeyondDelaySeconds: st.LagBeyondDelay().Seconds(),
		RelayBytes:         st.Relay.Bytes, RelayBlocked: st.Relay.BlockedTime.Seconds(),
		Connected: st.Receiver.Connected,
		DepWaits:  st.Scheduler.DepWaits, BusyWaits: st.Scheduler.BusyWaits, FullWaits: st.Scheduler.FullWaits,
		DepWaitSecs: st.Scheduler.DepWaitTime.Seconds(), BusyWaitSecs: st.Scheduler.BusyWaitTime.Seconds(),
		FullWaitSecs: st.Scheduler.FullWaitTime.Seconds(),
		SourceWaits:  st.Scheduler.SourceWaits, SourceWaitSecs: st.Scheduler.SourceWaitTime.Seconds(),
		BarrierWaits: st.Scheduler.BarrierWaits, BarrierWaitSecs: st.Scheduler.BarrierWaitTime.Seconds(),
		Heartbeats: st.Heartbeats, Limit: st.Scheduler.Limit,
		Prepared: st.Dependencies.Tracker.Transactions, Statements: st.Dependencies.Tracker.Statements,
		TargetUp: st.TargetConnection.Connected, TargetDownSecs: st.TargetConnection.DownTime.Seconds(),
		st: st, workers: ws,
	}
	for i, c := range serializing {
		s.Serialized[i] = causeCount(st.Dependencies.Tracker.Causes[:], c.cause)
	}
	if n, ok := positionCount(st); ok {
		s.SourceTxns, s.SourceAt = n, st.SourcePositionTime
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
// statistics of seed 000, per second where it helps. It is the one place
// the applied rate, the workers' time shares and the lag of a window are
// computed: the text, the page (header, tables and charts) and /metrics
// show what it says.
type Interval struct {
	// WindowSeconds is the window asked for ("the last 10 s"); Seconds is
	// what the samples span, From to To: the newest sample at least the
	// window before the snapshot, to the snapshot (less than the window
	// only in the first seconds).
	WindowSeconds float64   `json:"window_seconds"`
	Seconds       float64   `json:"seconds"`
	From          time.Time `json:"from"`
	To            time.Time `json:"to"`
	// Assigned is "events assigned": transactions handed to workers.
	Assigned int64 `json:"assigned"`
	// AppliedRate is source transactions committed on the target per
	// second: the applied rate, wherever status shows one.
	AppliedRate  float64 `json:"applied_per_second"`
	ReceivedRate float64 `json:"received_per_second"`
	// SourceRate is what the source wrote: how far its GTID position
	// moved between the readings of the interval's two ends, less
	// paraply's own heartbeats (sourceRate). It is not ReceivedRate: a
	// catch-up receives fast from a source that writes nothing.
	SourceRate float64 `json:"source_per_second"`
	AvgBatch   float64 `json:"avg_batch"`
	// Waits by reason: dependency ("waited at clock conflicts"),
	// workers_busy ("waited when workers occupied": work was ready and
	// every allowed worker had work in hand), queue_full ("waited due a
	// worker queue full"), commit_order (workers waiting for their turn
	// to commit, summed over workers), source (a worker free and
	// everything admitted handed out: waiting for the source, no
	// problem).
	Waits map[string]Wait `json:"waits"`
	// WorkersAllowed is the mean number of workers allowed at once over
	// the interval, CapacitySeconds the worker time they had.
	WorkersAllowed  float64 `json:"workers_allowed"`
	CapacitySeconds float64 `json:"capacity_seconds"`
	// Worker time shares, summed over workers, as a fraction of
	// CapacitySeconds: executing statements, waiting for the commit turn,
	// in COMMIT; busy is the three together (a worker with a target
	// transaction in hand). A worker's time is counted when its target
	// transaction commits, so a window can hold more than its share of a
	// long one: the three are then scaled down together to a busy share
	// of 1 (shares). TargetWaitShare is the time the target did not
	// answer (TargetDownSeconds of the interval), which no worker can use
	// (it is not counted as busy: nothing commits), at most what busy
	// leaves; idle is the rest.
	ExecShare       float64 `json:"exec_share"`
	TurnShare       float64 `json:"turn_share"`
	CommitShare     float64 `json:"commit_share"`
	BusyShare       float64 `json:"busy_share"`
	TargetWaitShare float64 `json:"target_wait_share"`
	IdleShare       float64 `json:"idle_share"`
	// TargetDownSeconds is how long in the interval the target did not
	// answer.
	TargetDownSeconds float64 `json:"target_down_seconds"`
	// AvgCommitMs is the mean COMMIT duration.
	AvgCommitMs float64 `json:"avg_commit_ms"`
	Retries     int64   `json:"retries"`
	// LagStart and LagEnd are the lag at From and at To (the snapshot's
	// lag); LagMax is the highest lag sampled in the interval.
	LagStart float64 `json:"lag_start_seconds"`
	LagEnd   float64 `json:"lag_end_seconds"`
	LagMax   float64 `json:"lag_max_seconds"`
	// DelaySeconds is --delay; LagBeyondDelay is LagEnd less it, at least
	// 0 (Status.LagBeyondDelay): the lag that is not asked for.
	DelaySeconds   float64 `json:"delay_seconds"`
	LagBeyondDelay float64 `json:"lag_beyond_delay_seconds"`
	RelayBlocked   float64 `json:"relay_blocked_seconds"`
	// Serialized counts, by cause, transactions serialized beyond their
	// rows in the interval (DDL, keyless tables, ...).
	Serialized map[string]int64 `json:"serialized"`
	// Prepared is transactions whose dependencies were computed in the
	// interval, Statements those of them with statement-format DML (a
	// MIXED or STATEMENT source); Serialized["statement"] counts the
	// statement transactions applied in the source's group-commit order.
	Prepared   int64 `json:"prepared"`
	Statements int64 `json:"statements"`
}

// Wait is a count and a time, and Share, the time as a fraction of the
// interval (commit_order: of the workers' time, as TurnShare). A wait is
// counted up to the coordinator's last statistics, published every 200
// ms, so one interval may hold a little of the one before: Seconds is
// capped at the interval (its capacity, for commit_order), and Share at 1.
type Wait struct {
	Count   int64   `json:"count"`
	Seconds float64 `json:"seconds"`
	Share   float64 `json:"share"`
}

// between computes the interval from a to b.
func between(a, b Sample) Interval {
	iv := Interval{Seconds: b.Time.Sub(a.Time).Seconds(), From: a.Time, To: b.Time, Assigned: b.Assigned - a.Assigned,
		Retries: b.Retries - a.Retries, LagStart: a.LagSeconds, LagEnd: b.LagSeconds,
		LagMax: max(a.LagSeconds, b.LagSeconds), RelayBlocked: b.RelayBlocked - a.RelayBlocked,
		DelaySeconds: b.DelaySeconds, LagBeyondDelay: b.BeyondDelaySeconds,
		Prepared: b.Prepared - a.Prepared, Statements: b.Statements - a.Statements, Serialized: map[string]int64{}}
	for i, c := range serializing {
		if n := b.Serialized[i] - a.Serialized[i]; n > 0 {
			iv.Serialized[c.cause] = n
		}
	}
	if iv.Seconds <= 0 {
		return iv
	}
	iv.AppliedRate = float64(b.Applied-a.Applied) / iv.Seconds
	iv.ReceivedRate = float64(b.Received-a.Received) / iv.Seconds
	iv.SourceRate = sourceRate(a, b, iv.Seconds)
	iv.TargetDownSeconds = min(iv.Seconds, max(0, b.TargetDownSecs-a.TargetDownSecs))
	if works := b.Works - a.Works; works > 0 {
		iv.AvgBatch = float64(b.Assigned-a.Assigned) / float64(works)
		iv.AvgCommitMs = 1000 * (b.CommitSecs - a.CommitSecs) / float64(works)
	}
	iv.CapacitySeconds = b.CapacitySecs - a.CapacitySecs
	if iv.CapacitySeconds <= 0 {
		// Samples not taken by a server (no capacity integrated): the
		// workers allowed at the end, all along.
		iv.CapacitySeconds = iv.Seconds * float64(max(b.Limit, 1))
	}
	iv.WorkersAllowed = iv.CapacitySeconds / iv.Seconds
	wait := func(count int64, secs, of float64) Wait {
		secs = min(max(0, secs), of)
		return Wait{count, secs, secs / of}
	}
	iv.Waits = map[string]Wait{
		"dependency":   wait(b.DepWaits-a.DepWaits, b.DepWaitSecs-a.DepWaitSecs, iv.Seconds),
		"barrier":      wait(b.BarrierWaits-a.BarrierWaits, b.BarrierWaitSecs-a.BarrierWaitSecs, iv.Seconds),
		"workers_busy": wait(b.BusyWaits-a.BusyWaits, b.BusyWaitSecs-a.BusyWaitSecs, iv.Seconds),
		"queue_full":   wait(b.FullWaits-a.FullWaits, b.FullWaitSecs-a.FullWaitSecs, iv.Seconds),
		"commit_order": wait(b.TurnWaits-a.TurnWaits, b.TurnSecs-a.TurnSecs, iv.CapacitySeconds),
		"source":       wait(b.SourceWaits-a.SourceWaits, b.SourceWaitSecs-a.SourceWaitSecs, iv.Seconds),
	}
	iv.ExecShare, iv.TurnShare, iv.CommitShare, iv.BusyShare, iv.TargetWaitShare, iv.IdleShare = shares(
		b.ExecSecs-a.ExecSecs, b.TurnSecs-a.TurnSecs, b.CommitSecs-a.CommitSecs, iv.CapacitySeconds, iv.TargetDownSeconds/iv.Seconds)
	return iv
}

// shares divides worker time of capacity seconds: exec, turn and commit
// as shares of it, and busy, the three together. Time is counted when a
// target transaction commits, so a window may hold more than its share
// of a long one; the three are then scaled down together, to a busy share
// of 1: no worker is busy more than all the time. down is the share of
// the time the target did not answer: the workers' time then is waiting
// for it (targetWait), at most what busy leaves; idle is the rest.
func shares(exec, turn, commit, capacity, down float64) (e, t, c, busy, targetWait, idle float64) {
	e, t, c = max(0, exec)/capacity, max(0, turn)/capacity, max(0, commit)/capacity
	if sum := e + t + c; sum > 1 {
		e, t, c = e/sum, t/sum, c/sum
	}
	busy = e + t + c
	targetWait = min(max(0, 1-busy), max(0, down))
	return e, t, c, busy, targetWait, max(0, 1-busy-targetWait)
}

// sourceRate is what the source wrote per second from a to b: how far its
// position moved between the readings a and b hold, over the time between
// them, less paraply's own heartbeats (which the source's position counts
// too). Without two readings (binlog files have none; two samples within
// one reading, a second apart, share one) it is what was received less
// the heartbeats: binlog files hold what the source wrote, and between
// readings a second apart nothing better is known.
func sourceRate(a, b Sample, secs float64) float64 {
	beats := float64(b.Heartbeats - a.Heartbeats)
	if !a.SourceAt.IsZero() && b.SourceAt.After(a.SourceAt) {
		return max(0, (float64(b.SourceTxns-a.SourceTxns)-beats)/b.SourceAt.Sub(a.SourceAt).Seconds())
	}
	return max(0, (float64(b.Received-a.Received)-beats)/secs)
}

// Report is what /status.json serves and `paraply status` prints: one
// snapshot (a sample of the server's), and the figures over the window
// that ends at it.
type Report struct {
	// Version is the version of the paraply serving it, as `paraply
	// version` prints it.
	Version  string           `json:"version"`
	Snapshot Snapshot         `json:"snapshot"`
	Status   replicate.Status `json:"status"`
	// Progress says in words how far paraply received and applied.
	Progress Progress `json:"progress"`
	// Workers are the workers the limit allows now (Pool says how many
	// more the pool has), with their shares of the interval.
	Workers   []WorkerRow `json:"workers"`
	Pool      Pool        `json:"pool"`
	Interval  Interval    `json:"interval"`
	HotTables []Count     `json:"hot_tables"`
	Diagnosis []Finding   `json:"diagnosis"`
	// Series is what the page charts, when asked for (?series=1).
	Series *Series `json:"series,omitempty"`
}

// Snapshot names the sample a report is of.
type Snapshot struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"`
}

// WorkerRow is one worker's counters since start and its time over the
// interval, as shares of the interval (a worker is one session), divided
// as the interval's are (shares). Its JSON is in reportjson.go.
type WorkerRow struct {
	metrics.WorkerStats
	ExecShare       float64
	TurnShare       float64
	CommitShare     float64
	TargetWaitShare float64
	IdleShare       float64
}

// Pool says how the pool's sessions stand against the limit.
type Pool struct {
	// Size is the pool's sessions (--workers, or 16 with auto); Allowed
	// how many may apply at once now (the rows of Report.Workers).
	Size    int `json:"size"`
	Allowed int `json:"allowed"`
	// Others are the sessions not allowed now; OthersUsed how many of
	// them applied anything since start (under an earlier, higher limit),
	// OthersTransactions what they applied.
	Others             int   `json:"others"`
	OthersUsed         int   `json:"others_used"`
	OthersTransactions int64 `json:"others_transactions"`
}

// allowedWorkers picks the rows of the workers the limit allows now: the
// coordinator hands work to the worker that committed last, so under a
// limit of n the workers applying are the n used last (one applying a
// large transaction, which has not committed for a while, first). start
// is the pool's counters at the interval's start; down is the share of the
// interval the target did not answer.
func allowedWorkers(ws, start []metrics.WorkerStats, n int, secs, down float64) ([]WorkerRow, Pool) {
	p := Pool{Size: len(ws), Allowed: min(n, len(ws))}
	order := make([]int, len(ws))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := ws[order[i]], ws[order[j]]
		if (a.Large != nil) != (b.Large != nil) {
			return a.Large != nil
		}
		return a.LastApplied.After(b.LastApplied)
	})
	chosen := order[:p.Allowed]
	sort.Ints(chosen)
	rows := make([]WorkerRow, 0, len(chosen))
	for _, i := range chosen {
		w := ws[i]
		r := WorkerRow{WorkerStats: w}
		if secs > 0 && i < len(start) {
			s := start[i]
			r.ExecShare, r.TurnShare, r.CommitShare, _, r.TargetWaitShare, r.IdleShare = shares(
				w.ExecSeconds-s.ExecSeconds, w.TurnSeconds-s.TurnSeconds, w.CommitSeconds-s.CommitSeconds, secs, down)
		}
		rows = append(rows, r)
	}
	for _, i := range order[p.Allowed:] {
		p.Others++
		if ws[i].Transactions > 0 {
			p.OthersUsed++
			p.OthersTransactions += ws[i].Transactions
		}
	}
	return rows, p
}

// Progress says in words how far paraply has received and applied, and
// when it last saved its checkpoint; where a position is not known yet,
// why (the text and the page print these as they are).
type Progress struct {
	Received   string `json:"received"`
	Applied    string `json:"applied"`
	Checkpoint string `json:"checkpoint"`
}

// progress words st's positions.
func progress(st replicate.Status) Progress {
	if st.Started.IsZero() {
		const starting = "not known yet: paraply is connecting to the source and the target"
		return Progress{starting, starting, starting}
	}
	var p Progress
	up := since(st.Now, st.Started)
	rcv := st.Receiver
	switch {
	case rcv.Position != "":
		p.Received = rcv.Position
		if rcv.SourceFile != "" {
			p.Received += fmt.Sprintf(" (%s:%d)", rcv.SourceFile, rcv.SourceOffset)
		}
		if !rcv.LastTxn.IsZero() {
			p.Received += ", the last transaction " + since(st.Now, rcv.LastTxn) + " ago"
		}
	default:
		p.Received = "nothing yet since start " + up + " ago"
		if st.SourcePosition != "" {
			p.Received += " (the source is at " + st.SourcePosition + ")"
		}
	}
	p.Applied = st.Checkpoint.Position
	if p.Applied == "" {
		p.Applied = "nothing yet (no position recorded on the target)"
	}
	switch {
	case !st.CheckpointSaved.IsZero():
		p.Checkpoint = "saved " + since(st.Now, st.CheckpointSaved) + " ago"
	case st.Scheduler.Committed == 0 && st.Scheduler.Skipped == 0:
		p.Checkpoint = "as found at start " + up + " ago: nothing applied since"
	default:
		p.Checkpoint = "as found at start " + up + " ago: the first save is due"
	}
	return p
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
