package deptrack

import (
	"maps"
	"slices"
)

// history remembers, for each key, the last transaction that wrote it, for
// at most capacity keys. When full it forgets the least recently written
// keys first and raises forgotten to the newest transaction among them: a
// lookup that misses may have missed a forgotten writer, so the caller must
// then wait for forgotten. That keeps a bounded history safe without
// MySQL's cliff, where the whole history is cleared at once.
//
// Eviction order comes from a FIFO of (key, seq) writes. A key written again
// leaves a stale entry behind in the FIFO; stale entries are skipped when
// they reach the front, and the FIFO is compacted when they pile up.
type history struct {
	capacity  int
	last      map[uint64]uint64
	fifo      []write
	head      int
	forgotten uint64
	evictions int64
}

type write struct {
	key, seq uint64
}

func newHistory(capacity int) *history {
	if capacity <= 0 {
		capacity = DefaultHistorySize
	}
	return &history{capacity: capacity, last: make(map[uint64]uint64, capacity)}
}

// get returns the last writer of key and whether the history knows it.
func (h *history) get(key uint64) (uint64, bool) {
	s, ok := h.last[key]
	return s, ok
}

// put records seq as the last writer of key, evicting as needed.
func (h *history) put(key, seq uint64) {
	h.last[key] = seq
	h.fifo = append(h.fifo, write{key, seq})
	for len(h.last) > h.capacity {
		w := h.fifo[h.head]
		h.head++
		if h.last[w.key] == w.seq {
			delete(h.last, w.key)
			h.evictions++
			if w.seq > h.forgotten {
				h.forgotten = w.seq
			}
		}
	}
	if live := len(h.fifo) - h.head; h.head > h.capacity || live > 4*h.capacity {
		h.compact()
	}
}

// compact drops consumed and stale FIFO entries.
func (h *history) compact() {
	out := h.fifo[:0]
	for _, w := range h.fifo[h.head:] {
		if h.last[w.key] == w.seq {
			out = append(out, w)
		}
	}
	h.fifo = out
	h.head = 0
}

// clone returns a copy of h (nil for nil).
func (h *history) clone() *history {
	if h == nil {
		return nil
	}
	c := *h
	c.last = maps.Clone(h.last)
	c.fifo = slices.Clone(h.fifo[h.head:])
	c.head = 0
	return &c
}
