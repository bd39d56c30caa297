package scheduler

import (
	"math/rand/v2"
	"testing"
)

// TestWindowAsMap drives a window and a map with the same random
// admissions and settlements, sequence numbers spread over a span that
// makes the ring wrap and grow, and checks that they always agree.
func TestWindowAsMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	w := newWindow(1)
	entries := map[uint64]*entry{}
	done := map[uint64]bool{}
	base := uint64(1)
	grown := 0
	for step := range 20000 {
		span := uint64(10 + r.IntN(20+step/20)) // widening: the ring grows
		s := base + uint64(r.IntN(int(span)))
		if r.IntN(2) == 0 {
			if entries[s] == nil && !done[s] {
				e := &entry{}
				entries[s] = e
				before := len(w.slots)
				w.get(s).e = e
				if len(w.slots) > before && before > 0 {
					grown++
				}
			}
		} else {
			delete(entries, s)
			done[s] = true
			sl := w.get(s)
			sl.e, sl.done = nil, true
		}
		for w.frontDone() {
			if !done[base] {
				t.Fatalf("step %d: the window's front %d is done, the map's is not", step, base)
			}
			delete(done, base)
			w.advance()
			base++
		}
		if w.base != base {
			t.Fatalf("step %d: window base %d, want %d", step, w.base, base)
		}
		for s := base; s < base+1100; s += 1 + uint64(r.IntN(8)) {
			sl := w.at(s)
			gotDone := sl != nil && sl.done
			if w.entry(s) != entries[s] || gotDone != done[s] {
				t.Fatalf("step %d, number %d: window has entry %p done %v, map %p %v", step, s, w.entry(s), gotDone, entries[s], done[s])
			}
		}
	}
	if base < 1000 || grown == 0 {
		t.Errorf("the test moved the window to %d and grew it %d times: want it to wrap many times and grow", base, grown)
	}
}
