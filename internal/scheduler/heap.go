package scheduler

// minHeap is a binary min-heap of T ordered by less. container/heap's Push
// and Pop take and return any, which allocates for every sequence number
// and struct that goes through them: the coordinator pushes at least one
// per transaction.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) Len() int { return len(h.items) }

// top is the least item; the heap must not be empty.
func (h *minHeap[T]) top() T { return h.items[0] }

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

// pop removes and returns the least item; the heap must not be empty.
func (h *minHeap[T]) pop() T {
	n := len(h.items) - 1
	least := h.items[0]
	h.items[0] = h.items[n]
	var zero T
	h.items[n] = zero // let go of what it points to
	h.items = h.items[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.less(h.items[r], h.items[c]) {
			c = r
		}
		if !h.less(h.items[c], h.items[i]) {
			break
		}
		h.items[i], h.items[c] = h.items[c], h.items[i]
		i = c
	}
	return least
}
