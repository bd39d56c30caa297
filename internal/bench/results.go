package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Results is everything one benchmark measured; its JSON form is
// results.json.
type Results struct {
	Header   Header     `json:"header"`
	Backlogs []*Backlog `json:"backlogs"`
}

// Backlog is one backlog (workload, source clients, durability) and the
// runs that applied it.
type Backlog struct {
	Workload string `json:"workload"`
	Script   string `json:"script"`
	// Args are the extra sysbench options of the workload.
	Args    []string `json:"args,omitempty"`
	Clients int      `json:"clients"`
	Durable bool     `json:"durable"`
	// Events is K, the sysbench events asked for.
	Events int `json:"events"`
	// Transactions counts the GTIDs from Before to After.
	Transactions int64  `json:"transactions"`
	Before       string `json:"gtid_before"`
	After        string `json:"gtid_after"`
	// BinlogFiles hold the backlog (base names); BinlogBytes is their size.
	BinlogFiles []string `json:"binlog_files"`
	BinlogBytes int64    `json:"binlog_bytes"`
	// files are BinlogFiles' paths on the source, until the next backlog
	// is built there.
	files []string
	// BuildSeconds is how long sysbench took on the source; SourceTPS is
	// its rate there.
	BuildSeconds float64 `json:"build_seconds"`
	SourceTPS    float64 `json:"source_tps"`
	// SettleSeconds is how long the source took to settle after the build
	// (see settle); Unsettled is what it had left if it did not.
	SettleSeconds float64 `json:"settle_seconds"`
	Unsettled     string  `json:"unsettled,omitempty"`
	// Predictions are `paraply analyze`'s, one for each batch size of the
	// paraply runs.
	Predictions  []Prediction `json:"predictions,omitempty"`
	PredictError string       `json:"predict_error,omitempty"`
	// AnalyzeSeconds is how long `paraply analyze` took on the backlog.
	AnalyzeSeconds float64 `json:"analyze_seconds,omitempty"`
	// Error is set when the backlog could not be built; there are no runs.
	Error string         `json:"error,omitempty"`
	Runs  []*Measurement `json:"runs"`

	// References of the ratios, from Runs (0 when missing or failed).
	NativeSingleTPS float64 `json:"native_single_tps"`
	BestNative      string  `json:"best_native,omitempty"`
	BestNativeTPS   float64 `json:"best_native_tps"`
	BestParaply     string  `json:"best_paraply,omitempty"`
	BestParaplyTPS  float64 `json:"best_paraply_tps"`
	// BestNativeReceive is the best native run timed from START SLAVE
	// with an empty relay log (receiving included, as for paraply); the
	// runs above are timed from a full relay log.
	BestNativeReceive    string  `json:"best_native_receive,omitempty"`
	BestNativeReceiveTPS float64 `json:"best_native_receive_tps"`
	// DefaultsTPS is paraply with its defaults (paraply-auto-writeset).
	DefaultsTPS float64 `json:"paraply_defaults_tps"`
	// DefaultsBTPS is the second binary with its defaults
	// (paraply-auto-writeset@b), when it ran.
	DefaultsBTPS float64 `json:"paraply_defaults_b_tps,omitempty"`
	CeilingTPS   float64 `json:"ceiling_tps"`
	// Point-in-time recovery of the backlog's files onto the target's
	// snapshot: `mariadb-binlog | mariadb`, the best `paraply apply` run,
	// and the ratio of their throughputs.
	PITRBinlogTPS float64 `json:"pitr_mariadb_binlog_tps"`
	PITRApply     string  `json:"pitr_apply,omitempty"`
	PITRApplyTPS  float64 `json:"pitr_apply_tps"`
	PITRRatio     float64 `json:"pitr_ratio"`
}

// Measurement is one timed apply of a backlog.
type Measurement struct {
	Config string `json:"config"`
	Apply  Apply  `json:"apply"`
	// Round is the round the run belongs to, from 1, with Config.Rounds
	// above 1; 0 otherwise.
	Round int `json:"round,omitempty"`
	// Median marks, when a configuration ran more than once, the run of
	// median throughput (the lower of the two middle ones for an even
	// count): the one the tables and every ratio use. Runs lists the
	// throughput of all its successful runs, in round order.
	Median bool      `json:"median,omitempty"`
	Runs   []float64 `json:"runs_tps,omitempty"`
	// Transactions applied (the backlog's, or the ceiling's sysbench count)
	// in Seconds; TPS is their ratio.
	Transactions int64   `json:"transactions"`
	Seconds      float64 `json:"seconds"`
	TPS          float64 `json:"tps"`
	Failed       bool    `json:"failed,omitempty"`
	Error        string  `json:"error,omitempty"`
	// IncludesReceive says the timed span also received the backlog from
	// the source (paraply); the native replica's relay log was filled
	// before its timer started.
	IncludesReceive bool `json:"includes_receive,omitempty"`
	// Verified is the result of `paraply verify` against the source, when
	// it ran; VerifyOutput holds its report when it found a difference.
	Verified     *bool  `json:"verified,omitempty"`
	VerifyOutput string `json:"verify_output,omitempty"`
	// ServerCPU is the CPU time the applying mariadbd used during the run;
	// ParaplyCPU and ParaplyMaxRSSMB are the paraply process's.
	ServerCPU       float64 `json:"server_cpu_seconds"`
	ParaplyCPU      float64 `json:"paraply_cpu_seconds,omitempty"`
	ParaplyMaxRSSMB float64 `json:"paraply_max_rss_mb,omitempty"`
	// Profile is the file, beside the results, of paraply's CPU profile
	// of the run (with -profile).
	Profile string `json:"profile,omitempty"`
	// ClientCPU is the CPU time of mariadb-binlog and the mariadb client
	// (point-in-time recovery the standard way).
	ClientCPU float64 `json:"client_cpu_seconds,omitempty"`
	// Sessions are the applying server's most frequent processlist
	// states during the timed span, with the average number of sessions
	// in each (sampled every 200 ms).
	Sessions []SessionState `json:"sessions,omitempty"`
	// LockWaits is the average number of InnoDB transactions waiting for
	// a row lock on the applying server (sampled with Sessions).
	LockWaits float64 `json:"lock_waits"`
	// RestoreSeconds is how long restoring the snapshot and warming the
	// buffer pool took (before the timed span).
	RestoreSeconds float64 `json:"restore_seconds"`
	// Load1 is the one-minute load average when the run started.
	Load1 float64 `json:"load1"`

	// Ratios of TPS to the backlog's references (0 when missing).
	VsNativeSingle float64 `json:"vs_native_single,omitempty"`
	VsBestNative   float64 `json:"vs_best_native,omitempty"`
	VsCeiling      float64 `json:"vs_ceiling,omitempty"`
	// For paraply runs with a prediction: the predicted speedup over one
	// worker, the measured one (TPS over the TPS of the 1-worker serial
	// run with the same batching) and whether they differ by more than
	// Tolerance.
	PredictedSpeedup float64 `json:"predicted_speedup,omitempty"`
	MeasuredSpeedup  float64 `json:"measured_speedup,omitempty"`
	Disagrees        bool    `json:"prediction_disagrees,omitempty"`
	// OffBecause is what the run's own measurements say about a
	// prediction that Disagrees (offBecause); "" when they explain
	// nothing.
	OffBecause string `json:"prediction_off_because,omitempty"`
}

// Tolerance is how far a measured speedup may be from the predicted one,
// relative to the prediction, before the table flags it.
const Tolerance = 0.20

// ok reports whether r produced a throughput.
func (r *Measurement) ok() bool { return r != nil && !r.Failed && r.TPS > 0 }

// cpuSeconds is the CPU time the run cost on this machine: the applying
// server, paraply and the client together.
func (r *Measurement) cpuSeconds() float64 { return r.ServerCPU + r.ParaplyCPU + r.ClientCPU }

// Prediction is what `paraply analyze` simulated with batches of up to
// Batch transactions: speedups over one worker, by dependency mode and
// then worker count ("4", "16"), with commit order kept and without.
type Prediction struct {
	Batch     int                           `json:"batch"`
	Ordered   map[string]map[string]float64 `json:"ordered"`
	Unordered map[string]map[string]float64 `json:"unordered"`
}

// predicted is the analyzer's speedup for a over one worker batching
// alike: for --workers auto, the best of the worker counts simulated (it
// looks for that count); 0 when none was simulated with a's batching.
func (b *Backlog) predicted(a Apply) float64 {
	i := slices.IndexFunc(b.Predictions, func(p Prediction) bool { return p.Batch == a.Batch })
	if i < 0 || a.GTIDs || a.Binlog {
		return 0
	}
	by := b.Predictions[i].Ordered[a.Mode]
	if a.Unordered {
		by = b.Predictions[i].Unordered[a.Mode]
	}
	if a.Threads > 0 {
		return by[strconv.Itoa(a.Threads)]
	}
	best := 0.0
	for _, s := range by {
		best = max(best, s)
	}
	return best
}

// baseRun returns the run a's measured speedup is over: a's base (one
// worker, serial), or, when that was not run, another run with one
// worker and a's batching and apply path: with one worker every
// dependency mode applies serially, and commits in order. nil if there is
// none.
func (b *Backlog) baseRun(a Apply) *Measurement {
	want := a.base()
	if r := b.find(want.Name()); r.ok() {
		return r
	}
	for _, r := range b.representatives() {
		got := r.Apply
		got.Mode, got.Unordered = want.Mode, want.Unordered
		if got == want && r.ok() {
			return r
		}
	}
	return nil
}

// find returns the run of configuration name that the tables use (see
// representatives), or nil.
func (b *Backlog) find(name string) *Measurement {
	for _, r := range b.representatives() {
		if r.Config == name {
			return r
		}
	}
	return nil
}

// representatives returns one run per configuration, in the order of
// their first runs: its only run, or, when it ran in several rounds, its
// run of median throughput among those that succeeded (marked Median,
// with Runs holding every successful run's throughput), or its last run
// if none did. The tables, charts and ratios use these runs only; a
// median keeps one lucky or unlucky moment of a shared machine from
// deciding a comparison.
func (b *Backlog) representatives() []*Measurement {
	var names []string
	by := map[string][]*Measurement{}
	for _, r := range b.Runs {
		if _, seen := by[r.Config]; !seen {
			names = append(names, r.Config)
		}
		by[r.Config] = append(by[r.Config], r)
	}
	reps := make([]*Measurement, 0, len(names))
	for _, name := range names {
		runs := by[name]
		if len(runs) == 1 {
			reps = append(reps, runs[0])
			continue
		}
		var ok []*Measurement
		for _, r := range runs {
			r.Median, r.Runs = false, nil
			if r.ok() {
				ok = append(ok, r)
			}
		}
		if len(ok) == 0 {
			reps = append(reps, runs[len(runs)-1])
			continue
		}
		sorted := slices.Clone(ok)
		slices.SortStableFunc(sorted, func(x, y *Measurement) int { return cmp.Compare(x.TPS, y.TPS) })
		m := sorted[(len(sorted)-1)/2]
		m.Median = true
		for _, r := range ok {
			m.Runs = append(m.Runs, r.TPS)
		}
		reps = append(reps, m)
	}
	return reps
}

// compute fills the backlog's references and every run's ratios; cores
// is the machine's CPU count (Header.CPUs), which the servers and paraply
// share.
func (b *Backlog) compute(cores int) {
	b.NativeSingleTPS, b.BestNativeTPS, b.BestParaplyTPS, b.CeilingTPS = 0, 0, 0, 0
	b.BestNative, b.BestParaply = "", ""
	b.BestNativeReceive, b.BestNativeReceiveTPS, b.DefaultsTPS, b.DefaultsBTPS = "", 0, 0, 0
	defaultsB := Defaults
	defaultsB.B = true
	b.PITRBinlogTPS, b.PITRApply, b.PITRApplyTPS = 0, "", 0
	reps := b.representatives()
	for _, r := range reps {
		if !r.ok() {
			continue
		}
		switch r.Apply.Kind {
		case Native:
			if r.Apply.Receive {
				if r.TPS > b.BestNativeReceiveTPS {
					b.BestNativeReceive, b.BestNativeReceiveTPS = r.Config, r.TPS
				}
				continue
			}
			if r.Apply.Threads == 0 {
				b.NativeSingleTPS = r.TPS
			}
			if r.TPS > b.BestNativeTPS {
				b.BestNative, b.BestNativeTPS = r.Config, r.TPS
			}
		case Paraply:
			switch r.Apply {
			case Defaults:
				b.DefaultsTPS = r.TPS
			case defaultsB:
				b.DefaultsBTPS = r.TPS
			}
			if r.TPS > b.BestParaplyTPS {
				b.BestParaply, b.BestParaplyTPS = r.Config, r.TPS
			}
		case Ceiling:
			b.CeilingTPS = r.TPS
		case MariadbBinlog:
			b.PITRBinlogTPS = r.TPS
		case ParaplyApply:
			if r.TPS > b.PITRApplyTPS {
				b.PITRApply, b.PITRApplyTPS = r.Config, r.TPS
			}
		}
	}
	b.PITRRatio = ratio(b.PITRApplyTPS, b.PITRBinlogTPS)
	for _, r := range b.Runs {
		// Only the runs the tables use get ratios; a run that was a
		// configuration's only one in an earlier round may not be now.
		r.VsNativeSingle, r.VsBestNative, r.VsCeiling = 0, 0, 0
		r.PredictedSpeedup, r.MeasuredSpeedup, r.Disagrees, r.OffBecause = 0, 0, false, ""
	}
	for _, r := range reps {
		if !r.ok() {
			continue
		}
		r.VsNativeSingle = ratio(r.TPS, b.NativeSingleTPS)
		r.VsBestNative = ratio(r.TPS, b.BestNativeTPS)
		r.VsCeiling = ratio(r.TPS, b.CeilingTPS)
		if r.Apply.Kind != Paraply || r.Apply.Threads == 1 {
			continue
		}
		r.PredictedSpeedup = b.predicted(r.Apply)
		base := b.baseRun(r.Apply)
		if base != nil {
			r.MeasuredSpeedup = round(r.TPS/base.TPS, 2)
		}
		if r.PredictedSpeedup > 0 && r.MeasuredSpeedup > 0 {
			r.Disagrees = math.Abs(r.MeasuredSpeedup/r.PredictedSpeedup-1) > Tolerance
		}
		if r.Disagrees {
			r.OffBecause = offBecause(r, base, cores)
			if r.OffBecause == "" {
				r.OffBecause = unsteady(r.PredictedSpeedup, b.roundSpeedups(r, base))
			}
		}
	}
}

// roundSpeedups pairs the runs of r's configuration with those of its base
// round by round (a round's runs share the machine's drift) and returns
// each round's speedup; nil unless both ran in at least two rounds.
func (b *Backlog) roundSpeedups(r, base *Measurement) []float64 {
	tps := map[int]float64{}
	for _, x := range b.Runs {
		if x.Config == base.Config && x.Round > 0 && x.ok() {
			tps[x.Round] = x.TPS
		}
	}
	var out []float64
	for _, x := range b.Runs {
		if x.Config == r.Config && x.Round > 0 && x.ok() && tps[x.Round] > 0 {
			out = append(out, x.TPS/tps[x.Round])
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// unsteady is the reason for a prediction that is off when the rounds
// themselves disagree about the speedup: if it lies within the range of
// the speedups measured round by round, the median is off by the
// measurement's own scatter, not by the model. "" otherwise.
func unsteady(predicted float64, speedups []float64) string {
	if len(speedups) < 2 {
		return ""
	}
	lo, hi := slices.Min(speedups), slices.Max(speedups)
	if predicted < lo || predicted > hi {
		return ""
	}
	return fmt.Sprintf("the rounds measured %.2fx to %.2fx, round by round against the one-worker run: the prediction lies within the scatter of the measurement", lo, hi)
}

// offBecause names, from the measurements of run r and of its one-worker
// base run, the cost that the analyzer's model leaves out and that
// accounts for r's measured speedup within Tolerance; "" if none does.
// cores is the machine's CPU count.
//
//   - Slower than predicted: the model prices a transaction the same
//     however many sessions apply at once, but on a small target their
//     contention raises the CPU each transaction costs (target, paraply
//     and client together). If the prediction scaled by the one worker's
//     CPU per transaction over r's matches, that is the reason.
//   - Faster than predicted, one worker leaving cores idle: the model
//     caps the speedup at the target's CPU capacity, calibrated on
//     batching runs in which one worker keeps the cores busy. A worker
//     that waits (a round trip per statement without batching, an fsync
//     per commit) leaves some idle, and more workers can use them, up to
//     the cores over those the one worker used. If that bound matches,
//     that is the reason.
//   - Faster than predicted without commit order: sessions waiting in
//     Commit (for the log's fsync) use no CPU, and unordered workers
//     overlap those waits. More than one session in Commit on average is
//     the reason.
func offBecause(r, base *Measurement, cores int) string {
	if base == nil || r.Transactions <= 0 || base.Transactions <= 0 {
		return ""
	}
	if r.MeasuredSpeedup < r.PredictedSpeedup {
		cpu := r.cpuSeconds() / float64(r.Transactions)
		cpu1 := base.cpuSeconds() / float64(base.Transactions)
		if cpu <= cpu1 || cpu1 <= 0 {
			return ""
		}
		scaled := r.PredictedSpeedup * cpu1 / cpu
		if math.Abs(r.MeasuredSpeedup/scaled-1) > Tolerance {
			return ""
		}
		sessions := "its sessions" // --workers auto: as many as it chose
		if r.Apply.Threads > 0 {
			sessions = fmt.Sprintf("%d sessions", r.Apply.Threads)
		}
		return fmt.Sprintf("CPU per transaction %+.0f%% over one worker's (%s contend for the target's cores); the prediction scaled by it, %.2fx, is within %.0f%%",
			100*(cpu/cpu1-1), sessions, scaled, 100*Tolerance)
	}
	if busy := base.cpuSeconds(); cores > 0 && base.Seconds > 0 && busy > 0 {
		busy /= base.Seconds
		bound := float64(cores) / busy
		if bound > r.PredictedSpeedup && math.Abs(r.MeasuredSpeedup/bound-1) <= Tolerance {
			return fmt.Sprintf("one worker kept %.2f of the %d cores busy (target and paraply; it waits for round trips and commits), where the model's capacity is calibrated on batching runs that keep them busy; the idle cores allow %.2fx, within %.0f%%",
				busy, cores, bound, 100*Tolerance)
		}
	}
	if !r.Apply.Unordered {
		return ""
	}
	committing := 0.0
	for _, s := range r.Sessions {
		if strings.HasSuffix(s.State, ": Commit") {
			committing += s.Sessions
		}
	}
	if committing <= 1 {
		return ""
	}
	return fmt.Sprintf("unordered commits overlap their fsyncs (%.1f sessions in Commit on average), which the model's CPU capacity does not count", committing)
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return round(a/b, 2)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// write saves results.json, results.md and one chart per workload in dir.
func (res *Results) write(dir string) error {
	res.Header.LoadRunMin, res.Header.LoadRunMax = 0, 0
	for _, b := range res.Backlogs {
		b.compute(res.Header.CPUs)
		for _, r := range b.Runs {
			if res.Header.LoadRunMin == 0 || r.Load1 < res.Header.LoadRunMin {
				res.Header.LoadRunMin = r.Load1
			}
			res.Header.LoadRunMax = max(res.Header.LoadRunMax, r.Load1)
		}
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "results.json"), append(js, '\n')); err != nil {
		return err
	}
	for _, w := range res.workloads() {
		if err := writeFile(filepath.Join(dir, chartFile(w)), []byte(res.chart(w))); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, "results.md"), []byte(res.Markdown()))
}

// workloads returns the workload names of the backlogs in order.
func (res *Results) workloads() []string {
	var ws []string
	seen := map[string]bool{}
	for _, b := range res.Backlogs {
		if !seen[b.Workload] {
			seen[b.Workload] = true
			ws = append(ws, b.Workload)
		}
	}
	return ws
}

func chartFile(workload string) string { return "chart-" + workload + ".svg" }

// writeFile writes data to path through a temporary file and a rename, so
// that a results file is never seen half written.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
