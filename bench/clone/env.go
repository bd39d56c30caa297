package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// env is the benchmark's world: the source with its data and its write
// load, the target, and the probe timing the source's writes.
type env struct {
	cfg      config
	src, tgt *sandbox.Server
	sdb, tdb *sql.DB
	work     string // the dump's and the relay log's directory
	load     *exec.Cmd
	probe    *probe
	// lastRSS is the peak RSS of the paraply process run last, MiB;
	// toolsCPU the CPU seconds of the tools a way ran.
	lastRSS, toolsCPU float64
}

// setUp starts the servers and prepares the source. It returns what it
// started even with an error, to tear down.
func setUp(ctx context.Context, cfg config) (*env, error) {
	e := &env{cfg: cfg}
	var err error
	if e.work, err = os.MkdirTemp(cfg.baseDir, "paraply-clonebench-"); err != nil {
		return nil, err
	}
	// The source need not be durable (it is prepared faster so); the target
	// is, as a production target is.
	if e.src, err = sandbox.Start(ctx, sandbox.Options{Name: "cbsrc", BaseDir: cfg.baseDir, Binlog: true, BufferPoolMB: cfg.bufferPoolMB}); err != nil {
		return e, err
	}
	if e.tgt, err = sandbox.Start(ctx, sandbox.Options{Name: "cbtgt", BaseDir: cfg.baseDir, Binlog: true, Durable: true, ServerID: 2, BufferPoolMB: cfg.bufferPoolMB}); err != nil {
		return e, err
	}
	if e.sdb, err = e.src.DB(""); err != nil {
		return e, err
	}
	if e.tdb, err = e.tgt.DB(""); err != nil {
		return e, err
	}
	if err := e.src.CreateDatabase(ctx, "sbtest"); err != nil {
		return e, err
	}
	logf("sysbench prepare: %d tables of %d rows", cfg.tables, cfg.rows)
	if out, err := e.sysbench(ctx, "--threads="+strconv.Itoa(cfg.tables), "prepare").CombinedOutput(); err != nil {
		return e, fmt.Errorf("sysbench prepare: %w\n%s", err, out)
	}
	if e.probe, err = startProbe(ctx, e.sdb); err != nil {
		return e, err
	}
	return e, e.startLoad(ctx)
}

// sysbench is a sysbench oltp_write_only command on the source's tables.
func (e *env) sysbench(ctx context.Context, args ...string) *exec.Cmd {
	return e.src.Sysbench(ctx, "oltp_write_only", append([]string{"--tables=" + strconv.Itoa(e.cfg.tables),
		"--table-size=" + strconv.Itoa(e.cfg.rows), "--rand-seed=42"}, args...)...)
}

// startLoad starts the light write load, until ctx ends or stopLoad.
func (e *env) startLoad(ctx context.Context) error {
	e.load = e.sysbench(ctx, "--threads=1", "--rate="+strconv.Itoa(e.cfg.rate), "--time=0", "--events=0", "--report-interval=0", "run")
	return e.load.Start()
}

// stopLoad stops the write load (it is this program's child).
func (e *env) stopLoad() {
	if e.load != nil && e.load.Process != nil {
		_ = e.load.Process.Kill()
		_ = e.load.Wait() // killed: its error says so
	}
	e.load = nil
}

func (e *env) tearDown() {
	e.stopLoad()
	if e.probe != nil {
		e.probe.stop()
	}
	for _, db := range []*sql.DB{e.sdb, e.tdb} {
		if db != nil {
			db.Close()
		}
	}
	for _, s := range []*sandbox.Server{e.src, e.tgt} {
		if s != nil {
			_ = s.Remove()
		}
	}
	_ = os.RemoveAll(e.work)
}

// dataMB is the size of the source's tables, data and indexes.
func (e *env) dataMB(ctx context.Context) float64 {
	var mb float64
	_ = e.sdb.QueryRowContext(ctx, "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) / 1048576 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest'").Scan(&mb)
	return mb
}

// reset empties the target for the next way: its copy of sbtest, the
// stream's bookkeeping, its binlogs, and the relay log.
func (e *env) reset(ctx context.Context) error {
	for _, q := range []string{"DROP DATABASE IF EXISTS sbtest", "DROP DATABASE IF EXISTS paraply", "RESET MASTER"} {
		if _, err := e.tdb.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("target: %s: %w", q, err)
		}
	}
	return os.RemoveAll(filepath.Join(e.work, "relay"))
}

// probe writes a row on the source every 20 ms and keeps the longest a
// write took: how long the source made its writers wait (a lock).
type probe struct {
	mu      sync.Mutex
	longest time.Duration
	cancel  context.CancelFunc
	done    chan struct{}
}

func startProbe(ctx context.Context, db *sql.DB) (*probe, error) {
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS benchprobe", "CREATE TABLE IF NOT EXISTS benchprobe.p (id BIGINT AUTO_INCREMENT PRIMARY KEY, at DATETIME(6))"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &probe{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			began := time.Now()
			if _, err := db.ExecContext(ctx, "INSERT INTO benchprobe.p (at) VALUES (NOW(6))"); err != nil {
				continue
			}
			d := time.Since(began)
			p.mu.Lock()
			p.longest = max(p.longest, d)
			p.mu.Unlock()
		}
	}()
	return p, nil
}

// take returns the longest write since the last take, and starts again.
func (p *probe) take() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.longest
	p.longest = 0
	return d
}

func (p *probe) stop() {
	p.cancel()
	<-p.done
}
