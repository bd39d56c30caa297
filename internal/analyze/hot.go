package analyze

import (
	"fmt"
	"slices"

	"github.com/paraply/paraply/internal/deptrack"
)

// DefaultHotKeyCounters is how many row keys the hot-row counts follow
// at once (see hotKeys).
const DefaultHotKeyCounters = 1 << 14

// hotKeys counts, in bounded memory, how often each row key made a
// transaction wait: the space-saving algorithm (Metwally, Agrawal and El
// Abbadi, 2005). While no more than its capacity of keys conflicted, every
// count is exact. After that a key seen for the first time takes the place
// of the key with the lowest count, and starts from that count plus one:
// a count is then at most the key's true count plus its overcount (the
// count it inherited), and every key whose true count is above conflicts /
// capacity is among those followed. A hot row, the one the report names,
// is far above that.
type hotKeys struct {
	capacity int
	at       map[uint64]*hotEntry // by key hash
	heap     []*hotEntry          // min-heap by n
}

// hotEntry is one followed key: its count, the count it inherited from the
// key it replaced, its label once known, and its place in the heap.
type hotEntry struct {
	key     uint64
	n, over int64
	label   string
	i       int
}

func newHotKeys(capacity int) *hotKeys {
	return &hotKeys{capacity: capacity, at: make(map[uint64]*hotEntry, capacity)}
}

// add counts one conflict on key; label names it (called only when the
// key's name is not yet known: rendering a key costs an allocation).
func (h *hotKeys) add(key uint64, label func() string) {
	if e, ok := h.at[key]; ok {
		e.n++
		if e.label == "" {
			e.label = label()
		}
		h.down(e.i)
		return
	}
	if len(h.heap) < h.capacity {
		e := &hotEntry{key: key, n: 1, label: label(), i: len(h.heap)}
		h.heap = append(h.heap, e)
		h.at[key] = e
		h.up(e.i)
		return
	}
	// Full: the key replaces the least counted one. Its name waits for
	// its next conflict: most keys that come in this way go again
	// before they are seen twice.
	e := h.heap[0]
	delete(h.at, e.key)
	*e = hotEntry{key: key, n: e.n + 1, over: e.n}
	h.at[key] = e
	h.down(0)
}

// top returns the n most counted keys, highest first.
func (h *hotKeys) top(n int) []Hot {
	out := make([]Hot, 0, len(h.heap))
	for _, e := range h.heap {
		name := e.label
		if name == "" {
			name = fmt.Sprintf("(a key seen once since its count of %d was inherited)", e.over)
		}
		out = append(out, Hot{Name: name, Conflicts: e.n, Overcount: e.over})
	}
	return top(out, n)
}

func (h *hotKeys) less(i, j int) bool { return h.heap[i].n < h.heap[j].n }

func (h *hotKeys) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.heap[i].i, h.heap[j].i = i, j
}

func (h *hotKeys) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *hotKeys) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.heap) {
			return
		}
		m := l
		if r := l + 1; r < len(h.heap) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// conflictCounts gathers the writeset mode's conflicts: by key, bounded
// (hotKeys), and by table.
type conflictCounts struct {
	keys   *hotKeys
	tables map[string]int64
	seen   []string
}

func newConflictCounts(capacity int) *conflictCounts {
	return &conflictCounts{keys: newHotKeys(capacity), tables: map[string]int64{}}
}

// add counts the keys of ws at idx (deptrack.Deps.Conflicts), and each
// of their tables once.
func (c *conflictCounts) add(ws *deptrack.Writeset, idx []int) {
	c.seen = c.seen[:0]
	for _, i := range idx {
		ref := &ws.Refs[i]
		c.keys.add(ws.Keys[i], ref.Label)
		if t := ref.Table; !slices.Contains(c.seen, t) {
			c.seen = append(c.seen, t)
			c.tables[t]++
		}
	}
}
