package deptrack

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
)

// TestCloneAs: a writeset-session tracker cloned from a writeset one that
// saw a stream without session ids gives, from there on, the dependencies
// and counters of one that saw it all (small history, so that evictions,
// tokens and barriers are in the state cloned); and the writeset tracker
// it was cloned from goes on unchanged by the clone's work.
func TestCloneAs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var steps []step
	for i := range 3000 {
		s := step{keys: []uint64{uint64(rng.IntN(300)), uint64(rng.IntN(300))}}
		switch {
		case i%97 == 0:
			s.barrier = CauseDDL
		case i%13 == 0:
			s.excl = []uint64{7}
		case i%5 == 0:
			s.shared = []uint64{7}
		}
		if i >= 1500 {
			s.thread = uint32(1 + rng.IntN(8))
		}
		steps = append(steps, s)
	}
	whole := NewTracker(WritesetSession, 100)
	ws := NewTracker(WritesetMode, 100)
	var wss *Tracker
	for i, s := range steps {
		txn := &binlog.Txn{Seq: uint64(i + 1), ThreadID: s.thread, DDL: s.barrier == CauseDDL}
		w := func() *Writeset {
			return &Writeset{Keys: s.keys, Barrier: s.barrier, Exclusive: s.excl, Shared: s.shared}
		}
		if s.thread != 0 && wss == nil {
			wss = ws.CloneAs(WritesetSession)
		}
		want := whole.Add(txn, w())
		got := ws.Add(txn, w())
		if wss != nil {
			got = wss.Add(txn, w())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("transaction %d: %+v, the tracker that saw it all %+v", i+1, got, want)
		}
	}
	if a, b := wss.Stats(), whole.Stats(); a != b {
		t.Errorf("counters %+v, the tracker that saw it all %+v", a, b)
	}
	if ws.Mode() != WritesetMode || ws.Stats().Transactions != int64(len(steps)) {
		t.Errorf("the writeset tracker: mode %v, %d transactions", ws.Mode(), ws.Stats().Transactions)
	}
}
