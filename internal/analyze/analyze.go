package analyze

import (
	"errors"
	"io"
	"slices"
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

// Run analyzes opts.Files. On bad input it returns the report of what was
// read before the damage together with the error (a *binlog.PosError).
func Run(opts Options) (*Report, error) {
	opts = withDefaults(opts)
	began := time.Now()
	files := binlog.NewFileReader(opts.Files...)
	defer files.Close()
	a := newAnalysis(opts, files)
	runErr := a.readAll()
	a.src.Close()
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
	total  int64 // bytes in files
	src    *prefetcher
	reader *binlog.Reader
	x      *deptrack.Extractor
	modes  []*modeState
	acc    *accumulator
}

// newAnalysis prepares to read files under opts.
func newAnalysis(opts Options, files *binlog.FileReader) *analysis {
	// A transaction larger than LargeTransactionBytes is read in pieces
	// without its row images (a barrier in the writeset modes, as when
	// replicating), so that any file is analyzed in bounded memory.
	a := &analysis{opts: opts, total: files.TotalBytes(), src: newPrefetcher(files, LargeTransactionBytes)}
	a.reader = binlog.NewRawReader(a.src.next)
	// Old-format (MariaDB 5.3) temporal columns: their precision, which
	// the binary log leaves out, is the catalog's, as it follows the DDL.
	a.reader.SetPrecision(opts.Catalog.TemporalPrecision)
	a.x = deptrack.NewExtractor(opts.Catalog)
	a.x.Explain = true
	// Only the keys' columns are read: decoding the other values would
	// cost more than everything else the analysis does with a row.
	a.reader.SetColumns(a.x.Columns)
	a.modes = newModes(opts)
	a.acc = newAccumulator()
	return a
}

// readAll measures every transaction of the files, reporting progress now
// and then. It returns the error that ended the stream early, or nil at
// its end. The modes measure in goroutines of their own (modeRunner)
// while this one decodes and extracts writesets, which must follow the
// stream's DDL in order.
func (a *analysis) readAll() error {
	modes := newModeRunner(a.modes)
	defer modes.close()
	for n := 0; ; n++ {
		if a.opts.Progress != nil && n%1024 == 0 {
			a.opts.Progress(a.src.read, a.total)
		}
		txn, err := a.reader.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if n == 0 {
			followFlavor(a.opts.Catalog, a.reader.Format())
		}
		a.add(txn, modes.next())
		modes.added(txn)
	}
	if a.opts.Progress != nil {
		a.opts.Progress(a.src.read, a.total)
	}
	return nil
}

// add extracts txn's writeset into it for the modes to measure, and
// follows txn's DDL.
func (a *analysis) add(txn *binlog.Txn, it *item) {
	a.x.Extract(txn, &it.ws)
	a.acc.txn(txn, &it.ws)
	it.txn, it.cost = txn, a.opts.Model.price(txn, txn.RowCount(), statementCount(txn))
	if txn.DDL {
		a.acc.ddl(a.opts.Catalog, txn)
		a.x.Invalidate()
	}
}

// report puts together what was measured, with the stream's flavor, the
// time since began and runErr, the error that ended the stream early.
func (a *analysis) report(began time.Time, runErr error) *Report {
	r := a.acc.report(a.opts, a.modes)
	r.Bytes = a.src.read
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
