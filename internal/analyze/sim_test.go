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

// TestDefaultBatchIsReplicates: the simulation batches as replicate does
// by default.
func TestDefaultBatchIsReplicates(t *testing.T) {
	if got, want := DefaultCostModel.Batch, replicate.Default().BatchTxns; got != want {
		t.Errorf("DefaultCostModel.Batch %d, replicate's default --batch-max-txns %d", got, want)
	}
}
