package replicate

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/verify"
	"github.com/paraply/paraply/internal/workload"
)

// pair is a sandboxed source and target.
type pair struct {
	src, tgt *sandbox.Server
}

func newPair(t *testing.T) pair {
	t.Helper()
	p := pair{
		src: sandboxtest.ForTest(t, sandbox.Options{Name: "rsrc", Binlog: true}),
		tgt: sandboxtest.ForTest(t, sandbox.Options{Name: "rtgt", ServerID: 2}),
	}
	// One transaction so that the source's position is never empty.
	if err := p.src.Exec(context.Background(), "CREATE DATABASE IF NOT EXISTS warmup"); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p pair) position(t *testing.T) string {
	t.Helper()
	db, err := p.src.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return pos
}

func endpoint(t *testing.T, s *sandbox.Server) config.Endpoint {
	t.Helper()
	ep, err := config.ParseEndpoint(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func (p pair) config(t *testing.T, mode deptrack.Mode, workers int) Config {
	c := Default()
	c.Source, c.Target = endpoint(t, p.src), endpoint(t, p.tgt)
	c.Mode, c.Workers = mode, workers
	c.RelayDir = filepath.Join(t.TempDir(), "relay")
	c.UntilCaughtUp = true
	c.Heartbeat = 200 * time.Millisecond
	return c
}

// equal compares every user table of source and target.
func (p pair) equal(t *testing.T) {
	t.Helper()
	sdb, err := p.src.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	tdb, err := p.tgt.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer tdb.Close()
	rep, err := verify.Run(context.Background(), verify.Options{Source: sdb, Target: tdb})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equal() {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Fatalf("target differs from source:\n%s", b.String())
	}
}

func run(t *testing.T, c Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Run(ctx, c); err != nil {
		t.Fatalf("replicate: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("replicate did not finish within 2 minutes") // Run returns nil when its context ends
	}
}

// TestUntilCaughtUpWithNothingNew: on a target without a checkpoint and a
// source that writes nothing, --until-caught-up exits at once (it used to
// wait for progress that never came), and it leaves the start recorded:
// what the source writes next is applied by the next run.
func TestUntilCaughtUpWithNothingNew(t *testing.T) {
	p := newPair(t)
	c := p.config(t, deptrack.WritesetMode, 4)
	run(t, c)
	if err := p.src.Exec(context.Background(), "CREATE DATABASE later", "CREATE TABLE later.t (id INT PRIMARY KEY)", "INSERT INTO later.t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	run(t, c)
	tdb, err := p.tgt.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer tdb.Close()
	var n int
	if err := tdb.QueryRow("SELECT COUNT(*) FROM later.t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the second run did not apply what the source wrote after the first: %d rows, %v", n, err)
	}
}

func TestScriptedWorkloads(t *testing.T) {
	type variant struct {
		mode      deptrack.Mode
		workers   int
		unordered bool
		delay     time.Duration
	}
	// Every mode with 8 workers, and one worker for the default mode
	// (any mode with one worker applies as serial does, and serial with 8
	// applies one transaction at a time).
	var variants []variant
	for _, mode := range deptrack.Modes {
		variants = append(variants, variant{mode, 8, false, 0})
	}
	variants = append(variants, variant{deptrack.WritesetMode, 1, false, 0})
	variants = append(variants, variant{deptrack.WritesetMode, 8, true, 0}, variant{deptrack.CommitOrder, 4, true, 0},
		variant{deptrack.WritesetMode, 4, false, 20 * time.Millisecond})
	for _, v := range variants {
		mode, workers := v.mode, v.workers
		name := mode.String() + "/" + itoa(workers)
		if v.unordered {
			name += "/unordered"
		}
		if v.delay > 0 {
			name += "/delay"
		}
		t.Run(name, func(t *testing.T) {
			p := newPair(t)
			c := p.config(t, mode, workers)
			c.PreserveOrder, c.BatchDelay = !v.unordered, v.delay
			c.StartGTID = p.position(t)
			db, err := p.src.DB("")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, w := range workload.All() {
				if err := p.src.Exec(context.Background(), w.Setup...); err != nil {
					t.Fatalf("%s setup: %v", w.Name, err)
				}
				if err := w.Run(context.Background(), db); err != nil {
					t.Fatalf("%s: %v", w.Name, err)
				}
			}
			if err := p.src.CreateDatabase(context.Background(), "sbtest"); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"prepare", "run"} {
				if err := workload.Sysbench(context.Background(), p.src, cmd, "oltp_read_write", 2, 1000, 4, 1000); err != nil {
					t.Fatal(err)
				}
			}
			run(t, c)
			p.equal(t)
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
