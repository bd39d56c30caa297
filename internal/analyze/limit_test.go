package analyze

import (
	"math"
	"strings"
	"testing"
)

// statementTxn prices a write_only transaction from a MIXED source: four
// statements.
func statementTxn(m CostModel) txnCost {
	t := m.cost(0, 4)
	return txnCost{time: t, cpu: StatementCPU * t, statements: true}
}

// waitsBack makes each transaction wait for the one n before it.
func waitsBack(n uint64) func(seq uint64) (uint64, []uint64) {
	return func(seq uint64) (uint64, []uint64) {
		if seq > n {
			return 0, []uint64{seq - n}
		}
		return 0, nil
	}
}

// TestStatementsScaleToCores: a statement stream whose batches do not
// wait for one another (each transaction waits for one 4,096 before it)
// applies faster with more workers, until the target's cores cap it, and
// the report names the cap; with the cores not counted it goes on.
func TestStatementsScaleToCores(t *testing.T) {
	workers := []int{1, 2, 4, 8, 16}
	far := waitsBack(4096)
	m := DefaultCostModel
	m.Cores = 4
	m.Batch = 256       // 16 workers' batches as large as 8's: the window holds 16 of 256
	m.StatementGain = 0 // statements applied in parallel as rows are
	mr := stream(m, workers, 1<<14, statementTxn(m), far)
	s := mr.Speedup
	if !(s["2"] > 1.5 && s["4"] > s["2"]) {
		t.Errorf("speedups %v: want above 1.5 at 2 workers and more at 4", s)
	}
	if s["8"] != s["4"] || s["16"] != s["4"] || mr.Capacity != s["4"] {
		t.Errorf("speedups %v, capacity %v: want 4 cores to cap 4 workers and more alike", s, mr.Capacity)
	}
	// 4 cores over the 1.1 a statement worker keeps busy, 0.85 of that
	// with commit order kept.
	if want := 4 / StatementCPU * OrderedShare; math.Abs(mr.Capacity-want) > 0.05 {
		t.Errorf("capacity %v, want about %.2f", mr.Capacity, want)
	}
	if mr.Limit != LimitCores {
		t.Errorf("limit %q, want %q", mr.Limit, LimitCores)
	}
	m.Cores = 0
	mr = stream(m, workers, 1<<14, statementTxn(m), far)
	if s := mr.Speedup; !(s["16"] > s["8"] && s["8"] > s["4"]) || mr.Limit == LimitCores {
		t.Errorf("cores not counted: speedups %v, limit %q: want them to grow with workers", s, mr.Limit)
	}
	// As paraply applies statements today, they gain at most the
	// statement gain, and the report says so.
	m = DefaultCostModel
	m.Cores = 4
	mr = stream(m, workers, 1<<14, statementTxn(m), far)
	if best, _ := bestSpeedup(mr.Speedup); best != m.StatementGain || mr.Limit != LimitStatements || mr.Simulated < 2 {
		t.Errorf("speedups %v, limit %q, simulated %v: want %v, named %q, the dependencies allowing more", mr.Speedup, mr.Limit, mr.Simulated, m.StatementGain, LimitStatements)
	}
}

// TestBatchingLimit: on a stream where each transaction waits for the
// one 50 before it (a hot-row stream), each batch of 512 waits for the
// batch before it and workers gain nothing; the report names batching
// and the smaller batch that does better.
func TestBatchingLimit(t *testing.T) {
	back50 := waitsBack(50)
	m := DefaultCostModel
	m.Cores = 2
	m.StatementGain = 0
	mr := stream(m, []int{1, 2, 4, 8}, 1<<13, statementTxn(m), back50)
	best, _ := bestSpeedup(mr.Speedup)
	if best > 1.1 {
		t.Errorf("speedups %v: want batches of %d to run one after another", mr.Speedup, m.Batch)
	}
	if mr.Limit != LimitBatching || mr.SmallerBatch == nil || mr.SmallerBatch.Speedup < 1.2*best || mr.SmallerBatch.Batch >= m.Batch {
		t.Errorf("limit %q, smaller batch %+v: want batching, and smaller batches well above %v", mr.Limit, mr.SmallerBatch, best)
	}
}

// TestCalibratedCapacity: on this project's two-core benchmark target,
// the cores give the capacity the benchmark measured: 0.65 a core for
// write_only rows in batches of 256, about 2.7 without batching.
func TestCalibratedCapacity(t *testing.T) {
	m := DefaultCostModel
	m.Cores = 2
	m.PreserveOrder = false
	rows := txnCost{time: m.cost(4, 0), cpu: RowCPU * m.cost(4, 0)}
	for _, c := range []struct {
		batch int
		want  float64
	}{{256, 1.3}, {1, 2.7}} {
		m.Batch = c.batch
		mr := stream(m, []int{1, 8}, 4096, rows, independent)
		if math.Abs(mr.Speedup["8"]-c.want) > 0.05 {
			t.Errorf("batches of %d: 8 independent workers %vx, want the calibrated %v", c.batch, mr.Speedup["8"], c.want)
		}
	}
}

// TestTargetNamed: the text names the target the speedups are for, and
// never calls it unlimited unless asked to leave the cores out.
func TestTargetNamed(t *testing.T) {
	r := &Report{CostModel: DefaultCostModel, Capacity: 1.3, WorkerCores: 1.55}
	r.CostModel.Cores = 2
	if got := targetText(r); !strings.Contains(got, "2 cores") || strings.Contains(got, "unlimited") {
		t.Errorf("target text %q", got)
	}
	r.CostModel.Cores = 0
	if got := targetText(r); !strings.Contains(got, "--target-cores 0") {
		t.Errorf("cores not counted: %q", got)
	}
}
