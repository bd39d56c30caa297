package analyze

import (
	"math"
	"testing"

	"github.com/paraply/paraply/internal/replicate"
)

// newSim is a simulator of w workers under m.
func newSim(w int, m CostModel) *simulator { return newSimulator(keyFor(m, w, m.PreserveOrder), m) }

// unit prices a transaction of no rows under m.
func unit(m CostModel) txnCost { return txnCost{time: m.cost(0, 0)} }

// simulate runs n transactions through a simulator of w workers: each
// waits for the one before it when chain is set, for none otherwise.
func simulate(w, n int, chain bool, m CostModel) float64 {
	s := newSim(w, m)
	for seq := uint64(1); seq <= uint64(n); seq++ {
		var wait uint64
		if chain {
			wait = seq - 1
		}
		s.add(seq, wait, nil, unit(m))
	}
	return s.makespan()
}

func TestSimulatorBatches(t *testing.T) {
	m := CostModel{PerTxn: 1, Commit: 10, Batch: 4, PreserveOrder: true}
	cases := []struct {
		name    string
		workers int
		chain   bool
		model   CostModel
		want    float64
	}{
		// 10 transactions in batches of 4, 4 and 2, one commit each.
		{"one worker batches", 1, false, m, 10 + 3*10},
		// A chain batches as well: each waits for one in its own batch.
		{"a chain batches", 1, true, m, 10 + 3*10},
		// Across batches it waits for the commit: no gain from workers.
		{"a chain on four workers", 4, true, m, 10 + 3*10},
		// Independent batches on three workers, commits in order one
		// after another: 4, 4 and 2 of work in parallel, then three
		// commits.
		{"independent, ordered", 3, false, m, 4 + 3*10},
		// Without order the commits overlap.
		{"independent, unordered", 3, false, CostModel{PerTxn: 1, Commit: 10, Batch: 4}, 4 + 10},
		// Batch 0 means one transaction a commit.
		{"no batching", 1, false, CostModel{PerTxn: 1, Commit: 10, PreserveOrder: true}, 10 * 11},
	}
	for _, c := range cases {
		if got := simulate(c.workers, 10, c.chain, c.model); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: makespan %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSimulatorAfterTurn: a transaction of a batch that waits for the
// batch before it, still in flight, and those that wait for it, are
// applied once that batch has committed (with commit order kept, after
// the batch's turn), and the batch goes on past them: they share its
// commit. 8 transactions, batches of 4, 2 workers; 7 waits for 2, and 8
// for 7 when chained.
func TestSimulatorAfterTurn(t *testing.T) {
	run := func(m CostModel, chained bool) float64 {
		s := newSim(2, m)
		for seq := uint64(1); seq <= 8; seq++ {
			var on []uint64
			switch {
			case seq == 7:
				on = []uint64{2}
			case seq == 8 && chained:
				on = []uint64{7}
			}
			s.add(seq, 0, on, unit(m))
		}
		return s.makespan()
	}
	ordered := CostModel{PerTxn: 1, Commit: 10, Batch: 4, PreserveOrder: true}
	unordered := CostModel{PerTxn: 1, Commit: 10, Batch: 4}
	// [1 2 3 4] commits at 4+10; [5 6 8] runs at once on the other
	// worker, 7 after 14: 14+1+10, ordered or not.
	for _, m := range []CostModel{ordered, unordered} {
		if got := run(m, false); got != 25 {
			t.Errorf("preserve order %v: makespan %v, want 25", m.PreserveOrder, got)
		}
	}
	// 8 waits for 7: both after 14, one commit: 14+2+10. (Were 7 to end
	// the batch and go alone, 8 would start at 25 and commit at 36.)
	for _, m := range []CostModel{ordered, unordered} {
		if got := run(m, true); got != 26 {
			t.Errorf("preserve order %v, 8 waits for 7: makespan %v, want 26", m.PreserveOrder, got)
		}
	}
}

// stream simulates n transactions, each waiting for what dep says,
// priced k, on the worker counts of workers under m, and returns the
// mode's report of them.
func stream(m CostModel, workers []int, n int, k txnCost, dep func(seq uint64) (uint64, []uint64)) *ModeReport {
	st := &modeState{}
	st.simulations(m, workers)
	for seq := uint64(1); seq <= uint64(n); seq++ {
		wait, on := dep(seq)
		st.simulate(seq, wait, on, k)
	}
	mr := &ModeReport{Speedup: st.speedups(m, workers, st.ordered), UnorderedSpeedup: st.speedups(m, workers, st.unordered)}
	st.limit(m, workers, mr)
	return mr
}

func independent(uint64) (uint64, []uint64) { return 0, nil }

// TestCapacityOrderedShare: workers keeping commit order are capped at
// OrderedShare of the target's capacity, unordered ones at all of it.
func TestCapacityOrderedShare(t *testing.T) {
	m := CostModel{PerTxn: 1, Batch: 4, Capacity: 2} // no commit cost: work alone bounds the time
	// Independent: 8 workers would gain 8x.
	if got := stream(m, []int{1, 8}, 64, unit(m), independent).Speedup["8"]; got != 2 {
		t.Errorf("unordered speedup %v, want the capacity 2", got)
	}
	m.PreserveOrder = true
	if got, want := stream(m, []int{1, 8}, 64, unit(m), independent).Speedup["8"], round2(2*OrderedShare); got != want {
		t.Errorf("ordered speedup %v, want %v", got, want)
	}
}

// TestDefaultBatchIsReplicates: the simulation batches as replicate does
// by default, in replicate's window.
func TestDefaultBatchIsReplicates(t *testing.T) {
	if got, want := DefaultCostModel.Batch, replicate.Default().BatchTxns; got != want {
		t.Errorf("DefaultCostModel.Batch %d, replicate's default --batch-max-txns %d", got, want)
	}
	if got, want := DefaultCostModel.Window, replicate.Default().Window; got != want {
		t.Errorf("DefaultCostModel.Window %d, replicate's default --window %d", got, want)
	}
}

// TestStatementsCostMore: a statement-format transaction costs its target
// more than the same changes as rows, so that with commits shared by a
// batch, workers gain more on statements than on rows.
func TestStatementsCostMore(t *testing.T) {
	m := DefaultCostModel
	m.Cores = 0
	run := func(rows, statements int) float64 {
		k := txnCost{time: m.cost(rows, statements)}
		return stream(m, []int{1, 8}, 2048, k, independent).Speedup["8"]
	}
	if m.cost(0, 4) <= m.cost(4, 0) {
		t.Fatalf("four statements cost %v, four rows %v", m.cost(0, 4), m.cost(4, 0))
	}
	if rows, stmts := run(4, 0), run(0, 4); stmts <= rows {
		t.Errorf("8 workers gain %vx on statements, %vx on rows: want more on statements", stmts, rows)
	}
}
