package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/schema"
)

// Report is the result of an analysis; its JSON form is the --json output.
type Report struct {
	Files         []string `json:"files"`
	Bytes         int64    `json:"bytes"`
	Transactions  int64    `json:"transactions"`
	Rows          int64    `json:"rows"`
	Flavor        string   `json:"flavor"`
	ServerVersion string   `json:"server_version"`
	// Modes is keyed by mode name (serial, database, commit-order,
	// writeset, writeset-session).
	Modes map[string]*ModeReport `json:"modes"`
	// HotKeys are the row keys whose earlier writer most often made a
	// transaction wait (writeset mode).
	HotKeys []Hot `json:"hot_keys"`
	// HotTables are the tables of those keys.
	HotTables []Hot `json:"hot_tables"`
	// TablesWithoutSchema were written but their keys were unknown: each
	// such transaction was a barrier in the writeset modes.
	TablesWithoutSchema []string `json:"tables_without_schema"`
	// KeylessTables have no primary or unique key: their writers run one
	// at a time.
	KeylessTables []string `json:"keyless_tables"`
	// DDLWarnings are DDL statements of the stream that could not be
	// followed (their tables became unknown).
	DDLWarnings    []string  `json:"ddl_warnings,omitempty"`
	Recommendation string    `json:"recommendation"`
	CostModel      CostModel `json:"cost_model"`
	// Capacity is how many times as fast as one worker the target's
	// cores (CostModel.Cores) let workers apply this stream: the cores
	// over those one worker keeps busy (see CostModel.capacity); with
	// commit order kept, OrderedShare of it. 0: unlimited.
	Capacity float64 `json:"capacity"`
	// WorkerCores is how many cores one worker keeps busy applying this
	// stream, the target's and paraply's (see RowCPU).
	WorkerCores float64 `json:"worker_cores"`
	HistorySize int     `json:"history_size"`
	Seconds     float64 `json:"seconds"`
	// Error is set when reading stopped at damaged input; the rest of the
	// report covers what was read before it.
	Error string `json:"error,omitempty"`
}

// ModeReport is one dependency mode's result.
type ModeReport struct {
	// CriticalPath is the longest chain of transactions each waiting for
	// the previous one, in transactions.
	CriticalPath int64 `json:"critical_path"`
	// AvgParallelism is transactions / critical path.
	AvgParallelism float64 `json:"avg_parallelism"`
	// Speedup is the simulated apply speedup over one worker, by worker
	// count, under the report's cost model (batching included: over one
	// worker that batches alike).
	Speedup map[string]float64 `json:"speedup"`
	// UnorderedSpeedup is Speedup with commit order not preserved
	// (paraply's --preserve-commit-order=false), over the same one worker.
	UnorderedSpeedup map[string]float64 `json:"unordered_speedup"`
	// Barriers counts transactions by what serialized them (every cause;
	// keyless_table, fk_cascade, history_forgotten and unknown_clock are
	// partial serializations, the others full barriers). history_forgotten
	// counts only the waits for a forgotten writer within the window: one
	// further back has committed before the transaction could start.
	Barriers map[string]int64 `json:"barriers"`
	// Limit is what caps the best of Speedup: LimitDependencies,
	// LimitBatching, LimitCommitOrder or LimitCores.
	Limit string `json:"limit"`
	// Capacity is the speedup the target's cores allow at the best
	// worker count: its cores over those one worker keeps busy, with
	// commit order kept OrderedShare of that (0: cores unlimited).
	Capacity float64 `json:"capacity"`
	// Simulated is the best speedup the dependencies and batching allow,
	// before the target's cores and paraply's statement path bound it.
	Simulated float64 `json:"simulated"`
	// SmallerBatch is set when smaller batches would do better.
	SmallerBatch *BatchSpeedup `json:"smaller_batch,omitempty"`
	// Histogram counts transactions by how many others were in flight when
	// they started, on the widest simulated worker count.
	Histogram map[string]int64 `json:"parallelism_histogram"`
	// HistoryForgotten is how many keys the bounded history evicted.
	HistoryForgotten int64 `json:"history_forgotten"`
}

// Hot is a key or table with its conflict count.
type Hot struct {
	Name      string `json:"name"`
	Conflicts int64  `json:"conflicts"`
	// Overcount bounds how much Conflicts may exceed the true count: 0
	// (exact) unless more distinct keys conflicted than the counters
	// follow (see hotKeys).
	Overcount int64 `json:"overcount,omitempty"`
}

// accumulator gathers what the report needs besides the modes.
type accumulator struct {
	txns, rows  int64
	missing     map[string]bool
	keyless     map[string]bool
	ddlWarnings []string
}

func newAccumulator() *accumulator {
	return &accumulator{missing: map[string]bool{}, keyless: map[string]bool{}}
}

func (a *accumulator) txn(t *binlog.Txn, ws *deptrack.Writeset) {
	a.txns++
	a.rows += int64(t.RowCount())
	switch {
	case ws.Barrier == deptrack.CauseUnknownTable:
		a.missing[ws.Table] = true
	case slices.Contains(ws.Notes, deptrack.CauseKeyless):
		a.keyless[ws.Table] = true
	}
}

// ddl follows the transaction's DDL in the catalog.
func (a *accumulator) ddl(cat *schema.Catalog, t *binlog.Txn) {
	for _, st := range t.Statements {
		if st.Kind != binlog.StmtDDL {
			continue
		}
		session := schema.Session{CollationServer: int(st.Session.Server), DefaultUTF8MB4: int(st.Session.DefaultUTF8MB4)}
		if _, err := cat.ApplyDDLIn(session, st.Schema, st.Text()); err != nil && len(a.ddlWarnings) < 100 {
			a.ddlWarnings = append(a.ddlWarnings, binlog.RedactSecrets(fmt.Sprintf("%s: %v", t.ID(), err)))
		}
	}
}

func (a *accumulator) report(opts Options, modes []*modeState) *Report {
	r := &Report{
		Files: opts.Files, Transactions: a.txns, Rows: a.rows,
		Modes: map[string]*ModeReport{}, CostModel: opts.Model, HistorySize: opts.HistorySize,
		TablesWithoutSchema: sortedKeys(a.missing), KeylessTables: sortedKeys(a.keyless),
		DDLWarnings: a.ddlWarnings,
	}
	if r.HistorySize == 0 {
		r.HistorySize = deptrack.DefaultHistorySize
	}
	if b := modes[0].sims[modes[0].base]; b.makespan() > 0 {
		r.Capacity = round2(opts.Model.capacity(false, b.makespan(), b.cpu))
		r.WorkerCores = round2(b.cpu / b.makespan())
	}
	for i, st := range modes {
		if st.follows != nil {
			st.adopt() // nothing told them apart
		}
		stats := st.tracker.Stats()
		mr := &ModeReport{
			CriticalPath:     int64(st.chains.best),
			Speedup:          st.speedups(opts.Model, opts.Workers, st.ordered),
			UnorderedSpeedup: st.speedups(opts.Model, opts.Workers, st.unordered),
			Barriers:         map[string]int64{},
			Histogram:        map[string]int64{},
			HistoryForgotten: stats.Forgotten,
		}
		if mr.CriticalPath > 0 {
			mr.AvgParallelism = round2(float64(a.txns) / float64(mr.CriticalPath))
		}
		st.limit(opts.Model, opts.Workers, mr)
		for _, c := range deptrack.Causes() {
			mr.Barriers[c.String()] = stats.Causes[c]
		}
		mr.Barriers[deptrack.CauseHistory.String()] = st.forgottenWaits
		for n, count := range st.hist {
			if count > 0 {
				mr.Histogram[strconv.Itoa(n)] = count
			}
		}
		r.Modes[deptrack.Modes[i].String()] = mr
	}
	c := modes[slices.Index(deptrack.Modes, deptrack.WritesetMode)].conflicts
	r.HotKeys = c.keys.top(opts.TopN)
	for t, n := range c.tables {
		r.HotTables = append(r.HotTables, Hot{Name: t, Conflicts: n})
	}
	r.HotTables = top(r.HotTables, opts.TopN)
	return r
}

func top(h []Hot, n int) []Hot {
	sort.Slice(h, func(i, j int) bool {
		if h[i].Conflicts != h[j].Conflicts {
			return h[i].Conflicts > h[j].Conflicts
		}
		return h[i].Name < h[j].Name
	})
	if len(h) > n {
		h = h[:n]
	}
	if h == nil {
		h = []Hot{}
	}
	return h
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
