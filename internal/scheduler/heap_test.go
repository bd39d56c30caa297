package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMinHeapSorts: pushes and pops interleaved at random come out in
// order, duplicates included.
func TestMinHeapSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := minHeap[uint64]{less: func(a, b uint64) bool { return a < b }}
	var held, popped []uint64
	for range 5000 {
		if h.Len() > 0 && rng.IntN(3) == 0 {
			got := h.pop()
			slices.Sort(held)
			if got != held[0] {
				t.Fatalf("pop %d, least held %d", got, held[0])
			}
			held = held[1:]
			popped = append(popped, got)
			continue
		}
		x := rng.Uint64N(100)
		h.push(x)
		held = append(held, x)
	}
	for h.Len() > 0 {
		popped = append(popped, h.pop())
	}
	if len(popped) == 0 || h.Len() != 0 {
		t.Fatalf("%d popped, %d left", len(popped), h.Len())
	}
}
