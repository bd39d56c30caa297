package scheduler

// window holds what the core knows of each sequence number above its
// prefix, in a ring indexed by sequence number: the numbers are dense and
// come and go in nearly stream order, so the maps keyed by them that the
// core had (admitted entries, settled numbers, waiters) cost a hash and a
// probe, often a rehash, several times per transaction, about a twentieth
// of paraply's CPU. Like a Go map it does not shrink: it keeps room for the
// longest span it held, from the prefix to the last number admitted.
type window struct {
	base  uint64 // the sequence number of the first slot
	slots []slot // a ring of a power of two slots; base is at slots[start]
	start int
	n     int // slots in use: base .. base+n-1
}

// slot is one sequence number's state.
type slot struct {
	e      *entry   // admitted and not committed; nil otherwise
	done   bool     // settled: committed, or never to be applied here
	onWait []*entry // admitted transactions waiting for this one
}

func newWindow(base uint64) window { return window{base: base} }

// at is s's slot, nil when s is outside the slots in use (below base:
// settled; beyond them: nothing known yet).
func (w *window) at(s uint64) *slot {
	if s < w.base || s-w.base >= uint64(w.n) {
		return nil
	}
	return &w.slots[w.index(s)]
}

// get is s's slot, taking the slots up to it into use; s must not be
// below base.
func (w *window) get(s uint64) *slot {
	need := s - w.base + 1
	if need > uint64(len(w.slots)) {
		w.grow(int(need))
	}
	w.n = max(w.n, int(need))
	return &w.slots[w.index(s)]
}

// entry is the admitted, uncommitted transaction s, nil if none.
func (w *window) entry(s uint64) *entry {
	if sl := w.at(s); sl != nil {
		return sl.e
	}
	return nil
}

func (w *window) index(s uint64) int { return (w.start + int(s-w.base)) & (len(w.slots) - 1) }

// grow makes room for at least n slots, keeping those in use in order.
func (w *window) grow(n int) {
	size := max(64, len(w.slots))
	for size < n {
		size *= 2
	}
	slots := make([]slot, size)
	for i := range w.n {
		slots[i] = w.slots[(w.start+i)&(len(w.slots)-1)]
	}
	w.slots, w.start = slots, 0
}

// frontDone reports whether base is settled.
func (w *window) frontDone() bool { return w.n > 0 && w.slots[w.start].done }

// advance drops base's slot: base is settled, and settling emptied its
// waiter list, which keeps its room for the number that reuses the slot.
func (w *window) advance() {
	sl := &w.slots[w.start]
	*sl = slot{onWait: sl.onWait[:0]}
	w.start = (w.start + 1) & (len(w.slots) - 1)
	w.base++
	w.n--
}
