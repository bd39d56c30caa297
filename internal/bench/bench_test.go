package bench

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestApplyNamesRoundTrip(t *testing.T) {
	for _, cfg := range []Config{Default(), Quick()} {
		for _, a := range cfg.Applies {
			got, err := ParseApply(a.Name())
			if err != nil {
				t.Fatalf("%s: %v", a.Name(), err)
			}
			if got != a {
				t.Errorf("ParseApply(%q) = %+v, want %+v", a.Name(), got, a)
			}
		}
	}
	for name, want := range map[string]Apply{
		"native-single":                        {Kind: Native},
		"native-4-conservative":                {Kind: Native, Threads: 4, Mode: "conservative"},
		"native-single-receive":                {Kind: Native, Receive: true},
		"native-16-aggressive-receive":         {Kind: Native, Threads: 16, Mode: "aggressive", Receive: true},
		"paraply-16-writeset-session":          {Kind: Paraply, Threads: 16, Mode: "writeset-session", Batch: DefaultBatch},
		"paraply-8-commit-order-nobatch":       {Kind: Paraply, Threads: 8, Mode: "commit-order", Batch: 1},
		"paraply-4-writeset-batch16":           {Kind: Paraply, Threads: 4, Mode: "writeset", Batch: 16},
		"paraply-4-writeset-nobatch-unordered": {Kind: Paraply, Threads: 4, Mode: "writeset", Batch: 1, Unordered: true},
		"paraply-8-writeset-unordered-binlog":  {Kind: Paraply, Threads: 8, Mode: "writeset", Batch: DefaultBatch, Unordered: true, Binlog: true},
		"paraply-16-writeset-gtids":            {Kind: Paraply, Threads: 16, Mode: "writeset", Batch: 1, GTIDs: true},
		"paraply-auto-writeset":                {Kind: Paraply, Mode: "writeset", Batch: DefaultBatch},
		"paraply-auto-serial-unordered":        {Kind: Paraply, Mode: "serial", Batch: DefaultBatch, Unordered: true},
		"ceiling":                              {Kind: Ceiling, Threads: 16},
		"ceiling-32":                           {Kind: Ceiling, Threads: 32},
		"mariadb-binlog":                       {Kind: MariadbBinlog},
		"apply-16":                             {Kind: ParaplyApply, Threads: 16},
		"apply-auto":                           {Kind: ParaplyApply},
		"paraply-auto-writeset@b":              {Kind: Paraply, Mode: "writeset", Batch: DefaultBatch, B: true},
		"paraply-8-writeset-unordered@b":       {Kind: Paraply, Threads: 8, Mode: "writeset", Batch: DefaultBatch, Unordered: true, B: true},
		"apply-16@b":                           {Kind: ParaplyApply, Threads: 16, B: true},
	} {
		got, err := ParseApply(name)
		if err != nil || got != want {
			t.Errorf("ParseApply(%q) = %+v, %v; want %+v", name, got, err, want)
		}
		if got.Name() != name {
			t.Errorf("%+v.Name() = %q, want %q", got, got.Name(), name)
		}
	}
	for _, bad := range []string{"", "native", "native-16", "native-16-fast", "paraply-x-writeset", "paraply-16-rows", "paraply-0-writeset", "paraply-auto", "ceiling-0", "mysql-single", "paraply-4-writeset-batch0", "apply", "apply-0", "mariadb-binlog-2",
		"native-single@b", "ceiling@b", "mariadb-binlog@b", "paraply-auto@b"} {
		if _, err := ParseApply(bad); err == nil {
			t.Errorf("ParseApply(%q) succeeded", bad)
		}
	}
}

func TestConfigs(t *testing.T) {
	for _, cfg := range []Config{Default(), Quick()} {
		cfg.OutDir = "out"
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(Default().Applies); n != 29 {
		t.Errorf("default configurations: %d, want 29 (7 native, 4 native timed with receiving, 2 serial bases, 12 paraply, paraply's defaults, ceiling, 2 point-in-time recovery)", n)
	}
	ws, err := ParseWorkloads("hot_rows,write_only")
	if err != nil || len(ws) != 2 || ws[0].Args[0] != "--rand-type=pareto" {
		t.Errorf("ParseWorkloads = %+v, %v", ws, err)
	}
	if _, err := ParseWorkloads("oltp_delete"); err == nil {
		t.Error("unknown workload accepted")
	}
	ds, err := ParseDurability("both")
	if err != nil || len(ds) != 2 || !ds[0] || ds[1] {
		t.Errorf("ParseDurability(both) = %v, %v; want durable first", ds, err)
	}
	cfg := Default()
	cfg.OutDir = "out"
	if cfg.EventsFor, err = ParseEventsFor("update_index=60000,hot_rows=50000"); err != nil {
		t.Fatal(err)
	}
	if cfg.EventsOf("update_index") != 60000 || cfg.EventsOf("hot_rows") != 50000 || cfg.EventsOf("write_only") != cfg.Events {
		t.Errorf("EventsOf with %v: update_index %d, hot_rows %d, write_only %d", cfg.EventsFor,
			cfg.EventsOf("update_index"), cfg.EventsOf("hot_rows"), cfg.EventsOf("write_only"))
	}
	if got := eventsFor(cfg.EventsFor); got != " (but hot_rows 50000, update_index 60000)" {
		t.Errorf("eventsFor = %q", got)
	}
	for _, bad := range []string{"update_index", "oltp_delete=5", "=5", "hot_rows=many"} {
		if _, err := ParseEventsFor(bad); err == nil {
			t.Errorf("ParseEventsFor(%q) accepted", bad)
		}
	}
	cfg.EventsFor["write_only"] = 0
	if cfg.Validate() == nil {
		t.Error("a workload's K of 0 accepted")
	}
}

func TestPosition(t *testing.T) {
	before, err := parsePosition("0-1-100")
	if err != nil {
		t.Fatal(err)
	}
	after, err := parsePosition("0-1-40100,1-5-7")
	if err != nil {
		t.Fatal(err)
	}
	if n := after.since(before); n != 40007 {
		t.Errorf("since = %d, want 40007", n)
	}
	if !after.reached(before) || before.reached(after) {
		t.Error("reached is wrong")
	}
	empty, err := parsePosition("")
	if err != nil || !before.reached(empty) {
		t.Errorf("empty position: %v", err)
	}
	for _, bad := range []string{"0-1", "a-b-c", "0-1-2-3"} {
		if _, err := parsePosition(bad); err == nil {
			t.Errorf("parsePosition(%q) succeeded", bad)
		}
	}
}

func TestParseSysbench(t *testing.T) {
	const out = `SQL statistics:
    queries performed:
        write:                           20000
    transactions:                        5000   (998.12 per sec.)
    queries:                             20000  (3992.48 per sec.)
    ignored errors:                      0      (0.00 per sec.)

General statistics:
    total time:                          5.0095s
    total number of events:              5000
`
	r, err := parseSysbench(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Transactions != 5000 || r.TPS != 998.12 || r.Seconds != 5.0095 {
		t.Errorf("parseSysbench = %+v", r)
	}
	if _, err := parseSysbench("FATAL: error"); err == nil {
		t.Error("a report without transactions parsed")
	}
}

// sample is a backlog with one run of each kind.
func sample() *Backlog {
	run := func(name string, tps float64) *Measurement {
		a, err := ParseApply(name)
		if err != nil {
			panic(err)
		}
		return &Measurement{Config: name, Apply: a, TPS: tps, Seconds: 10, Transactions: int64(tps * 10), IncludesReceive: a.Kind == Paraply}
	}
	b := &Backlog{
		Workload: "write_only", Script: "oltp_write_only", Clients: 1, Durable: true, Events: 1000, Transactions: 1000,
		Before: "0-1-1", After: "0-1-1001",
		Predictions: []Prediction{{
			Batch:     DefaultBatch,
			Ordered:   map[string]map[string]float64{"writeset": {"1": 1, "16": 8}, "commit-order": {"16": 1.1}},
			Unordered: map[string]map[string]float64{"writeset": {"1": 1, "16": 10}},
		}},
		Runs: []*Measurement{
			run("native-single", 1000),
			run("native-16-aggressive", 2000),
			run("paraply-1-serial", 500),
			run("paraply-1-serial-nobatch", 400),
			run("paraply-16-writeset", 3000),         // 6x over its base, predicted 8x: off by 25%
			run("paraply-16-writeset-nobatch", 3000), // 7.5x over its base: within 20%
			run("paraply-16-commit-order", 0),
			run("ceiling", 4000),
			run("native-16-aggressive-receive", 1500),
			run("paraply-auto-writeset", 2800),
			run("paraply-16-writeset-unordered", 2900),
		},
	}
	b.Runs[6].Failed, b.Runs[6].Error = true, "paraply replicate: exit status 1\nmore"
	return b
}

func TestCompute(t *testing.T) {
	b := sample()
	b.compute(2)
	if b.NativeSingleTPS != 1000 || b.BestNativeTPS != 2000 || b.BestNative != "native-16-aggressive" ||
		b.BestParaplyTPS != 3000 || b.CeilingTPS != 4000 {
		t.Fatalf("references: %+v", b)
	}
	// Timed with receiving, the native run is not the apply-only best.
	if b.BestNativeReceive != "native-16-aggressive-receive" || b.BestNativeReceiveTPS != 1500 || b.DefaultsTPS != 2800 {
		t.Errorf("receive and defaults references: %q %v, defaults %v", b.BestNativeReceive, b.BestNativeReceiveTPS, b.DefaultsTPS)
	}
	ws := b.find("paraply-16-writeset")
	if ws.VsNativeSingle != 3 || ws.VsBestNative != 1.5 || ws.VsCeiling != 0.75 {
		t.Errorf("ratios: %+v", ws)
	}
	if ws.PredictedSpeedup != 8 || ws.MeasuredSpeedup != 6 || !ws.Disagrees {
		t.Errorf("batching run: predicted %v measured %v disagrees %v; want 8, 6, true", ws.PredictedSpeedup, ws.MeasuredSpeedup, ws.Disagrees)
	}
	nb := b.find("paraply-16-writeset-nobatch")
	if nb.MeasuredSpeedup != 7.5 || nb.PredictedSpeedup != 0 || nb.Disagrees {
		t.Errorf("no-batch run (the simulation batches): measured %v predicted %v disagrees %v; want 7.5, none, false", nb.MeasuredSpeedup, nb.PredictedSpeedup, nb.Disagrees)
	}
	if u := b.find("paraply-16-writeset-unordered"); u.PredictedSpeedup != 10 || u.MeasuredSpeedup != 5.8 || !u.Disagrees {
		t.Errorf("unordered run: predicted %v measured %v disagrees %v; want 10 (unordered), 5.8, true", u.PredictedSpeedup, u.MeasuredSpeedup, u.Disagrees)
	}
	if a := b.find("paraply-auto-writeset"); a.PredictedSpeedup != 8 || a.MeasuredSpeedup != 5.6 || !a.Disagrees {
		t.Errorf("auto run: predicted %v measured %v disagrees %v; want 8 (the best count), 5.6, true", a.PredictedSpeedup, a.MeasuredSpeedup, a.Disagrees)
	}
	if f := b.find("paraply-16-commit-order"); f.VsNativeSingle != 0 || f.MeasuredSpeedup != 0 {
		t.Errorf("a failed run got ratios: %+v", f)
	}
}

// TestComputeOverOneWorker: without a serial one-worker run, measured
// speedups are over the one-worker run with the same batching, whatever
// its dependency mode and commit order (one worker applies serially, in
// order); a run whose batching no one-worker run has gets none.
func TestComputeOverOneWorker(t *testing.T) {
	run := func(name string, tps float64) *Measurement {
		a, err := ParseApply(name)
		if err != nil {
			t.Fatal(err)
		}
		return &Measurement{Config: name, Apply: a, TPS: tps, Seconds: 10, Transactions: int64(tps * 10)}
	}
	b := &Backlog{Runs: []*Measurement{
		run("paraply-1-writeset", 1000),
		run("paraply-8-writeset", 800),
		run("paraply-8-writeset-unordered", 1200),
		run("paraply-8-writeset-nobatch", 900),
	}}
	b.compute(2)
	for name, want := range map[string]float64{"paraply-8-writeset": 0.8, "paraply-8-writeset-unordered": 1.2, "paraply-8-writeset-nobatch": 0} {
		if got := b.find(name).MeasuredSpeedup; got != want {
			t.Errorf("%s: measured speedup %v, want %v", name, got, want)
		}
	}
}

func TestMarkdownAndChart(t *testing.T) {
	res := &Results{Header: Header{Quick: true, Tables: 8, TableSize: 10000, Events: 1000, Clients: []int{1}}}
	res.Backlogs = []*Backlog{sample(), {Workload: "hot_rows", Clients: 16, Error: "sysbench: boom"}}
	for _, b := range res.Backlogs {
		b.compute(2)
	}
	md := res.Markdown()
	for _, want := range []string{
		"| write_only T=1 durable | 1000 | 2000 (native-16-aggressive) | 2800 | 1.40x | 3000 (paraply-16-writeset) | 1.50x | 4000 |",
		"| write_only T=1 durable | 1500 (native-16-aggressive-receive) | 2800 | 1.87x | 3000 (paraply-16-writeset) | 2.00x |",
		"| paraply 16 writeset batch=512* | 10.0 | 3000 | 3.00x | 1.50x | 0.75x | 8.00x | 6.00x | prediction off by -25% |  |  |",
		"| paraply 16 commit-order batch=512* | failed after 10.0 |",
		"The backlog could not be built",
		"0.85 of that with commit\n  order kept)", // the model's own constant
		"![write_only](chart-write_only.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, w := range res.workloads() {
		svg := res.chart(w)
		if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
			t.Errorf("chart %s is not well-formed XML: %v", w, err)
		}
	}
	if svg := res.chart("write_only"); !strings.Contains(svg, "paraply 16 writeset batch=512: 3000 tps") {
		t.Errorf("chart lacks the paraply bar:\n%s", svg)
	}
}

// TestOffBecause: a prediction that disagrees is explained only by what
// the run measured, and only when that accounts for the measured speedup.
func TestOffBecause(t *testing.T) {
	base := &Measurement{Transactions: 40000, ServerCPU: 2.4, ParaplyCPU: 0.8} // 0.08 ms per transaction
	for _, c := range []struct {
		name       string
		r          Measurement
		wantPrefix string // "" when nothing explains it
	}{
		{"slower, and CPU per transaction rose as much", Measurement{Transactions: 40000, ServerCPU: 3.4, ParaplyCPU: 1.0,
			Apply: Apply{Kind: Paraply, Threads: 8}, PredictedSpeedup: 1, MeasuredSpeedup: 0.7}, "CPU per transaction +38% over one worker's (8 sessions"},
		{"slower, CPU per transaction rose too little", Measurement{Transactions: 40000, ServerCPU: 2.6, ParaplyCPU: 0.8,
			Apply: Apply{Kind: Paraply, Threads: 8}, PredictedSpeedup: 1, MeasuredSpeedup: 0.7}, ""},
		{"slower, CPU per transaction fell", Measurement{Transactions: 40000, ServerCPU: 2, ParaplyCPU: 0.8,
			Apply: Apply{Kind: Paraply, Threads: 8}, PredictedSpeedup: 1, MeasuredSpeedup: 0.7}, ""},
		{"faster, unordered, commits overlapping", Measurement{Transactions: 40000, ServerCPU: 2.4, ParaplyCPU: 0.8,
			Apply: Apply{Kind: Paraply, Threads: 8, Unordered: true}, PredictedSpeedup: 1, MeasuredSpeedup: 1.4,
			Sessions: []SessionState{{"Sleep", 5}, {"Query: Commit", 3.3}}}, "unordered commits overlap their fsyncs (3.3 sessions"},
		{"faster, unordered, hardly a session in Commit", Measurement{Transactions: 40000, ServerCPU: 2.4, ParaplyCPU: 0.8,
			Apply: Apply{Kind: Paraply, Threads: 8, Unordered: true}, PredictedSpeedup: 1, MeasuredSpeedup: 1.4,
			Sessions: []SessionState{{"Sleep", 7}, {"Query: Commit", 0.5}}}, ""},
		{"faster, ordered", Measurement{Transactions: 40000, ServerCPU: 2.4, ParaplyCPU: 0.8,
			Apply: Apply{Kind: Paraply, Threads: 8}, PredictedSpeedup: 1, MeasuredSpeedup: 1.4,
			Sessions: []SessionState{{"Query: Commit", 3.3}}}, ""},
	} {
		got := offBecause(&c.r, base, 2)
		if c.wantPrefix == "" && got != "" || !strings.HasPrefix(got, c.wantPrefix) {
			t.Errorf("%s: %q, want it to start with %q", c.name, got, c.wantPrefix)
		}
	}
	// A base run that left cores idle (one worker without batching, 1.14
	// of the 2 cores busy: up to 1.75x) accounts for an ordered run
	// faster than predicted only if its speedup is within Tolerance of
	// what the idle cores allow.
	idle := &Measurement{Transactions: 40000, ServerCPU: 12, ParaplyCPU: 8, Seconds: 17.5}
	for measured, want := range map[float64]string{1.6: "one worker kept 1.14 of the 2 cores busy", 2.4: "", 1.38: ""} {
		r := Measurement{Transactions: 40000, Apply: Apply{Kind: Paraply, Threads: 4}, PredictedSpeedup: 1.11, MeasuredSpeedup: measured}
		if got := offBecause(&r, idle, 2); want == "" && got != "" || !strings.HasPrefix(got, want) {
			t.Errorf("measured %.2fx, the idle cores allowing 1.75x: %q, want it to start with %q", measured, got, want)
		}
	}
	if got := offBecause(&Measurement{Transactions: 1, PredictedSpeedup: 1, MeasuredSpeedup: 0.5}, nil, 2); got != "" {
		t.Errorf("no base run: %q, want nothing", got)
	}
}

// TestRoundsUseMedians: with a configuration run in several rounds, the
// references, ratios and tables use its median run, whatever order the
// runs came in, and a failed run is left out of the median.
func TestRoundsUseMedians(t *testing.T) {
	b := sample()
	extra := func(name string, tps float64, round int) *Measurement {
		a, _ := ParseApply(name)
		return &Measurement{Config: name, Apply: a, TPS: tps, Seconds: 10, Transactions: int64(tps * 10), Round: round}
	}
	b.Runs = append(b.Runs,
		extra("native-16-aggressive", 9000, 2), extra("native-16-aggressive", 1800, 3), // 1800, 2000, 9000: 2000
		extra("paraply-auto-writeset@b", 2600, 1), extra("paraply-auto-writeset@b", 3600, 2),
		extra("paraply-auto-writeset@b", 0, 3))
	b.Runs[len(b.Runs)-1].Failed = true
	lucky := b.Runs[len(b.Runs)-5]
	lucky.VsNativeSingle = 9 // as an earlier round's compute, when it was the only run, left it
	b.compute(2)
	if lucky.VsNativeSingle != 0 || lucky.Median {
		t.Errorf("a run the tables do not use keeps ratios: %+v", lucky)
	}
	if b.BestNativeTPS != 2000 || b.BestNative != "native-16-aggressive" {
		t.Errorf("best native %v (%s), want the median 2000, not the lucky 9000", b.BestNativeTPS, b.BestNative)
	}
	m := b.find("native-16-aggressive")
	if !m.Median || !slices.Equal(m.Runs, []float64{2000, 9000, 1800}) {
		t.Errorf("median run %+v", m)
	}
	if b.DefaultsBTPS != 2600 || b.DefaultsTPS != 2800 {
		t.Errorf("defaults %v, binary B %v: want 2800 and the lower middle of 2600, 3600", b.DefaultsTPS, b.DefaultsBTPS)
	}
	if r := b.find("paraply-auto-writeset"); r.Median || r.Runs != nil {
		t.Errorf("a configuration run once is its own run: %+v", r)
	}
	res := &Results{Header: Header{Rounds: 3, ParaplyBinaryB: "sha256:b"}, Backlogs: []*Backlog{b}}
	md := res.Markdown()
	for _, want := range []string{"| native 16 aggressive | 10.0 | 2000 (1800-9000, median of 3) |", "| write_only T=1 durable | 2800 | 2600 | 0.93x | 1.30x |",
		"paraply auto writeset batch=512 (binary B)", "- Rounds: 3."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, "| native 16 aggressive |"); n != 1 {
		t.Errorf("native 16 aggressive has %d rows, want its median's only", n)
	}
}

func TestRepeatUnder(t *testing.T) {
	b := sample()
	long, short := b.find("native-single"), b.find("native-16-aggressive")
	long.Round, short.Round = 1, 1
	long.Seconds, short.Seconds = 12, 3
	cfg := Config{Rounds: 3, RepeatUnder: 10 * time.Second}
	if got := b.firstRun("native-single"); got != long {
		t.Fatalf("firstRun = %+v, want the round-1 run", got)
	}
	if cfg.repeats(long) {
		t.Errorf("a first run of 12 s repeats under RepeatUnder 10 s")
	}
	if !cfg.repeats(short) {
		t.Errorf("a first run of 3 s does not repeat under RepeatUnder 10 s")
	}
	long.Failed = true
	if !cfg.repeats(long) || !cfg.repeats(nil) {
		t.Errorf("a failed or missing first run is not repeated")
	}
	long.Failed = false
	if cfg.RepeatUnder = 0; !cfg.repeats(long) {
		t.Errorf("without RepeatUnder every configuration repeats")
	}
	res := &Results{Header: Header{Rounds: 3, RepeatUnderSeconds: 10}, Backlogs: []*Backlog{b}}
	if md := res.Markdown(); !strings.Contains(md, "took 10 s or more ran only once there") {
		t.Errorf("markdown does not say which configurations ran once:\n%s", md)
	}
}

// TestRewrite: results written, read back and written again give the
// same results.json, and results.md is written again.
func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	b := sample()
	res := &Results{Header: Header{CPUs: 2, Rounds: 1}, Backlogs: []*Backlog{b}}
	if err := res.write(dir); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "results.md")); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(dir); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("results.json changed on a rewrite:\n%s\nthen\n%s", before, after)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil || !strings.Contains(string(md), "write_only T=1 durable") {
		t.Errorf("results.md not written again (%v):\n%s", err, md)
	}
	if err := Rewrite(t.TempDir()); err == nil {
		t.Errorf("rewriting a directory without results.json succeeded")
	}
}

// TestUnsteady: a prediction off from the median speedup is put down to
// the measurement's scatter only when a round measured it, round by round.
func TestUnsteady(t *testing.T) {
	b := sample()
	run := func(name string, tps float64, round int) *Measurement {
		a, _ := ParseApply(name)
		return &Measurement{Config: name, Apply: a, TPS: tps, Seconds: 1, Transactions: 1000, Round: round}
	}
	b.Runs = []*Measurement{
		run("paraply-1-serial", 1000, 1), run("paraply-16-writeset", 5000, 1),
		run("paraply-1-serial", 500, 2), run("paraply-16-writeset", 5500, 2), // 11x
		run("paraply-1-serial", 1000, 3), run("paraply-16-writeset", 6000, 3), // 6x
	}
	b.Runs[3].Failed = true // round 2 is left out: 5x and 6x remain
	r, base := b.find("paraply-16-writeset"), b.find("paraply-1-serial")
	got := b.roundSpeedups(r, base)
	if !slices.Equal(got, []float64{5, 6}) {
		t.Fatalf("round speedups %v, want [5 6]", got)
	}
	if why := unsteady(5.5, got); !strings.HasPrefix(why, "the rounds measured 5.00x to 6.00x") {
		t.Errorf("a prediction between the rounds: %q", why)
	}
	if why := unsteady(8, got); why != "" {
		t.Errorf("a prediction above every round: %q, want no reason", why)
	}
	if why := unsteady(5, got[:1]); why != "" {
		t.Errorf("one round: %q, want no reason", why)
	}
	b.compute(2)
	if r.PredictedSpeedup != 8 || !r.Disagrees || r.OffBecause != "" {
		t.Errorf("predicted 8x, measured 5x-6x: %+v", r)
	}
}
