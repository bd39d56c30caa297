package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/faults"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/verify"
	"github.com/paraply/paraply/internal/workload"
)

// soakSettings come from the environment, so that `make soak` runs the same
// test longer:
//
//	PARAPLY_SOAK_FAULTS    faults to inject (default 13: one of each kind)
//	PARAPLY_SOAK_DURATION  stop injecting after this long (default 70s)
//	PARAPLY_SOAK_SCALE     length of outages and pauses (default 0.5)
//	PARAPLY_SOAK_SEED      random seed (default: the time)
//	PARAPLY_SOAK_TABLE     also write the result table to this file
type soakSettings struct {
	faults   int
	duration time.Duration
	scale    float64
	seed     uint64
	table    string
}

func soakFromEnv(t *testing.T) soakSettings {
	s := soakSettings{faults: 13, duration: 80 * time.Second, scale: 0.5, seed: uint64(time.Now().UnixNano()), table: os.Getenv("PARAPLY_SOAK_TABLE")}
	var err error
	if v := os.Getenv("PARAPLY_SOAK_FAULTS"); v != "" {
		if s.faults, err = strconv.Atoi(v); err != nil {
			t.Fatalf("PARAPLY_SOAK_FAULTS: %v", err)
		}
	}
	if v := os.Getenv("PARAPLY_SOAK_DURATION"); v != "" {
		if s.duration, err = time.ParseDuration(v); err != nil {
			t.Fatalf("PARAPLY_SOAK_DURATION: %v", err)
		}
	}
	if v := os.Getenv("PARAPLY_SOAK_SCALE"); v != "" {
		if s.scale, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("PARAPLY_SOAK_SCALE: %v", err)
		}
	}
	if v := os.Getenv("PARAPLY_SOAK_SEED"); v != "" {
		if s.seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("PARAPLY_SOAK_SEED: %v", err)
		}
	}
	return s
}

// TestFaultSoak runs a counter workload and sysbench oltp_write_only on a
// source while paraply replicates it through two TCP proxies, and injects
// faults at random: SIGKILL of paraply, kills and clean restarts of both
// servers, connections cut, stalled and slowed by the proxies, and a relay
// log filled to --relay-max-bytes. After each fault paraply must catch up
// on its own, with every committed counter transaction on the target
// exactly once; at the end the load stops, paraply --until-caught-up runs,
// and the target must equal the source with exact counters.
func TestFaultSoak(t *testing.T) {
	cfg := soakFromEnv(t)
	ctx := context.Background()
	// The workload's connections break on purpose; the driver need not say.
	_ = mysql.SetLogger(&mysql.NopLogger{})
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "soaksrc", Binlog: true})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "soaktgt", ServerID: 2})
	if err := src.Exec(ctx, "CREATE DATABASE warmup"); err != nil {
		t.Fatal(err)
	}
	sdb := sandboxtest.DB(t, src)
	tdb := sandboxtest.DB(t, tgt)
	var start string
	if err := sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&start); err != nil {
		t.Fatal(err)
	}
	// The schemas and sysbench's rows are replicated too.
	if err := src.Exec(ctx, faults.CounterSetup...); err != nil {
		t.Fatal(err)
	}
	if err := src.CreateDatabase(ctx, "sbtest"); err != nil {
		t.Fatal(err)
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_write_only", 2, 1000, 1, 0); err != nil {
		t.Fatal(err)
	}

	srcProxy, err := faults.NewProxy(net.JoinHostPort(src.Host, strconv.Itoa(src.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer srcProxy.Close()
	tgtProxy, err := faults.NewProxy(net.JoinHostPort(tgt.Host, strconv.Itoa(tgt.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer tgtProxy.Close()
	httpAddr := freeAddr(t)
	relay := filepath.Join(t.TempDir(), "relay")
	const relayMax = 512 << 10
	args := []string{"replicate", "--source", srcProxy.URL("root"), "--target", tgtProxy.URL("root"),
		"--workers", "8", "--relay-dir", relay, "--relay-max-bytes", strconv.Itoa(relayMax),
		"--start-gtid", start, "--heartbeat", "200ms", "--log-level", "warn", "--http", httpAddr}
	proc := faults.NewProcess(func() *exec.Cmd { return paraply(args...) })
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer proc.Kill()

	counter := faults.StartCounter(sdb, 4, 4*time.Millisecond)
	bench := faults.StartSysbench(src, 2, 1000, 2, 40)
	soak := &faults.Soak{
		Source: src, Target: tgt, SourceProxy: srcProxy, TargetProxy: tgtProxy,
		SourceDB: sdb, TargetDB: tdb, Paraply: proc, Counter: counter,
		StatusURL: "http://" + httpAddr + "/status.json", RelayDir: relay, RelayMaxBytes: relayMax,
		Options: faults.SoakOptions{Faults: cfg.faults, Duration: cfg.duration, Seed: cfg.seed, Scale: cfg.scale, Logf: t.Logf},
	}
	t.Logf("soak: up to %d faults in %v, scale %.2f, seed %d (PARAPLY_SOAK_SEED)", cfg.faults, cfg.duration, cfg.scale, cfg.seed)
	began := time.Now()
	results, soakErr := soak.Run(ctx)
	bench.Stop()
	if err := counter.Stop(); err != nil {
		t.Errorf("counter workload: %v", err)
	}
	if soakErr != nil {
		t.Fatal(soakErr)
	}
	if err := proc.Stop(30 * time.Second); err != nil {
		t.Errorf("stopping paraply with SIGTERM: %v", err)
	}

	// The load has stopped: catch up and compare.
	final := paraply(append(args, "--until-caught-up")...)
	var logs bytes.Buffer
	final.Stderr = &logs
	if err := runWithin(final, 3*time.Minute); err != nil {
		t.Fatalf("final catch-up: %v\n%s", err, logs.String())
	}
	committed := counter.Committed()
	srcTally, err := faults.Count(ctx, sdb)
	if err != nil {
		t.Fatal(err)
	}
	tgtTally, err := faults.Count(ctx, tdb)
	if err != nil {
		t.Fatal(err)
	}
	if srcTally != (faults.Tally{Sum: committed, Rows: committed, Distinct: committed}) {
		t.Errorf("the source itself holds %+v for %d committed transactions (a workload or server problem, not paraply's)", srcTally, committed)
	}
	if tgtTally != srcTally {
		t.Errorf("target counters %+v, source %+v: lost %d, doubled %d", tgtTally, srcTally, committed-tgtTally.Distinct, tgtTally.Rows-tgtTally.Distinct)
	}
	rep, err := verify.Run(ctx, verify.Options{Source: sdb, Target: tdb})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equal() {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Errorf("target differs from the source after the soak:\n%s", b.String())
	}

	for _, r := range results {
		if r.Lost != 0 || r.Doubled != 0 {
			t.Errorf("%s: %d transactions lost, %d doubled after these faults", r.Kind, r.Lost, r.Doubled)
		}
	}
	var table strings.Builder
	faults.WriteTable(&table, results)
	rounds, failed := bench.Rounds()
	n := 0
	for _, r := range results {
		n += r.Injected
	}
	summary := fmt.Sprintf("%d faults in %v (seed %d); %d counter transactions committed (%d commits of unknown outcome looked up), "+
		"%d sysbench rounds (%d cut short by a fault); final check: target sum %d, rows %d, distinct %d; verify equal: %v\n",
		n, time.Since(began).Round(time.Second), cfg.seed, committed, counter.Lookups(), rounds, failed,
		tgtTally.Sum, tgtTally.Rows, tgtTally.Distinct, rep.Equal())
	t.Logf("\n%s\n%s", table.String(), summary)
	if failed > 0 {
		t.Logf("last sysbench round cut short: %s", bench.LastError())
	}
	if cfg.table != "" {
		if err := os.WriteFile(cfg.table, []byte(table.String()+"\n"+summary), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// freeAddr returns a free loopback address for paraply's --http.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runWithin runs cmd, killing it (by its PID) if it takes longer than d.
func runWithin(cmd *exec.Cmd, d time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	timer := time.AfterFunc(d, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	return cmd.Wait()
}
