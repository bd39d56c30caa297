package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Workload is one kind of backlog: a sysbench script and its options.
type Workload struct {
	// Name identifies the workload in flags, tables and file names.
	Name string `json:"name"`
	// Script is the sysbench script (oltp_write_only, ...).
	Script string `json:"script"`
	// Args are extra sysbench options, e.g. --rand-type=pareto.
	Args []string `json:"args,omitempty"`
	// OnRequest leaves the workload out of the default run: it runs when
	// -workloads names it.
	OnRequest bool `json:"-"`
}

// Workloads are the workloads the benchmark knows, in report order.
var Workloads = []Workload{
	{Name: "write_only", Script: "oltp_write_only"},
	{Name: "update_index", Script: "oltp_update_index"},
	{Name: "insert", Script: "oltp_insert"},
	{Name: "read_write", Script: "oltp_read_write"},
	// A few rows take most of the updates: the backlog that serializes a
	// writeset replica and that commit-order cannot tell apart from any
	// other.
	{Name: "hot_rows", Script: "oltp_update_index", Args: []string{"--rand-type=pareto"}},
	// A web application's writes (Laravel's users, posts and comments):
	// string and unique keys, parent and child tables (app.lua).
	{Name: "app", Script: appScript, OnRequest: true},
}

// Config says what to measure and where to put the results. Default and
// Quick return complete configurations.
type Config struct {
	// Workloads are the backlog kinds, measured in this order.
	Workloads []Workload
	// Clients are the sysbench client counts (T) that build each backlog.
	Clients []int
	// Applies are the ways each backlog is applied (see ParseApply).
	Applies []Apply
	// Events is K, the sysbench events (transactions) of each backlog; the
	// ceiling runs the same number.
	Events int
	// EventsFor overrides Events for the workloads it names: a workload
	// paraply applies at 10,000 tps needs a longer backlog than one it
	// applies at 4,000 for its runs to last as long (see EventsOf).
	EventsFor map[string]int
	// Tables and TableSize size the sysbench data set.
	Tables, TableSize int
	// Durable lists the target settings to measure, in order: true is
	// innodb_flush_log_at_trx_commit=1 and sync_binlog=1, false is 2 and 0.
	Durable []bool
	// BufferPoolMB is innodb_buffer_pool_size of all three servers.
	BufferPoolMB int
	// BinlogFormat is the source's binlog_format: "" for ROW (the
	// sandbox's), MIXED (MariaDB's default) or STATEMENT.
	BinlogFormat string
	// RunTimeout bounds one measured run (and one backlog build); a run
	// that exceeds it is recorded as failed.
	RunTimeout time.Duration
	// Verify says which runs are checked with `paraply verify`: "first"
	// (the first native run, the first multi-worker paraply run and the
	// first run of each point-in-time recovery of each backlog), "all"
	// (every run but the ceiling) or "none".
	Verify string
	// Warm reads every table into the buffer pool after each restore and
	// writes once (out of the binary log), so each run starts with the
	// warm cache a running replica has and its first write behind it.
	Warm bool
	// Paraply is the paraply binary.
	Paraply string
	// ParaplyB is a second paraply binary, run by the configurations
	// marked B (name@b), to compare two builds on the same backlogs in
	// the same run; "" when there is none.
	ParaplyB string
	// Rounds is how many times each backlog's configurations run, one
	// round after the other (A, B, A, B, ...), so that two configurations
	// share the machine's drift; the tables show each configuration's
	// median run. 0 means 1.
	Rounds int
	// RepeatUnder, when positive, keeps the rounds after the first to the
	// configurations whose first run took less than it: a run of a few
	// seconds is what one moment of a shared machine decides, and one of
	// half a minute averages those moments out, so repeating it costs
	// time and changes little. Natives and paraply runs follow the same rule.
	RepeatUnder time.Duration
	// Profile keeps a CPU profile of every paraply run in OutDir
	// (PARAPLY_CPU_PROFILE), named in its Measurement, and its heap at
	// the peak (PARAPLY_HEAP_PROFILE).
	Profile bool
	// OutDir receives results.json, results.md and the charts.
	OutDir string
	// BaseDir is where the servers and the snapshots live ("" = os.TempDir()).
	BaseDir string
	// Quick marks the sanity-run configuration in the report.
	Quick bool
	// Progress receives one line per step; Out the markdown at the end.
	Progress, Out io.Writer
}

// rounds is Rounds, at least 1.
func (c Config) rounds() int { return max(1, c.Rounds) }

// Verify policies.
const (
	VerifyFirst = "first"
	VerifyAll   = "all"
	VerifyNone  = "none"
)

// Default is the full benchmark of DESIGN.md "Benchmark method": every
// workload, 1 and 16 clients, K = 40000 on 8 tables of 100k rows, durable
// then non-durable.
func Default() Config {
	var applies []Apply
	applies = append(applies, Apply{Kind: Native})
	for _, n := range []int{4, 16} {
		for _, m := range NativeModes {
			applies = append(applies, Apply{Kind: Native, Threads: n, Mode: m})
		}
	}
	// The other fair pair: the native replica timed with its receiving,
	// as paraply is.
	applies = append(applies, Apply{Kind: Native, Receive: true})
	for _, m := range NativeModes {
		applies = append(applies, Apply{Kind: Native, Threads: 16, Mode: m, Receive: true})
	}
	// The 1-worker serial runs are the base of the measured speedups.
	for _, batch := range []int{DefaultBatch, 1} {
		applies = append(applies, Apply{Kind: Paraply, Threads: 1, Mode: "serial", Batch: batch})
	}
	for _, n := range []int{4, 16} {
		for _, m := range []string{"commit-order", "writeset", "writeset-session"} {
			for _, batch := range []int{DefaultBatch, 1} {
				applies = append(applies, Apply{Kind: Paraply, Threads: n, Mode: m, Batch: batch})
			}
		}
	}
	applies = append(applies, Defaults)
	applies = append(applies, Apply{Kind: Ceiling, Threads: CeilingClients})
	// Point-in-time recovery of the same files onto the same snapshot.
	applies = append(applies, Apply{Kind: MariadbBinlog}, Apply{Kind: ParaplyApply, Threads: 16})
	var defaults []Workload
	for _, w := range Workloads {
		if !w.OnRequest {
			defaults = append(defaults, w)
		}
	}
	return Config{
		Workloads:    defaults,
		Clients:      []int{1, 16},
		Applies:      applies,
		Events:       40000,
		Tables:       8,
		TableSize:    100000,
		Durable:      []bool{true, false},
		BufferPoolMB: 256,
		RunTimeout:   10 * time.Minute,
		Verify:       VerifyFirst,
		Warm:         true,
		Paraply:      "bin/paraply",
		Progress:     os.Stderr,
		Out:          os.Stdout,
	}
}

// Quick is a sanity run of a few minutes: small tables, K = 5000, the
// write_only and hot-row backlogs, durable only, and a few configurations,
// point-in-time recovery included.
func Quick() Config {
	c := Default()
	c.Quick = true
	c.Tables, c.TableSize, c.Events = 8, 10000, 5000
	c.Workloads = []Workload{mustWorkload("write_only"), mustWorkload("hot_rows")}
	c.Durable = []bool{true}
	c.Applies = mustApplies("native-single,native-16-optimistic,native-16-aggressive,native-single-receive,native-16-aggressive-receive," +
		"paraply-auto-writeset,paraply-1-serial,paraply-1-serial-nobatch,paraply-8-writeset,paraply-16-writeset,paraply-16-writeset-nobatch," +
		"paraply-8-writeset-unordered,paraply-1-serial-binlog,paraply-16-writeset-binlog,paraply-8-writeset-unordered-binlog,paraply-16-writeset-gtids,ceiling,mariadb-binlog,apply-16")
	return c
}

// Validate reports the first problem with c.
func (c Config) Validate() error {
	for name, n := range c.EventsFor {
		if n < 1 {
			return fmt.Errorf("events for %s must be at least 1", name)
		}
	}
	switch {
	case len(c.Workloads) == 0:
		return errors.New("no workload selected")
	case len(c.Clients) == 0:
		return errors.New("no client count selected")
	case len(c.Applies) == 0:
		return errors.New("no configuration selected")
	case len(c.Durable) == 0:
		return errors.New("no durability selected")
	case c.Events < 1:
		return errors.New("events must be at least 1")
	case c.Tables < 1 || c.TableSize < 1:
		return errors.New("tables and table size must be at least 1")
	case c.RunTimeout <= 0:
		return errors.New("run timeout must be positive")
	case c.OutDir == "":
		return errors.New("no output directory")
	case c.Paraply == "":
		return errors.New("no paraply binary")
	case c.Rounds < 0:
		return errors.New("rounds must not be negative")
	case c.RepeatUnder < 0:
		return errors.New("repeat-under must not be negative")
	}
	for _, a := range c.Applies {
		if a.B && c.ParaplyB == "" {
			return fmt.Errorf("configuration %s runs the second paraply binary, and none was given", a.Name())
		}
	}
	if !slices.Contains([]string{VerifyFirst, VerifyAll, VerifyNone}, c.Verify) {
		return fmt.Errorf("verify %q: want first, all or none", c.Verify)
	}
	for _, t := range c.Clients {
		if t < 1 {
			return fmt.Errorf("client count %d: must be at least 1", t)
		}
	}
	return nil
}

// EventsOf is K for backlogs of workload: EventsFor's, else Events.
func (c Config) EventsOf(workload string) int {
	if n, ok := c.EventsFor[workload]; ok {
		return n
	}
	return c.Events
}

// ParseEventsFor parses a comma-separated list of workload=K.
func ParseEventsFor(s string) (map[string]int, error) {
	m := map[string]int{}
	for _, f := range splitList(s) {
		name, k, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want workload=K", f)
		}
		if _, err := workloadNamed(name); err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		n, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("%q: %q is not a number", f, k)
		}
		m[name] = n
	}
	return m, nil
}

// ParseWorkloads parses a comma-separated list of workload names.
func ParseWorkloads(s string) ([]Workload, error) {
	var ws []Workload
	for _, name := range splitList(s) {
		w, err := workloadNamed(name)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// workloadNamed returns the workload of Workloads called name.
func workloadNamed(name string) (Workload, error) {
	i := slices.IndexFunc(Workloads, func(w Workload) bool { return w.Name == name })
	if i < 0 {
		return Workload{}, fmt.Errorf("unknown workload %q (known: %s)", name, strings.Join(WorkloadNames(), ", "))
	}
	return Workloads[i], nil
}

// WorkloadNames lists the names of Workloads.
func WorkloadNames() []string {
	var names []string
	for _, w := range Workloads {
		names = append(names, w.Name)
	}
	return names
}

// ParseInts parses a comma-separated list of integers.
func ParseInts(s string) ([]int, error) {
	var ns []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// ParseDurability parses "durable", "nondurable" or a comma-separated list
// of them ("both" = durable,nondurable).
func ParseDurability(s string) ([]bool, error) {
	var ds []bool
	for _, f := range splitList(s) {
		switch f {
		case "durable":
			ds = append(ds, true)
		case "nondurable", "non-durable":
			ds = append(ds, false)
		case "both":
			ds = append(ds, true, false)
		default:
			return nil, fmt.Errorf("durability %q: want durable, nondurable or both", f)
		}
	}
	return ds, nil
}

// ParseApplies parses a comma-separated list of configuration names (see
// ParseApply).
func ParseApplies(s string) ([]Apply, error) {
	var as []Apply
	for _, f := range splitList(s) {
		a, err := ParseApply(f)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
	}
	return as, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func mustWorkload(name string) Workload {
	ws, err := ParseWorkloads(name)
	if err != nil {
		panic(err)
	}
	return ws[0]
}

func mustApplies(s string) []Apply {
	as, err := ParseApplies(s)
	if err != nil {
		panic(err)
	}
	return as
}
