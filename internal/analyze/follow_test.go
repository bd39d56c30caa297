package analyze

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/deptrack"
)

// TestFollowerAdopts: writeset-session follows writeset while no
// transaction carries a source session, then goes on from a copy: its
// critical path, speedups, histogram and counters are those of a
// writeset-session mode that measured the whole stream itself.
func TestFollowerAdopts(t *testing.T) {
	opts := withDefaults(Options{})
	modes := newModes(opts)
	ws, wss := modes[slices.Index(deptrack.Modes, deptrack.WritesetMode)], modes[slices.Index(deptrack.Modes, deptrack.WritesetSession)]
	if wss.follows != ws {
		t.Fatal("writeset-session does not follow writeset")
	}
	whole := &modeState{tracker: deptrack.NewTracker(deptrack.WritesetSession, 0), chains: newChains()}
	whole.simulations(opts.Model, opts.Workers)
	rng := rand.New(rand.NewPCG(5, 6))
	k := txnCost{time: 2, cpu: 3}
	for seq := uint64(1); seq <= 6000; seq++ {
		txn := &binlog.Txn{Seq: seq}
		if seq > 3000 {
			txn.ThreadID = uint32(1 + rng.IntN(4))
		}
		a, b := uint64(rng.IntN(2000)), uint64(rng.IntN(2000))
		w := &deptrack.Writeset{Keys: []uint64{a, b}, // the writeset mode names its hot keys
			Refs: []deptrack.KeyRef{{Table: "`d`.`t`", Index: "PRIMARY", Text: strconv.FormatUint(a, 10)}, {Table: "`d`.`t`", Index: "PRIMARY", Text: strconv.FormatUint(b, 10)}}}
		wss.follow(txn)
		for _, st := range []*modeState{ws, wss, whole} {
			st.add(txn, w, k)
		}
		if seq == 3000 && wss.follows == nil {
			t.Fatal("writeset-session stopped following before a session appeared")
		}
	}
	if wss.follows != nil {
		t.Fatal("writeset-session still follows after sessions appeared")
	}
	if a, b := wss.chains.best, whole.chains.best; a != b || a == ws.chains.best {
		t.Errorf("critical path %d, measured whole %d (writeset %d: the sessions should lengthen it)", a, b, ws.chains.best)
	}
	for _, idx := range [][]int{wss.ordered, wss.unordered} {
		if a, b := wss.speedups(opts.Model, opts.Workers, idx), whole.speedups(opts.Model, opts.Workers, idx); !maps.Equal(a, b) {
			t.Errorf("speedups %v, measured whole %v", a, b)
		}
	}
	if !slices.Equal(wss.hist, whole.hist) || wss.tracker.Stats() != whole.tracker.Stats() {
		t.Errorf("histogram %v, counters %+v; measured whole %v, %+v", wss.hist, wss.tracker.Stats(), whole.hist, whole.tracker.Stats())
	}
}
