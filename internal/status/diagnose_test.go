package status

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// scenario is a source with a backlog, and replication into a target
// with a status server, in-process.
type scenario struct {
	t        *testing.T
	src, tgt *sandbox.Server
	*instance
	startPos string // before the schema was created
}

// instance is one replication pipeline with its status server, in-process.
type instance struct {
	t    *testing.T
	rep  *replicate.Replica
	srv  *Server
	stop context.CancelFunc
	done chan error
	url  string
}

func newScenario(t *testing.T, tgtArgs ...string) *scenario {
	t.Helper()
	sc := &scenario{t: t,
		src: sandboxtest.ForTest(t, sandbox.Options{Name: "dsrc", Binlog: true}),
		tgt: sandboxtest.ForTest(t, sandbox.Options{Name: "dtgt", ServerID: 2, Binlog: len(tgtArgs) > 0, Durable: true, ExtraArgs: tgtArgs}),
	}
	if err := sc.src.Exec(context.Background(), "CREATE DATABASE warmup"); err != nil {
		t.Fatal(err)
	}
	sc.startPos = sc.position()
	if err := sc.src.Exec(context.Background(), "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE d.nokey (a INT, b VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	return sc
}

func (sc *scenario) position() string {
	db, _ := sc.src.DB("")
	defer db.Close()
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		sc.t.Fatal(err)
	}
	return pos
}

// backlog commits n single-row inserts from the given number of sessions.
func (sc *scenario) backlog(n, sessions, offset int) {
	db, err := sc.src.DB("d")
	if err != nil {
		sc.t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := db.Conn(context.Background())
			if err == nil {
				defer c.Close()
				for i := s; i < n && err == nil; i += sessions {
					_, err = c.ExecContext(context.Background(), "INSERT INTO t VALUES (?, ?)", offset+i, i)
				}
			}
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		sc.t.Fatal(firstErr)
	}
}

// sessions runs fn n times in each of the given number of sessions on
// database d, at once.
func (sc *scenario) sessions(sessions, n int, fn func(c *sql.Conn, s, i int) error) {
	db, err := sc.src.DB("d")
	if err != nil {
		sc.t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := db.Conn(context.Background())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := 0; i < n; i++ {
				if err := fn(c, s, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		sc.t.Fatal(err)
	}
}

// start replicates from start with cfg adjusted by adjust.
func (sc *scenario) start(start string, adjust func(*replicate.Config)) {
	sc.instance = startInstance(sc.t, sc.src, sc.tgt, start, adjust)
}

// startInstance replicates src into tgt from start, with cfg adjusted by
// adjust, and serves its status; the test's cleanup stops it.
func startInstance(t *testing.T, src, tgt *sandbox.Server, start string, adjust func(*replicate.Config)) *instance {
	cfg := replicate.Default()
	var err error
	if cfg.Source, err = config.ParseEndpoint(src.URL()); err != nil {
		t.Fatal(err)
	}
	if cfg.Target, err = config.ParseEndpoint(tgt.URL()); err != nil {
		t.Fatal(err)
	}
	cfg.StartGTID, cfg.RelayDir, cfg.Heartbeat = start, filepath.Join(t.TempDir(), "relay"), 200*time.Millisecond
	adjust(&cfg)
	workers := metrics.NewWorkers(cfg.Pool())
	cfg.Observer = workers
	in := &instance{t: t, rep: replicate.New(cfg)}
	in.srv = NewServer(in.rep, workers)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in.url = "http://" + l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	in.stop = cancel
	in.done = make(chan error, 1)
	go in.srv.Serve(ctx, l)
	go func() { in.done <- in.rep.Run(ctx) }()
	t.Cleanup(in.close)
	return in
}

func (in *instance) close() {
	if in.stop != nil {
		in.stop()
		<-in.done
		in.stop = nil
	}
}

// report waits d, then returns the report over that interval.
func (in *instance) report(d time.Duration) Report {
	time.Sleep(d)
	in.alive()
	return in.srv.Report(d)
}

// alive fails the test if the pipeline stopped.
func (in *instance) alive() {
	select {
	case err := <-in.done:
		in.done <- err // for close
		in.t.Fatalf("replication stopped: %v", err)
	default:
	}
}

// await samples the diagnosis over 1 s windows until every cause in want
// has shown up, and fails if the backlog is gone (or 20 s pass) first, or
// if a cause in never shows up in any sample: each scenario tests the
// rules it makes fire, and the ones it must leave silent.
func (sc *scenario) await(want []string, never ...string) {
	sc.t.Helper()
	time.Sleep(500 * time.Millisecond)
	var seen [][]string
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	for i := 0; i < 40 && len(missing) > 0; i++ {
		sc.report(500 * time.Millisecond)
		r := sc.srv.Report(time.Second)
		seen = append(seen, causes(r))
		for _, n := range never {
			if has(r, n) {
				var b bytes.Buffer
				WriteText(&b, r)
				sc.t.Errorf("%s was diagnosed and must not be:\n%s", n, b.String())
				return
			}
		}
		for w := range missing {
			if has(r, w) {
				delete(missing, w)
				var b bytes.Buffer
				WriteText(&b, r)
				sc.t.Logf("paraply status when %s was diagnosed:\n%s", w, b.String())
				sc.record(w, r, []string{w}, never)
			}
		}
		if has(r, "source_idle") {
			break
		}
	}
	if len(missing) > 0 {
		sc.t.Errorf("%v never diagnosed while the backlog lasted; diagnoses: %v", want, seen)
	}
}

// record writes r, with what its diagnosis must and must not say, to
// $PARAPLY_RECORD_SNAPSHOTS/<test>-<name>.json when that is set: the
// recorded snapshots under testdata/snapshots come from there.
func (sc *scenario) record(name string, r Report, want, never []string) {
	recordSnapshot(sc.t, name, r, want, never)
}

func recordSnapshot(t *testing.T, name string, r Report, want, never []string) {
	dir := os.Getenv("PARAPLY_RECORD_SNAPSHOTS")
	if dir == "" {
		return
	}
	rec := recorded{Scenario: t.Name(), Report: r}
	for _, c := range want {
		for _, f := range r.Diagnosis {
			if f.Cause == c {
				rec.Want = append(rec.Want, f.Severity+":"+c)
			}
		}
	}
	for _, c := range never {
		for _, sev := range []string{"ok", "info", "warn"} {
			rec.Unwanted = append(rec.Unwanted, sev+":"+c)
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "-")+"-"+name+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func causes(r Report) []string {
	var out []string
	for _, f := range r.Diagnosis {
		out = append(out, f.Cause)
	}
	return out
}

func has(r Report, cause string) bool {
	for _, f := range r.Diagnosis {
		if f.Cause == cause {
			return true
		}
	}
	return false
}

// TestDiagnoseTooFewWorkers: independent transactions, one worker: ready
// work piles up while the only worker is busy, and the relay log (kept
// small) fills. Nothing waits on dependencies or commit order, and the
// replica is not keeping up.
func TestDiagnoseTooFewWorkers(t *testing.T) {
	sc := newScenario(t)
	start := sc.startPos
	sc.backlog(8000, 8, 0)
	sc.start(start, func(c *replicate.Config) {
		c.Workers, c.BatchTxns, c.Mode, c.RelayMaxBytes = 1, 1, deptrack.WritesetMode, 256<<10
	})
	sc.await([]string{"workers_busy", "relay_full"}, "hot_rows", "dependency_mode", "commit_order", "keeping_up", "source_idle", "source_disconnected")
}

// TestDiagnoseCommitOrderDependencies: a backlog from one client session
// has no group commits, so commit-order dependencies serialize it while
// eight workers wait (without target batching, which would apply such a
// chain many transactions at a time, and without commit order, under which
// the wait shows as commit-turn waits instead).
func TestDiagnoseCommitOrderDependencies(t *testing.T) {
	sc := newScenario(t)
	start := sc.startPos
	sc.backlog(8000, 1, 0)
	sc.start(start, func(c *replicate.Config) {
		c.Workers, c.BatchTxns, c.Mode, c.PreserveOrder = 8, 1, deptrack.CommitOrder, false
	})
	sc.await([]string{"dependency_mode"}, "workers_busy", "hot_rows", "keeping_up", "commit_order")
}

// TestDiagnoseHotRows: a backlog of updates of one row from four sessions,
// under writeset dependencies: each waits for the one before, eight
// workers wait, and the diagnosis names the table. Workers are not the
// bottleneck and no other mode would help.
func TestDiagnoseHotRows(t *testing.T) {
	sc := newScenario(t)
	start := sc.startPos
	if err := sc.src.Exec(context.Background(), "INSERT INTO d.t VALUES (0, 0)"); err != nil {
		t.Fatal(err)
	}
	sc.sessions(4, 2500, func(c *sql.Conn, s, i int) error {
		_, err := c.ExecContext(context.Background(), "UPDATE t SET v = v + 1 WHERE id = 0")
		return err
	})
	sc.start(start, func(c *replicate.Config) { c.Workers, c.BatchTxns = 8, 1 })
	sc.await([]string{"hot_rows"}, "workers_busy", "dependency_mode", "keeping_up", "commit_order")
	r := sc.srv.Report(time.Minute)
	if len(r.HotTables) == 0 || r.HotTables[0].Name != "`d`.`t`" {
		t.Errorf("hot tables %v, want `d`.`t` first", r.HotTables)
	}
}

// TestDiagnoseCommitOrder: with commit order preserved, each commit on the
// target takes 5 ms (binlog_commit_wait_usec: a group commit that never
// fills) and must wait for the one before: eight workers execute their
// independent transactions at once, then wait for their turn. No
// transaction depends on another, and workers are occupied but not
// working: neither another dependency mode nor more workers would help.
func TestDiagnoseCommitOrder(t *testing.T) {
	sc := newScenario(t, "--binlog-commit-wait-count=1000", "--binlog-commit-wait-usec=5000")
	start := sc.startPos
	sc.backlog(1000, 8, 0)
	sc.start(start, func(c *replicate.Config) { c.Workers, c.BatchTxns, c.PreserveOrder = 8, 1, true })
	sc.await([]string{"commit_order"}, "workers_busy", "hot_rows", "dependency_mode", "keeping_up")
}

// TestDiagnoseSlowCommits: the target delays every commit by 20 ms
// (MariaDB's binlog_commit_wait_usec, waiting for a group that never
// fills).
func TestDiagnoseSlowCommits(t *testing.T) {
	sc := newScenario(t, "--binlog-commit-wait-count=1000", "--binlog-commit-wait-usec=20000")
	start := sc.startPos
	sc.backlog(2000, 8, 0)
	sc.start(start, func(c *replicate.Config) { c.Workers, c.BatchTxns = 8, 1 })
	sc.await([]string{"slow_commits"}, "keeping_up", "hot_rows", "relay_full")
}

// TestDiagnoseBarriersIdleAndDisconnected: keyless writes and DDL are
// named over an interval that holds them, and not over one after them; a
// caught-up pipeline says the source is idle; a stopped source shows as
// disconnected (and not before).
func TestDiagnoseBarriersIdleAndDisconnected(t *testing.T) {
	sc := newScenario(t)
	start := sc.startPos
	stmts := []string{"ALTER TABLE d.t ADD COLUMN w INT NULL"}
	for i := 0; i < 20; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO d.nokey VALUES (%d, 'x')", i))
	}
	if err := sc.src.Exec(context.Background(), stmts...); err != nil {
		t.Fatal(err)
	}
	sc.start(start, func(c *replicate.Config) {})
	var r Report
	for i := 0; i < 20; i++ {
		r = sc.report(500 * time.Millisecond)
		if has(r, "source_idle") {
			break
		}
	}
	if !has(r, "source_idle") || has(r, "keeping_up") || has(r, "source_disconnected") {
		t.Fatalf("diagnosis %v, want source_idle (and neither keeping_up nor source_disconnected)", causes(r))
	}
	if has(r, "barriers") {
		t.Errorf("diagnosis %v over the last 500 ms, long after the DDL and the keyless writes: no barriers to report", causes(r))
	}
	whole := sc.srv.Report(time.Minute) // since the start, barriers included
	if !has(whole, "barriers") {
		t.Fatalf("diagnosis %v since the start, want barriers", causes(whole))
	}
	for _, f := range whole.Diagnosis {
		if f.Cause == "barriers" && (!strings.Contains(f.Advice, "`d`.`nokey`") || !strings.Contains(f.Advice, "DDL")) {
			t.Errorf("barriers finding does not name the keyless table and the DDL: %q", f.Advice)
		}
	}
	sc.record("barriers", whole, []string{"barriers"}, []string{"source_disconnected"})
	sc.record("source_idle", r, []string{"source_idle"}, []string{"keeping_up", "barriers", "source_disconnected"})
	if err := sc.src.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		r = sc.report(500 * time.Millisecond)
		if has(r, "source_disconnected") {
			break
		}
	}
	if !has(r, "source_disconnected") {
		t.Errorf("diagnosis %v after stopping the source, want source_disconnected", causes(r))
	}
	sc.record("source_disconnected", r, []string{"source_disconnected"}, []string{"source_idle", "keeping_up"})
}
