package replicate

import (
	"context"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/workload"
)

func TestZZPerf(t *testing.T) {
	if os.Getenv("PERF") == "" {
		t.Skip()
	}
	ctx := context.Background()
	p := pair{
		src: sandbox.ForTest(t, sandbox.Options{Name: "psrc", Binlog: true, Durable: true, BufferPoolMB: 256}),
		tgt: sandbox.ForTest(t, sandbox.Options{Name: "ptgt", ServerID: 2, Binlog: true, Durable: true, BufferPoolMB: 256}),
	}
	p.src.Exec(ctx, "CREATE DATABASE warmup")
	start := p.position(t)
	p.src.CreateDatabase(ctx, "sbtest")
	script := os.Getenv("SCRIPT")
	if script == "" {
		script = "oltp_write_only"
	}
	if err := workload.Sysbench(ctx, p.src, "prepare", script, 4, 20000, 1, 0); err != nil {
		t.Fatal(err)
	}
	c := p.config(t, deptrack.WritesetMode, 16)
	c.StartGTID = start
	run(t, c)
	threads, _ := strconv.Atoi(os.Getenv("THREADS"))
	if threads == 0 {
		threads = 1
	}
	events := 20000
	if err := workload.Sysbench(ctx, p.src, "run", script, 4, 20000, threads, events); err != nil {
		t.Fatal(err)
	}
	workers, _ := strconv.Atoi(os.Getenv("WORKERS"))
	batch, _ := strconv.Atoi(os.Getenv("BATCH"))
	if workers == 0 {
		workers = 16
	}
	if batch == 0 {
		batch = 16
	}
	c.Workers, c.BatchTxns = workers, batch
	c.PreserveOrder = os.Getenv("NOORDER") == ""
	f, _ := os.Create("/tmp/cpu.prof")
	pprof.StartCPUProfile(f)
	obs := &perfObs{}
	c.Observer = obs
	t0 := time.Now()
	rep := New(c)
	if err := rep.Run(ctx); err != nil {
		t.Fatal(err)
	}
	d := time.Since(t0)
	st := rep.Status().Scheduler
	t.Logf("stats: %+v avg batch %.2f", st, float64(st.Assigned)/float64(st.Works))
	t.Logf("workers: %d works, busy %.1fs, turn %.1fs, retries %d", obs.n, obs.busy.Seconds(), obs.turn.Seconds(), obs.retries)
	pprof.StopCPUProfile()
	t.Logf("%s T=%d workers=%d batch=%d order=%v: %d txns in %.2fs = %.0f tps", script, threads, workers, batch, c.PreserveOrder, events, d.Seconds(), float64(events)/d.Seconds())
}

type perfObs struct {
	mu         sync.Mutex
	n, retries int
	busy, turn time.Duration
}

func (o *perfObs) Applied(_ int, w *applier.Work, tm applier.Timing) {
	busy, turn := tm.Exec+tm.Commit, tm.Turn
	o.mu.Lock()
	o.n++
	o.busy += busy
	o.turn += turn
	o.mu.Unlock()
}
func (o *perfObs) Retried(int, *applier.Work, error) { o.mu.Lock(); o.retries++; o.mu.Unlock() }
