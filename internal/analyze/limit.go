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
	// LimitStatements: paraply's statement path (CostModel.StatementGain);
	// the dependencies and the target's cores allow more.
	LimitStatements = "statements"
)

// outcome is what the simulation gives a worker count: the speedup over
// one worker the dependencies and batching allow (simulated), what the
// target's cores allow (capacity, 0: unlimited), what paraply's statement
// path allows (statements, 0: unbounded), and the lowest (speedup).
type outcome struct {
	speedup, simulated, capacity, statements float64
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
	if s.workers > 1 {
		o.statements = m.statementBound(s.stmtT / t1)
	}
	o.speedup = o.simulated
	for _, b := range []float64{o.capacity, o.statements} {
		if b > 0 {
			o.speedup = min(o.speedup, b)
		}
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
	mr.Capacity, mr.Simulated = round2(o.capacity), round2(o.simulated)
	switch {
	case o.statements > 0 && o.statements < o.simulated && (o.capacity == 0 || o.statements < o.capacity):
		mr.Limit = LimitStatements
		return
	case o.capacity > 0 && o.capacity < o.simulated:
		mr.Limit = LimitCores
		return
	}
	var alt *BatchSpeedup
	altBound := false // the best smaller batch is held by the statement path
	for _, j := range st.smaller {
		a, ok := st.outcome(m, j)
		if !ok || round2(a.speedup) <= 1.1*best || alt != nil && round2(a.speedup) <= alt.Speedup {
			continue
		}
		s := st.sims[j]
		alt = &BatchSpeedup{Batch: s.batch, Workers: s.workers, Speedup: round2(a.speedup)}
		altBound = a.statements > 0 && a.statements < a.simulated
	}
	u, _ := bestSpeedup(mr.UnorderedSpeedup)
	switch {
	case alt != nil && altBound:
		// Smaller batches would overlap, but paraply's statement path
		// holds them to what it holds every batch size to.
		mr.Limit = LimitStatements
	case alt != nil:
		mr.Limit, mr.SmallerBatch = LimitBatching, alt
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
