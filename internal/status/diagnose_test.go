package status

import (
	"bytes"
	"context"
	"fmt"
	"net"
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
	srv      *Server
	stop     context.CancelFunc
	done     chan error
	url      string
	startPos string // before the schema was created
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

// start replicates from start with cfg adjusted by adjust.
func (sc *scenario) start(start string, adjust func(*replicate.Config)) {
	t := sc.t
	cfg := replicate.Default()
	var err error
	if cfg.Source, err = config.ParseEndpoint(sc.src.URL()); err != nil {
		t.Fatal(err)
	}
	if cfg.Target, err = config.ParseEndpoint(sc.tgt.URL()); err != nil {
		t.Fatal(err)
	}
	cfg.StartGTID, cfg.RelayDir, cfg.Heartbeat = start, filepath.Join(t.TempDir(), "relay"), 200*time.Millisecond
	adjust(&cfg)
	workers := metrics.NewWorkers(cfg.Workers)
	cfg.Observer = workers
	rep := replicate.New(cfg)
	sc.srv = NewServer(rep, workers)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sc.url = "http://" + l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	sc.stop = cancel
	sc.done = make(chan error, 1)
	go sc.srv.Serve(ctx, l)
	go func() { sc.done <- rep.Run(ctx) }()
	t.Cleanup(sc.close)
}

func (sc *scenario) close() {
	if sc.stop != nil {
		sc.stop()
		<-sc.done
		sc.stop = nil
	}
}

// report waits d, then returns the report over that interval.
func (sc *scenario) report(d time.Duration) Report {
	time.Sleep(d)
	select {
	case err := <-sc.done:
		sc.done <- err // for close
		sc.t.Fatalf("replication stopped: %v", err)
	default:
	}
	return sc.srv.Report(d)
}

// await samples the diagnosis over 1 s windows until cause shows up, and
// fails if the backlog is gone (or 20 s pass) first.
func (sc *scenario) await(cause string) {
	sc.t.Helper()
	time.Sleep(500 * time.Millisecond)
	var seen [][]string
	for i := 0; i < 40; i++ {
		sc.report(500 * time.Millisecond)
		r := sc.srv.Report(time.Second)
		if has(r, cause) {
			var b bytes.Buffer
			WriteText(&b, r)
			sc.t.Logf("paraply status when %s was diagnosed:\n%s", cause, b.String())
			return
		}
		seen = append(seen, causes(r))
		if has(r, "source_idle") {
			break
		}
	}
	sc.t.Errorf("%s was never diagnosed while the backlog lasted; diagnoses: %v", cause, seen)
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
// work piles up while the only worker is busy.
func TestDiagnoseTooFewWorkers(t *testing.T) {
	sc := newScenario(t)
	start := sc.startPos
	sc.backlog(8000, 8, 0)
	sc.start(start, func(c *replicate.Config) { c.Workers, c.BatchTxns, c.Mode = 1, 1, deptrack.WritesetMode })
	sc.await("workers_busy")
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
	sc.await("dependency_mode")
}

// TestDiagnoseSlowCommits: the target delays every commit by 20 ms
// (MariaDB's binlog_commit_wait_usec, waiting for a group that never
// fills).
func TestDiagnoseSlowCommits(t *testing.T) {
	sc := newScenario(t, "--binlog-commit-wait-count=1000", "--binlog-commit-wait-usec=20000")
	start := sc.startPos
	sc.backlog(2000, 8, 0)
	sc.start(start, func(c *replicate.Config) { c.Workers, c.BatchTxns = 8, 1 })
	sc.await("slow_commits")
}

// TestDiagnoseBarriersIdleAndDisconnected: keyless writes and DDL are
// named; a caught-up pipeline says the source is idle; a stopped source
// shows as disconnected.
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
	if !has(r, "source_idle") || !has(r, "barriers") {
		t.Fatalf("diagnosis %v, want source_idle and barriers", causes(r))
	}
	for _, f := range r.Diagnosis {
		if f.Cause == "barriers" && (!strings.Contains(f.Advice, "`d`.`nokey`") || !strings.Contains(f.Advice, "DDL")) {
			t.Errorf("barriers finding does not name the keyless table and the DDL: %q", f.Advice)
		}
	}
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
}
