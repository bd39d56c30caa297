package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

func txn(seq uint64) *stage.Txn {
	return &stage.Txn{Seq: seq, GTID: "0-1-" + itoa(seq), Bytes: 100}
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func last(w *stage.Work) uint64 { return w.Txns[len(w.Txns)-1].Seq }

func seqs(w *stage.Work) []uint64 {
	if w == nil {
		return nil
	}
	var out []uint64
	for _, t := range w.Txns {
		out = append(out, t.Seq)
	}
	return out
}

// TestLookAheadPassesBlocked: a ready transaction goes before a blocked
// lower one.
func TestLookAheadPassesBlocked(t *testing.T) {
	c := newCore(0, 100, 1<<20)
	c.admit(txn(1), deptrack.Deps{})
	c.admit(txn(2), deptrack.Deps{On: []uint64{1}})
	c.admit(txn(3), deptrack.Deps{})
	if got := seqs(c.next(1, 1<<20, false)); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("first work %v, want [1]", got)
	}
	if got := seqs(c.next(1, 1<<20, false)); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("second work %v, want [3] (2 is blocked by 1)", got)
	}
	if w := c.next(1, 1<<20, false); w != nil {
		t.Fatalf("nothing should be ready, got %v", seqs(w))
	}
	c.commit(1, 1)
	if got := seqs(c.next(1, 1<<20, false)); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("after 1 commits: %v, want [2]", got)
	}
}

// TestBatchKeepsInternalDependencies: a chain on one hot row goes into one
// work, in order; a transaction depending on something after the work
// ends it.
func TestBatchKeepsInternalDependencies(t *testing.T) {
	c := newCore(0, 100, 1<<20)
	c.admit(txn(1), deptrack.Deps{})
	c.admit(txn(2), deptrack.Deps{On: []uint64{1}})
	c.admit(txn(3), deptrack.Deps{Wait: 2})
	c.admit(txn(4), deptrack.Deps{On: []uint64{9}}) // 9 is not in the window yet
	if got := seqs(c.next(16, 1<<20, false)); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("batch %v, want [1 2 3]", got)
	}
}

// TestRunPastInFlight: work from the head goes on past transactions that
// wait for work in flight, marking them AfterTurn, with those that wait
// for them, and not those that wait for neither; a transaction that waits
// for one after the run still ends it; and work that does not start at
// the head stops at the first wait.
func TestRunPastInFlight(t *testing.T) {
	c := newCore(0, 100, 1<<20)
	c.admit(txn(1), deptrack.Deps{})
	c.admit(txn(2), deptrack.Deps{})
	c.admit(txn(3), deptrack.Deps{})
	c.admit(txn(4), deptrack.Deps{On: []uint64{1}})
	c.admit(txn(5), deptrack.Deps{Wait: 3}) // 1 and 2 too
	c.admit(txn(6), deptrack.Deps{On: []uint64{3, 4}})
	c.admit(txn(7), deptrack.Deps{On: []uint64{3}})
	c.admit(txn(8), deptrack.Deps{On: []uint64{9}}) // 9 is not in the window yet
	first := c.next(2, 1<<20, true)
	if got := seqs(first); !slices.Equal(got, []uint64{1, 2}) || first.AfterTurn != nil {
		t.Fatalf("first work %v (AfterTurn %v), want [1 2]", got, first.AfterTurn)
	}
	w := c.next(16, 1<<20, true)
	if got := seqs(w); !slices.Equal(got, []uint64{3, 4, 5, 6, 7}) || !slices.Equal(w.AfterTurn, []bool{false, true, true, true, false}) {
		t.Fatalf("second work %v (AfterTurn %v), want [3 4 5 6 7] with 4, 5 (waiting for 1 and 2, in flight) and 6 (for 4) after the turn", got, w.AfterTurn)
	}

	c = newCore(0, 100, 1<<20)
	c.admit(txn(1), deptrack.Deps{})
	c.admit(txn(2), deptrack.Deps{On: []uint64{1}})
	c.admit(txn(3), deptrack.Deps{})
	c.admit(txn(4), deptrack.Deps{On: []uint64{1}})
	c.next(1, 1<<20, false) // 1, in flight; 2, the head, waits for it
	if w := c.next(16, 1<<20, false); !slices.Equal(seqs(w), []uint64{3}) || w.AfterTurn != nil {
		t.Fatalf("work past the head %v (AfterTurn %v), want [3]: 2 is not handed out, so 4 may not wait for a turn", seqs(w), w.AfterTurn)
	}
}

// TestHeadReserve: with onlyHead, only work starting at the lowest
// undispatched transaction is formed.
func TestHeadReserve(t *testing.T) {
	c := newCore(0, 100, 1<<20)
	c.admit(txn(1), deptrack.Deps{})
	c.admit(txn(2), deptrack.Deps{On: []uint64{1}})
	c.admit(txn(3), deptrack.Deps{})
	w1 := c.next(1, 1<<20, false) // 1
	if c.head() != 2 {
		t.Fatalf("head %d, want 2", c.head())
	}
	if w := c.next(1, 1<<20, true); w != nil {
		t.Fatalf("onlyHead formed %v while the head (2) is blocked", seqs(w))
	}
	w3 := c.next(1, 1<<20, false)
	if !slices.Equal(seqs(w3), []uint64{3}) {
		t.Fatalf("got %v", seqs(w3))
	}
	c.undo(w3)
	if got := seqs(c.next(1, 1<<20, false)); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("after undo: %v, want [3] again", got)
	}
	c.commit(w1.First(), last(w1))
	if got := seqs(c.next(1, 1<<20, true)); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("head work %v, want [2]", got)
	}
}

// TestWindowBounds: full() by count and by bytes.
func TestWindowBounds(t *testing.T) {
	c := newCore(0, 3, 1<<20)
	for s := uint64(1); s <= 3; s++ {
		c.admit(txn(s), deptrack.Deps{})
	}
	if !c.full() {
		t.Fatal("window of 3 not full with 3")
	}
	c.commit(1, 1)
	if c.full() {
		t.Fatal("full after a commit")
	}
	b := newCore(0, 100, 250)
	b.admit(txn(1), deptrack.Deps{})
	b.admit(txn(2), deptrack.Deps{})
	if b.full() {
		t.Fatal("200 bytes of 250 is not full")
	}
	b.admit(txn(3), deptrack.Deps{})
	if !b.full() {
		t.Fatal("300 bytes of 250 is full")
	}
}

// TestRandomScheduleRespectsDeps simulates workers completing work in
// random order (consecutive work and, every other round, unordered work)
// and checks that no transaction is ever dispatched before
// its predecessors committed or travel in the same work before it, and
// that everything is eventually dispatched (no deadlock).
func TestRandomScheduleRespectsDeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pastTurn := 0 // works formed with a TurnAt
	defer func() {
		if pastTurn == 0 {
			t.Error("no work went past a transaction waiting for work in flight")
		}
	}()
	for round := 0; round < 200; round++ {
		n := uint64(60)
		deps := make([]deptrack.Deps, n+1)
		for s := uint64(1); s <= n; s++ {
			var d deptrack.Deps
			if rng.IntN(10) == 0 && s > 1 {
				d.Wait = uint64(rng.IntN(int(s - 1)))
			}
			for k := 0; k < rng.IntN(3); k++ {
				if o := uint64(rng.IntN(int(s))); o > d.Wait {
					d.On = append(d.On, o)
				}
			}
			slices.Sort(d.On)
			d.On = slices.Compact(d.On)
			deps[s] = d
		}
		c := newCore(0, 16, 1<<20)
		committed := map[uint64]bool{}
		var inflight []*stage.Work
		next := uint64(1)
		for steps := 0; len(committed) < int(n); steps++ {
			if steps > 100000 {
				t.Fatalf("round %d: no progress (deadlock): committed %d of %d", round, len(committed), n)
			}
			for next <= n && !c.full() {
				c.admit(txn(next), deps[next])
				next++
			}
			var w *stage.Work
			if unordered := round%2 == 1; unordered {
				w = c.nextUnordered(1+rng.IntN(6), 1<<20, 12)
			} else {
				w = c.next(1+rng.IntN(4), 1<<20, false)
			}
			if w != nil {
				if w.AfterTurn != nil {
					pastTurn++
				}
				for i, tx := range w.Txns {
					d := deps[tx.Seq]
					// The worker applies the transactions not marked
					// AfterTurn first, then, once everything before the
					// work committed, the others: each waits only for
					// what is applied before it.
					before := func(p uint64) bool {
						j := slices.Index(seqs(w), p)
						if j < 0 || j >= i {
							return false
						}
						return w.AfterTurn == nil || !w.AfterTurn[j] || w.AfterTurn[i]
					}
					ok := func(p uint64) bool { return p == 0 || committed[p] || before(p) }
					if w.AfterTurn != nil && w.AfterTurn[i] {
						ok = func(p uint64) bool { return p < w.First() || before(p) }
					}
					for p := uint64(1); p <= d.Wait; p++ {
						if !ok(p) {
							t.Fatalf("round %d: %d dispatched before %d (Wait %d)", round, tx.Seq, p, d.Wait)
						}
					}
					for _, p := range d.On {
						if !ok(p) {
							t.Fatalf("round %d: %d dispatched before %d (On)", round, tx.Seq, p)
						}
					}
				}
				inflight = append(inflight, w)
				continue
			}
			if len(inflight) == 0 {
				t.Fatalf("round %d: nothing ready and nothing in flight with %d of %d committed", round, len(committed), n)
			}
			// A work with TurnAt commits after everything before it.
			var can []int
			for i, w := range inflight {
				if w.AfterTurn == nil || c.prefix+1 >= w.First() {
					can = append(can, i)
				}
			}
			if len(can) == 0 {
				t.Fatalf("round %d: every work in flight waits for its turn", round)
			}
			i := can[rng.IntN(len(can))]
			w = inflight[i]
			inflight = append(inflight[:i], inflight[i+1:]...)
			for _, tx := range w.Txns {
				committed[tx.Seq] = true
				c.commit(tx.Seq, tx.Seq)
			}
		}
	}
}

// TestUnorderedWorkSkipsBlocked: unordered work gathers ready transactions
// past a blocked one, and a chain whose head is in the work.
func TestUnorderedWorkSkipsBlocked(t *testing.T) {
	c := newCore(0, 100, 1<<20)
	c.admit(txn(1), deptrack.Deps{})
	c.admit(txn(2), deptrack.Deps{On: []uint64{9}}) // blocked by a transaction not yet admitted
	c.admit(txn(3), deptrack.Deps{On: []uint64{1}}) // chained to 1, which is in the work
	c.admit(txn(4), deptrack.Deps{})
	if got := seqs(c.nextUnordered(16, 1<<20, 64)); !slices.Equal(got, []uint64{1, 3, 4}) {
		t.Fatalf("unordered work %v, want [1 3 4]", got)
	}
}

// TestBlockedHeadStartsWork: with batches and commit order, work starts
// at a head that waits for work in flight: the head and what waits for it
// are marked AfterTurn, the rest is applied at once. Without batches, or
// at a head that goes alone, nothing is formed until the head is ready.
func TestBlockedHeadStartsWork(t *testing.T) {
	c := newCore(0, 100, 1<<20)
	c.admit(txn(1), deptrack.Deps{})
	c.admit(txn(2), deptrack.Deps{On: []uint64{1}})
	c.admit(txn(3), deptrack.Deps{})
	c.admit(txn(4), deptrack.Deps{On: []uint64{2}})
	c.admit(txn(5), deptrack.Deps{})
	if got := seqs(c.next(1, 1<<20, true)); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("first work %v, want [1]", got)
	}
	if w := c.next(1, 1<<20, true); w != nil {
		t.Fatalf("without batches a blocked head formed %v", seqs(w))
	}
	w := c.next(8, 1<<20, true)
	if got := seqs(w); !slices.Equal(got, []uint64{2, 3, 4, 5}) {
		t.Fatalf("work from the blocked head %v, want [2 3 4 5]", got)
	}
	if want := []bool{true, false, true, false}; !slices.Equal(w.AfterTurn, want) {
		t.Errorf("AfterTurn %v, want %v (the head, and 4 which waits for it)", w.AfterTurn, want)
	}

	c = newCore(0, 100, 1<<20)
	c.admit(txn(1), deptrack.Deps{})
	ddl := txn(2)
	ddl.DDL = &stage.DDL{}
	c.admit(ddl, deptrack.Deps{Wait: 1})
	c.admit(txn(3), deptrack.Deps{})
	c.next(8, 1<<20, true)
	if w := c.next(8, 1<<20, true); w != nil {
		t.Fatalf("a blocked head that goes alone formed %v", seqs(w))
	}
	c.commit(1, 1)
	if got := seqs(c.next(8, 1<<20, true)); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("once ready, the DDL goes alone: %v", got)
	}
}
