package analyze

import (
	"math"
	"testing"

	"github.com/paraply/paraply/internal/replicate"
)

// simulate runs n transactions through a simulator of w workers: each
// waits for the one before it when chain is set, for none otherwise.
func simulate(w, n int, chain bool, m CostModel) float64 {
	s := newSimulator(w, m)
	for seq := uint64(1); seq <= uint64(n); seq++ {
		var wait uint64
		if chain {
			wait = seq - 1
		}
		s.add(seq, wait, nil, 0)
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

// TestSimulatorAfterTurn: with commit order kept, a transaction of a batch
// that waits for the batch before it, still in flight, is applied after
// the batch's turn, and the batch goes on past it; without, it ends the
// batch and goes alone. 8 transactions, batches of 4, 2 workers; 7 waits
// for 2.
func TestSimulatorAfterTurn(t *testing.T) {
	run := func(m CostModel) float64 {
		s := newSimulator(2, m)
		for seq := uint64(1); seq <= 8; seq++ {
			var on []uint64
			if seq == 7 {
				on = []uint64{2}
			}
			s.add(seq, 0, on, 0)
		}
		return s.makespan()
	}
	// [1 2 3 4] commits at 4+10; [5 6 8] runs at once on the other
	// worker, 7 after 14: 14+1+10.
	if got := run(CostModel{PerTxn: 1, Commit: 10, Batch: 4, PreserveOrder: true}); got != 25 {
		t.Errorf("ordered: makespan %v, want 25", got)
	}
	// [5 6] commits at 2+10; 7 goes alone once 2 committed: 14+1+10;
	// 8 on the worker free at 14: 14+1+10. (Ordered, that way, would
	// take 44: [5 6] commits after 14, at 24, 7 at 34, 8 at 44.)
	if got := run(CostModel{PerTxn: 1, Commit: 10, Batch: 4}); got != 25 {
		t.Errorf("unordered: makespan %v, want 25", got)
	}
}

// TestDefaultBatchIsReplicates: the simulation batches as replicate does
// by default.
func TestDefaultBatchIsReplicates(t *testing.T) {
	if got, want := DefaultCostModel.Batch, replicate.Default().BatchTxns; got != want {
		t.Errorf("DefaultCostModel.Batch %d, replicate's default --batch-max-txns %d", got, want)
	}
}
