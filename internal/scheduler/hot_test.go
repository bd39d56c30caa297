package scheduler

import (
	"testing"
	"time"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

func TestHotTablesCountRunningWritersOnce(t *testing.T) {
	var h hotTables
	running := map[uint64]bool{7: true, 8: true}
	isDone := func(s uint64) bool { return !running[s] }
	h.count([]stage.Conflict{{Table: "a", Writer: 1}, {Table: "a", Writer: 7}, {Table: "a", Writer: 8}, {Table: "b", Writer: 2}, {Table: "c", Writer: 8}}, isDone)
	h.count([]stage.Conflict{{Table: "b", Writer: 3}}, isDone)
	got := h.snapshot()
	if len(got) != 2 || got["a"] != 1 || got["c"] != 1 {
		t.Errorf("counts %v, want a:1 c:1 (b's writers had committed; a counted once per transaction)", got)
	}
	h.count([]stage.Conflict{{Table: "a", Writer: 7}}, isDone)
	if got["a"] != 1 {
		t.Errorf("a snapshot changed after it was taken: %v", got)
	}
	if s := h.snapshot(); s["a"] != 2 {
		t.Errorf("next snapshot %v, want a:2", s)
	}
}

// TestHotTablesOnlyConflictsWithRunningWriters: transactions that rewrite
// rows written long before (committed) are not hot; a chain admitted at
// once, each waiting for the one before, is.
func TestHotTablesOnlyConflictsWithRunningWriters(t *testing.T) {
	s := simulate(t, Config{Workers: 4, PreserveOrder: true, BatchTxns: 1}, time.Millisecond, func(in chan<- *stage.Prepared) {
		for i := uint64(1); i <= 20; i++ {
			in <- prepared(i, deptrack.Deps{})
		}
		time.Sleep(100 * time.Millisecond) // 1..20 commit
		for i := uint64(21); i <= 40; i++ {
			p := prepared(i, deptrack.Deps{On: []uint64{i - 20}, Conflicts: []int{0}, Writers: []uint64{i - 20}})
			p.Conflicts = []stage.Conflict{{Table: "d.cold", Writer: i - 20}}
			in <- p
		}
		for i := uint64(41); i <= 60; i++ {
			d := deptrack.Deps{}
			if i > 41 {
				d = deptrack.Deps{On: []uint64{i - 1}, Conflicts: []int{0}, Writers: []uint64{i - 1}}
			}
			p := prepared(i, d)
			if i > 41 {
				p.Conflicts = []stage.Conflict{{Table: "d.hot", Writer: i - 1}}
			}
			in <- p
		}
	})
	if n := s.HotTables["d.cold"]; n != 0 {
		t.Errorf("d.cold counted %d times: its writers had committed", n)
	}
	if n := s.HotTables["d.hot"]; n < 15 {
		t.Errorf("d.hot counted %d times, want most of the 19 chained transactions", n)
	}
}

// BenchmarkAdmit measures what the coordinator does per transaction at
// admission and commit, with and without conflicts to count.
func BenchmarkAdmit(b *testing.B) {
	for _, bc := range []struct {
		name     string
		conflict bool
	}{{"independent", false}, {"hot", true}} {
		b.Run(bc.name, func(b *testing.B) {
			c := NewCoordinator(Config{Workers: 8, Window: 1 << 20, WindowBytes: 1 << 40}, stage.NewSequencer(0))
			ps := make([]*stage.Prepared, 1024)
			for i := range ps {
				ps[i] = prepared(0, deptrack.Deps{})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				seq := uint64(i + 1)
				p := ps[i%len(ps)]
				p.Txn.Seq, p.Txn.Txn.Seq = seq, seq
				p.Deps, p.Conflicts = deptrack.Deps{}, nil
				if bc.conflict && seq > 1 {
					p.Deps.On = []uint64{seq - 1}
					p.Conflicts = []stage.Conflict{{Table: "sbtest.sbtest1", Writer: seq - 1}}
				}
				c.admit(p)
				if w := c.form(8); w != nil {
					c.committed(w.Txns)
					c.seq.Done(w.First(), last(w))
				}
			}
		})
	}
}
