package analyze

import (
	"errors"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/schema"
)

// Options configure an analysis.
type Options struct {
	// Files are binlog files, read in order as one stream.
	Files []string
	// Catalog describes the tables as they were at the start of the first
	// file; nil means none are known until CREATE TABLE appears in the
	// stream. It is modified as DDL in the stream is followed.
	Catalog *schema.Catalog
	// HistorySize bounds the writeset history (0: deptrack default).
	HistorySize int
	// Workers are the worker counts to simulate (default 1,2,4,8,16,32).
	Workers []int
	// Model prices transactions for the simulation.
	Model CostModel
	// TopN is how many hot keys and tables to report (default 10).
	TopN int
	// Progress, if set, is called now and then with bytes read and total.
	Progress func(done, total int64)
}

// LargeTransactionBytes is the size beyond which a transaction is read in
// pieces, as replicate's default --large-txn-piece.
const LargeTransactionBytes = 4 << 20

// DefaultWorkers are the worker counts simulated by default.
var DefaultWorkers = []int{1, 2, 4, 8, 16, 32}

// modeState is one mode's tracker and measurements.
type modeState struct {
	tracker *deptrack.Tracker
	chains  *chains
	// sims simulate each worker count under the model; unordered, the
	// same without commit order.
	sims, unordered []*simulator
	hist            []int64 // transactions by number already in flight at their start (widest simulation)
}

// Run analyzes opts.Files. On bad input it returns the report of what was
// read before the damage together with the error (a *binlog.PosError).
func Run(opts Options) (*Report, error) {
	opts = withDefaults(opts)
	began := time.Now()
	files := binlog.NewFileReader(opts.Files...)
	defer files.Close()
	a := newAnalysis(opts, files)
	runErr := a.readAll()
	r := a.report(began, runErr)
	return r, runErr
}

// withDefaults fills in what opts leaves out, and adds one worker to the
// counts simulated: speedups are relative to it.
func withDefaults(opts Options) Options {
	if len(opts.Workers) == 0 {
		opts.Workers = DefaultWorkers
	}
	if !slices.Contains(opts.Workers, 1) {
		// Speedups are relative to one worker.
		opts.Workers = append([]int{1}, opts.Workers...)
	}
	if opts.Model == (CostModel{}) {
		opts.Model = DefaultCostModel
	}
	if opts.TopN == 0 {
		opts.TopN = 10
	}
	if opts.Catalog == nil {
		opts.Catalog = schema.NewCatalog()
	}
	return opts
}

// analysis is one Run under way: the stream it reads, and what each mode
// and the accumulator measure of it.
type analysis struct {
	opts   Options
	files  *binlog.FileReader
	total  int64 // bytes in files
	reader *binlog.Reader
	x      *deptrack.Extractor
	modes  []*modeState
	widest int // index in opts.Workers of the most workers simulated
	acc    *accumulator
}

// newAnalysis prepares to read files under opts.
func newAnalysis(opts Options, files *binlog.FileReader) *analysis {
	a := &analysis{opts: opts, files: files, total: files.TotalBytes()}
	a.reader = binlog.NewReader(files)
	// A transaction larger than this is read in pieces without its row
	// images (a barrier in the writeset modes, as when replicating), so
	// that any file is analyzed in bounded memory.
	a.reader.SetPartBytes(LargeTransactionBytes)
	// Old-format (MariaDB 5.3) temporal columns: their precision, which
	// the binary log leaves out, is the catalog's, as it follows the DDL.
	a.reader.SetPrecision(opts.Catalog.TemporalPrecision)
	a.x = deptrack.NewExtractor(opts.Catalog)
	a.x.Explain = true
	a.widest = widestIndex(opts.Workers)
	a.modes = newModes(opts, a.widest)
	a.acc = newAccumulator(opts.TopN)
	return a
}

// widestIndex is the index of the largest of workers (the first of equals).
func widestIndex(workers []int) int {
	widest := 0
	for i, w := range workers {
		if w > workers[widest] {
			widest = i
		}
	}
	return widest
}

// newModes sets up a tracker and simulations, with and without commit
// order, for each dependency mode; the simulation at widest counts its
// transactions by concurrency.
func newModes(opts Options, widest int) []*modeState {
	modes := make([]*modeState, len(deptrack.Modes))
	for i, m := range deptrack.Modes {
		st := &modeState{tracker: deptrack.NewTracker(m, opts.HistorySize), chains: newChains()}
		free := opts.Model
		free.PreserveOrder = false
		for _, w := range opts.Workers {
			st.sims = append(st.sims, newSimulator(w, opts.Model))
			st.unordered = append(st.unordered, newSimulator(w, free))
		}
		st.hist = make([]int64, opts.Workers[widest]+1)
		modes[i] = st
	}
	return modes
}

// readAll measures every transaction of the files, reporting progress now
// and then. It returns the error that ended the stream early, or nil at
// its end.
func (a *analysis) readAll() error {
	var ws deptrack.Writeset
	var runErr error
	for n := 0; ; n++ {
		if a.opts.Progress != nil && n%1024 == 0 {
			a.opts.Progress(a.files.BytesRead(), a.total)
		}
		txn, err := a.reader.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			runErr = err
			break
		}
		if n == 0 {
			followFlavor(a.opts.Catalog, a.reader.Format())
		}
		a.add(txn, &ws)
	}
	if a.opts.Progress != nil {
		a.opts.Progress(a.files.BytesRead(), a.total)
	}
	return runErr
}

// add measures txn in every mode, with ws to extract its writeset into,
// and follows its DDL.
func (a *analysis) add(txn *binlog.Txn, ws *deptrack.Writeset) {
	a.x.Extract(txn, ws)
	a.acc.txn(txn, ws)
	rows, stmts := txn.RowCount(), statementCount(txn)
	for i, st := range a.modes {
		d := st.add(txn, ws, rows, stmts, a.widest)
		if deptrack.Modes[i] == deptrack.WritesetMode {
			a.acc.conflicts(ws, d.Conflicts)
		}
	}
	if txn.DDL {
		a.acc.ddl(a.opts.Catalog, txn)
		a.x.Invalidate()
	}
}

// add tracks txn's dependencies in the mode and feeds them to its chains
// and simulations; the one at widest counts txn by the transactions in
// flight at its start.
func (st *modeState) add(txn *binlog.Txn, ws *deptrack.Writeset, rows, stmts, widest int) deptrack.Deps {
	d := st.tracker.Add(txn, ws)
	st.chains.add(txn.Seq, d.Wait, d.On)
	for j, sim := range st.sims {
		start := sim.add(txn.Seq, d.Wait, d.On, rows, stmts)
		if j == widest {
			st.hist[sim.busy(start)]++
		}
		st.unordered[j].add(txn.Seq, d.Wait, d.On, rows, stmts)
	}
	return d
}

// report puts together what was measured, with the stream's flavor, the
// time since began and runErr, the error that ended the stream early.
func (a *analysis) report(began time.Time, runErr error) *Report {
	r := a.acc.report(a.opts, a.modes)
	r.Bytes = a.files.BytesRead()
	if f := a.reader.Format(); f != nil {
		r.Flavor, r.ServerVersion = f.Flavor.String(), f.ServerVersion
	}
	r.Seconds = time.Since(began).Seconds()
	if runErr != nil {
		r.Error = runErr.Error()
	}
	r.Recommendation = recommend(r, a.opts.Workers)
	return r
}

// followFlavor makes the catalog read the stream's DDL as the server that
// wrote it does: MySQL's JSON type and column-level REFERENCES, and, unless
// the catalog came from a server that said, MySQL's default collations
// (8.0 and later: utf8mb4_0900_ai_ci).
func followFlavor(cat *schema.Catalog, f *binlog.Format) {
	if f == nil || f.Flavor != binlog.FlavorMySQL || cat.Flavor() == schema.MySQL {
		return
	}
	cat.SetFlavor(schema.MySQL)
	if v := f.ServerVersion; len(v) < 2 || v[1] != '.' || v[0] < '8' {
		cat.SetCharsetDefault("utf8mb4", "utf8mb4_general_ci") // 5.x
		if !cat.HasServerCollation() {
			cat.SetServerCollation("latin1_swedish_ci")
		}
	} else if !cat.HasServerCollation() {
		cat.SetServerCollation("utf8mb4_0900_ai_ci")
	}
}

// speedups turns the makespans of sims, one per worker count, into
// speedups over one worker.
func speedups(sims []*simulator, workers []int) map[string]float64 {
	base := sims[slices.Index(workers, 1)].makespan()
	out := map[string]float64{}
	for i, w := range workers {
		if m := sims[i].makespan(); m > 0 {
			s := base / m
			if c := sims[i].model.capacity(); c > 0 {
				s = min(s, max(1, c)) // a target that applies c transactions at once
			}
			out[strconv.Itoa(w)] = round2(s)
		}
	}
	return out
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// statementCount is the number of statement-format DML statements of txn.
func statementCount(txn *binlog.Txn) int {
	n := 0
	for _, st := range txn.Statements {
		if st.Kind == binlog.StmtDML {
			n++
		}
	}
	return n
}
