package analyze

import "strconv"

// What caps a mode's speedup (ModeReport.Limit).
const (
	// LimitDependencies: the transactions wait for one another; no
	// worker count, batch size or target does much better.
	LimitDependencies = "dependencies"
	// LimitBatching: batches of consecutive transactions wait for the
	// batch before them (one on a hot row is enough), so they run one
	// after another; smaller batches do better (ModeReport.SmallerBatch).
	LimitBatching = "batching"
	// LimitCommitOrder: workers wait for their turn to commit; without
	// commit order the speedup is higher.
	LimitCommitOrder = "commit order"
	// LimitCores: the target's cores; the dependencies allow more.
	LimitCores = "target cores"
)

// outcome is what the simulation gives a worker count: the speedup over
// one worker the dependencies and batching allow (simulated), what the
// target's cores allow (capacity, 0: unlimited), and the lower of the two
// (speedup).
type outcome struct {
	speedup, simulated, capacity float64
}

// outcome is the outcome of simulation j; ok is false when nothing was
// simulated.
func (st *modeState) outcome(m CostModel, j int) (outcome, bool) {
	t1 := st.sims[st.base].makespan()
	s := st.sims[j]
	t := s.makespan()
	if t <= 0 || t1 <= 0 {
		return outcome{}, false
	}
	o := outcome{simulated: t1 / t, capacity: m.capacity(s.ordered && s.workers > 1, t1, s.cpu)}
	o.speedup = o.simulated
	if o.capacity > 0 {
		o.speedup = min(o.speedup, o.capacity)
	}
	return o, true
}

// speedups are the speedups of the simulations idx (one per worker
// count), by worker count.
func (st *modeState) speedups(m CostModel, workers []int, idx []int) map[string]float64 {
	out := map[string]float64{}
	for i, w := range workers {
		if o, ok := st.outcome(m, idx[i]); ok {
			out[strconv.Itoa(w)] = round2(o.speedup)
		}
	}
	return out
}

// limit says what caps the mode's best speedup (mr.Speedup, at the
// fewest workers that reach it), and fills mr.Capacity and, when smaller
// batches do better, mr.SmallerBatch.
func (st *modeState) limit(m CostModel, workers []int, mr *ModeReport) {
	best, bestAt := 0.0, -1
	for i, w := range workers {
		if s, ok := mr.Speedup[strconv.Itoa(w)]; ok && s > best {
			best, bestAt = s, i
		}
	}
	if bestAt < 0 {
		return
	}
	o, _ := st.outcome(m, st.ordered[bestAt])
	mr.Capacity = round2(o.capacity)
	if o.capacity > 0 && o.capacity < o.simulated {
		mr.Limit = LimitCores
		return
	}
	for _, j := range st.smaller {
		if a, ok := st.outcome(m, j); ok && round2(a.speedup) > 1.1*best &&
			(mr.SmallerBatch == nil || round2(a.speedup) > mr.SmallerBatch.Speedup) {
			s := st.sims[j]
			mr.SmallerBatch = &BatchSpeedup{Batch: s.batch, Workers: s.workers, Speedup: round2(a.speedup)}
		}
	}
	switch u, _ := bestSpeedup(mr.UnorderedSpeedup); {
	case mr.SmallerBatch != nil:
		mr.Limit = LimitBatching
	case m.PreserveOrder && u > 1.2*best:
		mr.Limit = LimitCommitOrder
	default:
		mr.Limit = LimitDependencies
	}
}

// BatchSpeedup is what smaller batches would give: the speedup of
// Workers workers applying batches of up to Batch transactions, over the
// same one worker as the mode's speedups (batching as the model does).
type BatchSpeedup struct {
	Batch   int     `json:"batch_max_txns"`
	Workers int     `json:"workers"`
	Speedup float64 `json:"speedup"`
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
