package scheduler

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

func TestClassifyWait(t *testing.T) {
	for _, c := range []struct {
		name                   string
		next                   bool
		idle                   int
		holding, blocked, full bool
		want                   waitKind
	}{
		{"work ready, a worker free", true, 1, false, true, false, waitNone},
		{"work ready, every worker busy", true, 0, false, true, false, waitBusy},
		{"letting a batch fill", false, 2, true, true, false, waitNone},
		{"a free worker, the next transaction blocked", false, 2, false, true, false, waitDep},
		{"blocked in a full window, a worker free", false, 2, false, true, true, waitDep},
		{"a free worker, everything admitted is running", false, 2, false, false, false, waitSource},
		{"every worker busy, nothing ready, window full", false, 0, false, true, true, waitFull},
		{"every worker busy, nothing left to hand out", false, 0, false, false, false, waitNone},
	} {
		if got := classifyWait(c.next, c.idle, c.holding, c.blocked, c.full); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// simulate runs a Coordinator over txns (fed by feed, which closes in) with
// a pool of workers that each take hold per work, and returns its last
// statistics.
func simulate(t *testing.T, cfg Config, hold time.Duration, feed func(in chan<- *stage.Prepared)) Stats {
	t.Helper()
	s, _, _ := simulatePeak(t, cfg, hold, feed)
	return s
}

// simulatePeak is simulate, and also says how many works the pool held at
// once at most, and how many of its workers ever had work.
func simulatePeak(t *testing.T, cfg Config, hold time.Duration, feed func(in chan<- *stage.Prepared)) (Stats, int, int) {
	t.Helper()
	var running, peak atomic.Int64
	var used sync.Map
	cfg.ProgressEvery = 5 * time.Millisecond
	seq := stage.NewSequencer(0)
	c := NewCoordinator(cfg, seq)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := make(chan *stage.Prepared, 256)
	work := make([]chan *stage.Work, cfg.Workers)
	for i := range work {
		work[i] = make(chan *stage.Work)
	}
	done := make(chan *stage.Work, cfg.Workers)
	var wg sync.WaitGroup
	for i := 0; i < cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case w, ok := <-work[i]:
					if !ok {
						return
					}
					n := running.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					time.Sleep(hold)
					running.Add(-1)
					w.Worker = i
					used.Store(i, true)
					done <- w
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	var last Stats
	observe := func(s Stats) { mu.Lock(); last = s; mu.Unlock() }
	errc := make(chan error, 1)
	go func() {
		errc <- c.Run(ctx, in, work, done, func(Progress) error { return nil }, observe)
	}()
	feed(in)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		s := last
		mu.Unlock()
		if s.Committed == s.Assigned && s.Pending == 0 && s.Assigned > 0 && seq.Prefix() > 0 {
			time.Sleep(20 * time.Millisecond) // one more tick: the wait after the last commit
			cancel()
			<-errc
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			n := 0
			used.Range(func(any, any) bool { n++; return true })
			return last, int(peak.Load()), n
		}
		if time.Now().After(deadline) {
			t.Fatalf("the simulated pool did not finish: %+v", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func prepared(seq uint64, d deptrack.Deps) *stage.Prepared {
	it := txn(seq)
	it.Txn = &binlog.Txn{Seq: seq}
	return &stage.Prepared{Txn: it, Deps: d}
}

// TestKeepingUpIsNotADependencyWait: independent transactions arriving
// slower than four workers apply them. Workers are free and transactions
// are in flight on other workers, but nothing waits for a predecessor: the
// coordinator waits for the source, never on dependencies (issue 16: such
// a replica was diagnosed with hot rows).
func TestKeepingUpIsNotADependencyWait(t *testing.T) {
	s := simulate(t, Config{Workers: 4, PreserveOrder: true, BatchTxns: 64}, 4*time.Millisecond, func(in chan<- *stage.Prepared) {
		for i := uint64(1); i <= 60; i++ {
			in <- prepared(i, deptrack.Deps{})
			time.Sleep(time.Millisecond)
		}
	})
	if s.DepWaits != 0 || s.DepWaitTime != 0 {
		t.Errorf("dependency waits %d (%v) on independent transactions", s.DepWaits, s.DepWaitTime)
	}
	if s.SourceWaits == 0 || s.SourceWaitTime < 20*time.Millisecond {
		t.Errorf("source waits %d (%v), want the time between arrivals", s.SourceWaits, s.SourceWaitTime)
	}
}

// TestChainIsADependencyWait: every transaction depends on the one before
// (one hot row) and all are admitted at once: three workers stay free while
// the next transaction waits for its predecessor.
func TestChainIsADependencyWait(t *testing.T) {
	const n = 40
	hold := 3 * time.Millisecond
	s := simulate(t, Config{Workers: 4, PreserveOrder: true, BatchTxns: 1}, hold, func(in chan<- *stage.Prepared) {
		in <- prepared(1, deptrack.Deps{})
		for i := uint64(2); i <= n; i++ {
			in <- prepared(i, deptrack.Deps{On: []uint64{i - 1}})
		}
	})
	if s.DepWaitTime < n*hold/2 {
		t.Errorf("dependency wait time %v, want most of the chain's %v", s.DepWaitTime, n*hold)
	}
	if s.BusyWaits != 0 {
		t.Errorf("busy waits %d: a chain never has work ready for a busy pool", s.BusyWaits)
	}
}

// TestBarrierIsNotARowWait: DDL alternates with writes that follow it, so
// every wait is for a DDL in flight (the DDL itself waiting for everything
// before it, or a write waiting for the DDL before it): the coordinator
// counts barrier waits, and no dependency wait that the status page would
// take for hot rows (CI saw a CREATE TABLE's wait diagnosed as hot rows).
func TestBarrierIsNotARowWait(t *testing.T) {
	const n = 40
	hold := 3 * time.Millisecond
	s := simulate(t, Config{Workers: 4, PreserveOrder: true, BatchTxns: 1}, hold, func(in chan<- *stage.Prepared) {
		for i := uint64(1); i <= n; i++ {
			d := deptrack.Deps{Wait: i - 1}
			if i%2 == 1 {
				d.Cause = deptrack.CauseDDL
			}
			in <- prepared(i, d)
		}
	})
	if s.DepWaits != 0 || s.DepWaitTime != 0 {
		t.Errorf("dependency waits %d (%v) behind DDL only", s.DepWaits, s.DepWaitTime)
	}
	if s.BarrierWaitTime < n*hold/2 {
		t.Errorf("barrier wait time %v (%d waits), want most of the chain's %v", s.BarrierWaitTime, s.BarrierWaits, n*hold)
	}
}
