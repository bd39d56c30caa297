package analyze

import (
	"strconv"
	"testing"
)

// TestHotKeysBounded: however many distinct keys conflict, the counters
// hold at most their capacity; a key as hot as a hot row stays on top,
// its count at most its overcount above the truth, and that overcount at
// most the conflicts over the capacity. While no more keys than the
// capacity conflicted, the counts are exact.
func TestHotKeysBounded(t *testing.T) {
	const capacity, hot = 100, uint64(1 << 40)
	h := newHotKeys(capacity)
	name := func(k uint64) func() string { return func() string { return strconv.FormatUint(k, 10) } }
	for k := uint64(1); k <= 50; k++ {
		for range k {
			h.add(k, name(k))
		}
	}
	for i, e := range h.top(50) {
		if want := int64(50 - i); e.Conflicts != want || e.Overcount != 0 || e.Name != strconv.Itoa(50-i) {
			t.Fatalf("under capacity, top %d: %+v, want key %d counted exactly %d times", i, e, want, want)
		}
	}
	total := int64(50 * 51 / 2)
	for k := uint64(1000); k < 21000; k++ {
		h.add(k, name(k))
		total++
		if k%10 == 0 {
			h.add(hot, name(hot))
			total++
		}
	}
	if len(h.heap) > capacity || len(h.at) > capacity {
		t.Fatalf("%d counters, %d indexed: want at most %d", len(h.heap), len(h.at), capacity)
	}
	top := h.top(1)[0]
	if top.Name != strconv.FormatUint(hot, 10) || top.Conflicts < 2000 || top.Conflicts-top.Overcount > 2000 || top.Overcount > total/capacity {
		t.Errorf("top %+v: want the hot key, 2,000 conflicts within its overcount, which is at most %d", top, total/capacity)
	}
}
