package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
)

func TestMain(m *testing.M) {
	uninstall := sandbox.HandleSignals()
	code := m.Run()
	uninstall()
	_ = sandbox.StopAll()
	os.Exit(code)
}

// logWriter sends progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// tinyConfig skips the test where it cannot start servers, builds
// paraply, and returns a configuration of one backlog of workload from one
// client, events transactions on tables x size rows, applied by applies,
// every run verified.
func tinyConfig(t *testing.T, workload string, tables, size, events int, applies string) Config {
	t.Helper()
	if testing.Short() {
		t.Skip("starts three MariaDB servers and builds paraply")
	}
	if _, err := exec.LookPath("sysbench"); err != nil {
		t.Skip("sysbench is not installed (scripts/install-deps.sh)")
	}
	dir := t.TempDir()
	paraply := filepath.Join(dir, "paraply")
	if out, err := exec.Command("go", "build", "-o", paraply, "github.com/paraply/paraply/cmd/paraply").CombinedOutput(); err != nil {
		t.Fatalf("building paraply: %v\n%s", err, out)
	}
	cfg := Quick()
	cfg.Tables, cfg.TableSize, cfg.Events = tables, size, events
	cfg.Workloads = []Workload{mustWorkload(workload)}
	cfg.Clients = []int{1}
	cfg.Applies = mustApplies(applies)
	cfg.BufferPoolMB = 64
	cfg.Verify = VerifyAll
	cfg.Paraply, cfg.OutDir = paraply, filepath.Join(dir, "out")
	cfg.Progress, cfg.Out = logWriter{t}, nil
	return cfg
}

// TestRunTiny runs the whole benchmark on a tiny backlog: three servers,
// one backlog, a run of each kind, every run verified, and the output
// files.
func TestRunTiny(t *testing.T) {
	cfg := tinyConfig(t, "write_only", 2, 500, 200,
		"native-single,native-4-optimistic,native-single-receive,paraply-1-serial-nobatch,paraply-4-writeset-nobatch,paraply-auto-writeset,ceiling-4,mariadb-binlog,apply-4")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Backlogs) != 1 {
		t.Fatalf("%d backlogs, want 1", len(res.Backlogs))
	}
	b := res.Backlogs[0]
	// One prediction for each batch size of the paraply runs: 1 and 64.
	if b.Transactions != 200 || b.PredictError != "" || len(b.Predictions) != 2 || b.Predictions[0].Ordered["writeset"]["4"] == 0 {
		t.Errorf("backlog: %d transactions, predictions %+v (%s)", b.Transactions, b.Predictions, b.PredictError)
	}
	// settle saw no dirty page and no purge left on the source.
	if b.Unsettled != "" {
		t.Errorf("the source did not settle: %s", b.Unsettled)
	}
	for _, r := range b.Runs {
		if !r.ok() {
			t.Errorf("%s failed: %s", r.Config, r.Error)
			continue
		}
		if r.Apply.Kind != Ceiling && (r.Verified == nil || !*r.Verified) {
			t.Errorf("%s was not verified", r.Config)
		}
		if r.Apply.Kind != Ceiling && r.Transactions != 200 {
			t.Errorf("%s applied %d transactions, want 200", r.Config, r.Transactions)
		}
	}
	if r := b.find("native-single-receive"); r == nil || !r.IncludesReceive || b.BestNativeReceiveTPS == 0 {
		t.Errorf("the native run timed from START SLAVE: %+v", r)
	}
	if b.DefaultsTPS == 0 {
		t.Error("no throughput for paraply's defaults")
	}
	if w := b.find("paraply-4-writeset-nobatch"); w == nil || w.MeasuredSpeedup == 0 || w.PredictedSpeedup == 0 || w.VsNativeSingle == 0 {
		t.Errorf("paraply-4-writeset-nobatch lacks its ratios: %+v", w)
	}
	if b.PITRRatio == 0 || b.PITRApply != "apply-4" {
		t.Errorf("no point-in-time recovery ratio: %s %.0f tps against mariadb-binlog %.0f tps", b.PITRApply, b.PITRApplyTPS, b.PITRBinlogTPS)
	}
	for _, f := range []string{"results.json", "results.md", "chart-write_only.svg"} {
		if _, err := os.Stat(filepath.Join(cfg.OutDir, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestRunApp runs the app workload (app.lua on appSchema's tables) on a
// small backlog: MariaDB's replica and paraply's defaults each apply all
// of it, and both end as the source (verified, the app's tables with
// sysbench's).
func TestRunApp(t *testing.T) {
	cfg := tinyConfig(t, "app", 1, 100, 300, "native-single,paraply-auto-writeset")
	cfg.Durable = []bool{false}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Backlogs) != 1 || res.Backlogs[0].Transactions != 300 {
		t.Fatalf("backlogs %+v, want one of 300 transactions", res.Backlogs)
	}
	for _, r := range res.Backlogs[0].Runs {
		switch {
		case !r.ok():
			t.Errorf("%s failed: %s", r.Config, r.Error)
		case r.Verified == nil || !*r.Verified:
			t.Errorf("%s was not verified equal", r.Config)
		case r.Transactions != 300:
			t.Errorf("%s applied %d transactions, want 300", r.Config, r.Transactions)
		}
	}
}
