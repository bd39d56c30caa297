package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

// TestNoConflictingTransactionsAtOnce is the coordinator's safety property,
// stated as tiflow's pkg/causality tests state it: random transactions
// write a few keys out of a small key space (so most of them conflict
// with a recent one), each depends on the last earlier writer of each of
// its keys, and fake workers apply them by incrementing a plain counter
// per key, with no lock, pausing between the read and the write. If the
// coordinator ever hands two conflicting transactions to two workers at
// once, they touch the same counter from two goroutines with no
// happens-before edge between them, which `go test -race` reports (and,
// without -race, an increment is likely lost or a key's writers come out
// of order). The pause is what lets two such transactions overlap.
//
// It also states the end of a run: once in is closed, Run lets every
// admitted transaction commit, saves a final Progress that covers the
// whole stream, closes the work channels and returns nil.
func TestNoConflictingTransactionsAtOnce(t *testing.T) {
	const (
		txns = 300
		keys = 8
	)
	for _, order := range []bool{false, true} {
		for _, batch := range []int{1, 8} {
			for _, workers := range []int{1, 4} {
				for seed := uint64(1); seed <= 3; seed++ {
					name := fmt.Sprintf("order=%v/batch=%d/workers=%d/seed=%d", order, batch, workers, seed)
					t.Run(name, func(t *testing.T) {
						s := randomStream(seed, txns, keys)
						runStream(t, s, Config{Workers: workers, PreserveOrder: order, BatchTxns: batch, Window: 64})
					})
				}
			}
		}
	}
}

// stream is a random workload: writes[i] are the keys transaction i+1
// writes, and writers[k] the transactions that write key k, in stream
// order.
type stream struct {
	keys    int
	writes  [][]int
	writers [][]uint64
	// barrier[i] marks transaction i+1 as DDL: it writes every key and
	// waits for everything before it (Deps.Wait), applied in a work of its
	// own (stage.Txn.Alone).
	barrier []bool
}

// randomStream draws n transactions of one to three distinct keys out of
// keys, one in 25 of them a barrier.
func randomStream(seed uint64, n, keys int) *stream {
	rng := rand.New(rand.NewPCG(seed, 32))
	s := &stream{keys: keys, writers: make([][]uint64, keys)}
	for i := range n {
		seq := uint64(i + 1)
		var ks []int
		barrier := rng.IntN(25) == 0
		if barrier {
			for k := range keys {
				ks = append(ks, k)
			}
		} else {
			ks = rng.Perm(keys)[:1+rng.IntN(3)]
		}
		s.writes = append(s.writes, ks)
		s.barrier = append(s.barrier, barrier)
		for _, k := range ks {
			s.writers[k] = append(s.writers[k], seq)
		}
	}
	return s
}

// prepared computes the dependencies the simple way: transaction seq
// depends on the last earlier writer of each of its keys; a barrier waits
// for every transaction before it.
func (s *stream) prepared() []*stage.Prepared {
	last := make([]uint64, s.keys)
	var out []*stage.Prepared
	for i, ks := range s.writes {
		seq := uint64(i + 1)
		var d deptrack.Deps
		if s.barrier[i] {
			d = deptrack.Deps{Wait: seq - 1, Cause: deptrack.CauseDDL}
		} else {
			for _, k := range ks {
				if w := last[k]; w != 0 && !slices.Contains(d.On, w) {
					d.On = append(d.On, w)
				}
			}
			slices.Sort(d.On)
		}
		for _, k := range ks {
			last[k] = seq
		}
		txn := &stage.Txn{Seq: seq, GTID: "0-1-" + itoa(seq), Bytes: 100}
		if s.barrier[i] {
			txn.DDL = &stage.DDL{}
		}
		out = append(out, &stage.Prepared{Txn: txn, Deps: d, Resume: "0-1-" + itoa(seq)})
	}
	return out
}

// applied is what the fake workers leave: shared by them with no lock, so
// that only the coordinator's ordering keeps them apart.
type applied struct {
	counter []int      // per key: increments
	order   [][]uint64 // per key: the transactions that wrote it, as applied
	times   []int      // per transaction: how often it was applied
}

// apply applies one transaction: for each of its keys, read the counter,
// pause a few microseconds while "holding" the key, write it back, and
// record the writer.
func (a *applied) apply(s *stream, seq uint64) {
	a.times[seq-1]++
	for _, k := range s.writes[seq-1] {
		v := a.counter[k]
		if rand.IntN(2) == 0 {
			runtime.Gosched()
		} else {
			time.Sleep(time.Duration(rand.IntN(20)) * time.Microsecond)
		}
		a.counter[k] = v + 1
		a.order[k] = append(a.order[k], seq)
	}
}

// runStream runs the coordinator over the stream with fake workers and
// checks what they left.
func runStream(t *testing.T, s *stream, cfg Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cfg.Start = "0-1-0"
	cfg.ProgressEvery = time.Millisecond
	seq := stage.NewSequencer(0)
	c := NewCoordinator(cfg, seq)
	a := &applied{counter: make([]int, s.keys), order: make([][]uint64, s.keys), times: make([]int, len(s.writes))}

	in := make(chan *stage.Prepared, 16)
	work := make([]chan *stage.Work, cfg.Workers)
	for i := range work {
		work[i] = make(chan *stage.Work)
	}
	done := make(chan *stage.Work)
	var wg sync.WaitGroup
	rows := make([][]string, cfg.Workers) // per worker: the checkpoint rows its works wrote
	for i := range work {
		wg.Go(func() { rows[i] = fakeWorker(ctx, i, work[i], done, seq, cfg.PreserveOrder, s, a) })
	}
	go func() {
		defer close(in)
		for _, p := range s.prepared() {
			select {
			case in <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	var saves []Progress // written by Run's goroutine only, read after it returned
	errc := make(chan error, 1)
	go func() {
		errc <- c.Run(ctx, in, work, done, func(p Progress) error { saves = append(saves, p); return nil }, nil)
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		t.Fatalf("Run did not return after its input closed: %v", ctx.Err())
	}
	if err != nil {
		t.Fatalf("Run after its input closed: %v, want nil", err)
	}
	// The workers end when Run closes their channels.
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Error("the workers did not end after Run returned: are the work channels closed, or is committed work waiting on done?")
		cancel()
		<-ended
	}

	var never, twice []uint64
	for i, n := range a.times {
		switch {
		case n == 0:
			never = append(never, uint64(i+1))
		case n > 1:
			twice = append(twice, uint64(i+1))
		}
	}
	if len(never) > 0 || len(twice) > 0 {
		t.Fatalf("%d transactions never applied (from %s), %d applied more than once (from %s): want each once", len(never), at(never, 0), len(twice), at(twice, 0))
	}
	for k := range s.keys {
		if a.counter[k] != len(s.writers[k]) {
			t.Errorf("key %d: counter %d, want %d writers (an increment lost to a concurrent writer)", k, a.counter[k], len(s.writers[k]))
		}
		if i := firstDifference(a.order[k], s.writers[k]); i >= 0 {
			t.Errorf("key %d: writer %d of %d is transaction %s, want %s (the stream's order)", k, i+1, len(s.writers[k]), at(a.order[k], i), at(s.writers[k], i))
		}
	}
	n := uint64(len(s.writes))
	if len(saves) == 0 {
		t.Fatal("no progress saved")
	}
	final := saves[len(saves)-1]
	if final.RelayIndex != n || final.Position != "0-1-"+itoa(n) || final.Reached != final.Position {
		t.Errorf("final progress %+v, want relay index %d at 0-1-%d", final, n, n)
	}
	if got := seq.Prefix(); got != n {
		t.Errorf("sequencer prefix %d after the run, want %d", got, n)
	}
	// Every checkpoint row a work wrote (keyed by its newest GTID) is
	// covered by one save, so that it can go.
	var written, covered []string
	for _, r := range rows {
		written = append(written, r...)
	}
	for _, p := range saves {
		covered = append(covered, p.Covered...)
	}
	slices.Sort(written)
	slices.Sort(covered)
	if !slices.Equal(written, covered) {
		t.Errorf("the saves cover %d checkpoint rows, want the %d the works wrote, each once", len(covered), len(written))
	}
}

// fakeWorker applies the work handed to it on ch, as the applier's worker
// does: with commit order preserved, the transactions not marked AfterTurn
// first, then, once every transaction before the work has committed, the
// others; it then reports the work committed on done, under its index. It
// does not tell the sequencer: the coordinator does. It returns the
// checkpoint rows it wrote, one per work.
func fakeWorker(ctx context.Context, i int, ch <-chan *stage.Work, done chan<- *stage.Work, seq *stage.Sequencer, order bool, s *stream, a *applied) (rows []string) {
	for w := range ch {
		for j, txn := range w.Txns {
			if w.AfterTurn == nil || !w.AfterTurn[j] {
				a.apply(s, txn.Seq)
			}
		}
		if order {
			if err := seq.WaitTurn(ctx, w.First()); err != nil {
				return rows
			}
		}
		for j, txn := range w.Txns {
			if w.AfterTurn != nil && w.AfterTurn[j] {
				a.apply(s, txn.Seq)
			}
		}
		w.Worker = i
		rows = append(rows, w.Last().GTID)
		select {
		case done <- w:
		case <-ctx.Done():
			return rows
		}
	}
	return rows
}

// firstDifference is the first index where a and b differ, -1 if none.
func firstDifference(a, b []uint64) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

// at prints s[i], or "none".
func at(s []uint64, i int) string {
	if i < len(s) {
		return itoa(s[i])
	}
	return "none"
}
