package analyze

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSimulations measures one mode's simulations (the default
// worker counts, with and without commit order, and the smaller batches)
// per transaction, on a stream where each transaction waits for up to
// four random ones, half among the 200 before it, half among the 6,000
// before it (keys written long ago, as the history holds them).
//
//	go test -run x -bench BenchmarkSimulations ./internal/analyze/
func BenchmarkSimulations(b *testing.B) {
	m := DefaultCostModel
	m.Cores = 2
	st := &modeState{}
	st.simulations(m, DefaultWorkers)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1 << 16
	backs := make([][]uint64, n)
	for i := range backs {
		for j := range rng.IntN(5) {
			if j%2 == 0 {
				backs[i] = append(backs[i], uint64(1+rng.IntN(200)))
			} else {
				backs[i] = append(backs[i], uint64(1+rng.IntN(6000)))
			}
		}
	}
	var on []uint64
	k := txnCost{time: m.cost(4, 0), cpu: RowCPU * m.cost(4, 0)}
	b.Logf("%d distinct simulations", len(st.sims))
	seq := uint64(0)
	for b.Loop() {
		seq++
		on = on[:0]
		for _, back := range backs[seq%n] {
			if back < seq {
				on = append(on, seq-back)
			}
		}
		st.simulate(seq, 0, on, k)
	}
}
