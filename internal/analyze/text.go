package analyze

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/paraply/paraply/internal/deptrack"
)

// WriteText prints the report as readable tables.
func WriteText(w io.Writer, r *Report) error {
	p := &printer{w: w}
	p.f("paraply analyze: %d file(s), %.1f MB, %d transactions, %d row changes", len(r.Files), float64(r.Bytes)/1e6, r.Transactions, r.Rows)
	if r.ServerVersion != "" {
		p.f(" (%s %s)", r.Flavor, r.ServerVersion)
	}
	p.f("\n")
	if r.Error != "" {
		p.f("STOPPED AT DAMAGED INPUT: %s\n(the figures below cover what was read before it)\n", r.Error)
	}
	p.f("\n")
	workers := workerKeys(r)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mode\tcritical path\tavg parallelism\t")
	for _, k := range workers {
		fmt.Fprintf(tw, "%sw\t", k)
	}
	fmt.Fprintf(tw, "limit\tbarriers\t\n")
	for _, m := range deptrack.Modes {
		mr := r.Modes[m.String()]
		if mr == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t", m, mr.CriticalPath, mr.AvgParallelism)
		for _, k := range workers {
			fmt.Fprintf(tw, "%.2fx\t", mr.Speedup[k])
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", mr.Limit, barrierSummary(mr.Barriers))
		if r.CostModel.PreserveOrder {
			fmt.Fprintf(tw, "  unordered\t\t\t")
			for _, k := range workers {
				fmt.Fprintf(tw, "%.2fx\t", mr.UnorderedSpeedup[k])
			}
			fmt.Fprintf(tw, "\t\t\n")
		}
	}
	tw.Flush()
	p.f("\n(speedup: simulated apply time of 1 worker / N workers; cost model %.2f per transaction + %.2f per row + %.2f per statement + %.2f per commit, batches of up to %d, commit order preserved=%v (unordered: without))\n",
		r.CostModel.PerTxn, r.CostModel.PerRow, r.CostModel.PerStatement, r.CostModel.Commit, max(1, r.CostModel.Batch), r.CostModel.PreserveOrder)
	p.f("%s\n", targetText(r))
	for _, m := range deptrack.Modes {
		if mr := r.Modes[m.String()]; mr != nil && mr.SmallerBatch != nil {
			b := mr.SmallerBatch
			p.f("%s: batches of up to %d with %s would reach %.2fx\n", m, b.Batch, workersText(strconv.Itoa(b.Workers)), b.Speedup)
		}
	}
	if len(r.HotKeys) > 0 {
		p.f("\nhot rows (writeset conflicts):\n")
		for _, h := range r.HotKeys {
			p.f("  %8d  %s\n", h.Conflicts, h.Name)
		}
	}
	if len(r.HotTables) > 0 {
		p.f("\nhot tables:\n")
		for _, h := range r.HotTables {
			p.f("  %8d  %s\n", h.Conflicts, h.Name)
		}
	}
	if len(r.TablesWithoutSchema) > 0 {
		p.f("\ntables without a known schema (barriers in writeset modes): %s\n", strings.Join(r.TablesWithoutSchema, ", "))
	}
	if len(r.KeylessTables) > 0 {
		p.f("\ntables without primary or unique key: %s\n", strings.Join(r.KeylessTables, ", "))
	}
	for _, w := range r.DDLWarnings {
		p.f("\nDDL not followed: %s\n", w)
	}
	p.f("\nrecommendation: %s\n", r.Recommendation)
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// barrierSummary lists the non-zero causes, largest first.
func barrierSummary(b map[string]int64) string {
	type kv struct {
		k string
		v int64
	}
	var s []kv
	for k, v := range b {
		if v > 0 {
			s = append(s, kv{k, v})
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v || s[i].v == s[j].v && s[i].k < s[j].k })
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = fmt.Sprintf("%s=%d", x.k, x.v)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// workerKeys are the simulated worker counts, ascending.
func workerKeys(r *Report) []string {
	var ns []int
	for _, mr := range r.Modes {
		for k := range mr.Speedup {
			n, _ := strconv.Atoi(k)
			ns = append(ns, n)
		}
		break
	}
	sort.Ints(ns)
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strconv.Itoa(n)
	}
	return out
}

// targetText says what target the speedups are for, and how much faster
// than one worker its cores let workers apply the stream.
func targetText(r *Report) string {
	m := r.CostModel
	switch {
	case m.Capacity > 0:
		return fmt.Sprintf("target: applies %.1f transactions at once (--capacity), %.1f with commit order kept",
			m.Capacity, m.Capacity*OrderedShare)
	case m.Cores <= 0:
		return "target: cores not counted (--target-cores 0): the speedups are what the dependencies and batching allow"
	}
	return fmt.Sprintf("target: %d cores (--target-cores), which let workers apply this stream at most %.2fx as fast as one, %.2fx with commit order kept (a worker keeps %.2f cores busy)",
		m.Cores, r.Capacity, max(1, r.Capacity*OrderedShare), r.WorkerCores)
}
