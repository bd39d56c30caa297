package scheduler

import (
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

// core is the scheduler's deterministic heart: it holds the look-ahead
// window of admitted transactions, knows which have committed, and forms
// the next Work. No goroutines, no I/O, no clock; the shell in
// scheduler.go feeds it and carries its decisions out.
//
// A transaction is ready when everything it waits for has committed: every
// transaction up to its Deps.Wait, and each of Deps.On. The lowest ready
// transaction goes first, even past a blocked lower one (look-ahead within
// the window). Work is extended with the following transactions while each
// of them waits only for committed transactions or for ones already in the
// work: one target transaction applies them in order, so dependencies
// inside it are kept.
type core struct {
	win      window          // above prefix: admitted entries, what is settled, who waits for whom
	admitted int             // transactions admitted, not yet committed
	prefix   uint64          // every transaction up to prefix is settled (see settle)
	ready    minHeap[uint64] // ready, maybe already dispatched (lazy deletion)
	nReady   int             // ready and not dispatched
	wmWait   minHeap[wmItem] // waiting for the prefix, by how far it must go
	bytes    int
	maxTxns  int
	maxBytes int
	cursor   uint64 // no transaction below it is both admitted and undispatched
}

type entry struct {
	item       *stage.Txn
	deps       deptrack.Deps
	missing    int // predecessors not yet committed
	dispatched bool
}

func newCore(prefix uint64, maxTxns, maxBytes int) *core {
	return &core{win: newWindow(prefix + 1), prefix: prefix,
		ready:   minHeap[uint64]{less: func(a, b uint64) bool { return a < b }},
		wmWait:  minHeap[wmItem]{less: func(a, b wmItem) bool { return a.wait < b.wait }},
		maxTxns: maxTxns, maxBytes: maxBytes}
}

// full reports whether the window holds as much as it may.
func (c *core) full() bool { return c.admitted >= c.maxTxns || c.bytes >= c.maxBytes }

// pending is the number of admitted transactions not yet committed.
func (c *core) pending() int { return c.admitted }

// entry is the admitted, uncommitted transaction s, nil if none.
func (c *core) entry(s uint64) *entry { return c.win.entry(s) }

func (c *core) isDone(s uint64) bool {
	if s <= c.prefix {
		return true
	}
	sl := c.win.at(s)
	return sl != nil && sl.done
}

// admit adds a transaction in stream order.
func (c *core) admit(it *stage.Txn, d deptrack.Deps) {
	e := &entry{item: it, deps: d}
	c.win.get(it.Seq).e = e
	c.admitted++
	c.bytes += it.Bytes
	for _, o := range d.On {
		if !c.isDone(o) {
			e.missing++
			sl := c.win.get(o)
			sl.onWait = append(sl.onWait, e)
		}
	}
	if d.Wait > c.prefix {
		e.missing++
		c.wmWait.push(wmItem{wait: d.Wait, e: e})
	}
	if e.missing == 0 {
		c.makeReady(e)
	}
}

func (c *core) makeReady(e *entry) {
	c.ready.push(e.item.Seq)
	c.nReady++
}

// commit records that transactions first..last committed (or were found
// applied already): they leave the window, and what waited for them is
// released if settle has not done it already.
func (c *core) commit(first, last uint64) {
	for s := first; s <= last; s++ {
		if sl := c.win.at(s); sl != nil && sl.e != nil {
			c.bytes -= sl.e.item.Bytes
			c.admitted--
			sl.e = nil
		}
	}
	c.settle(first, last)
}

// settle releases what waits for transactions first..last.
//
// Releasing earlier, once the work has merely executed on a worker that
// commits in source order, looks attractive (a dependent then waits on the
// row locks instead), but measured on sysbench write_only it made 16
// workers no faster than one: the dependents sat in lock waits holding
// their own locks, which blocked others in turn.
func (c *core) settle(first, last uint64) {
	for s := max(first, c.prefix+1); s <= last; s++ {
		sl := c.win.get(s)
		if sl.done {
			continue
		}
		sl.done = true
		for _, w := range sl.onWait {
			c.release(w)
		}
		clear(sl.onWait) // the released entries' transactions may go
		sl.onWait = sl.onWait[:0]
	}
	for c.win.frontDone() {
		c.win.advance()
		c.prefix++
	}
	for c.wmWait.Len() > 0 && c.wmWait.top().wait <= c.prefix {
		c.release(c.wmWait.pop().e)
	}
}

func (c *core) release(e *entry) {
	e.missing--
	if e.missing == 0 && !e.dispatched {
		c.makeReady(e)
	}
}

// lowestReady is the lowest ready transaction not dispatched yet, 0 if
// none.
func (c *core) lowestReady() uint64 {
	for c.ready.Len() > 0 {
		s := c.ready.top()
		if e := c.entry(s); e != nil && !e.dispatched {
			return s
		}
		c.ready.pop()
	}
	return 0
}

// head is the lowest admitted transaction not dispatched yet, 0 if none.
// With commit order preserved, the last free worker must go to it: a
// worker holding a later transaction waits for the head to commit.
func (c *core) head() uint64 {
	c.cursor = max(c.cursor, c.prefix+1)
	for {
		e := c.entry(c.cursor)
		if e == nil {
			if c.isDone(c.cursor) {
				c.cursor++
				continue
			}
			return 0
		}
		if !e.dispatched {
			return c.cursor
		}
		c.cursor++
	}
}

// headAtBarrier says whether the head waits because of a barrier rather
// than for an earlier writer of its rows: the head itself was serialized
// beyond its rows (DDL waits for everything before it, a keyless write
// for every writer of its table, ...), or the newest predecessor it waits
// for, still uncommitted, was. Operators are told about hot rows only for
// waits this does not explain.
func (c *core) headAtBarrier() bool {
	h := c.head()
	if h == 0 {
		return false
	}
	e := c.entry(h)
	if e.deps.Cause != deptrack.CauseNone {
		return true
	}
	p := c.entry(e.deps.LastCommitted())
	return p != nil && p.deps.Cause != deptrack.CauseNone
}

// next forms the next Work: the lowest ready transaction, extended with
// following ones up to maxTxns and maxBytes. With onlyHead it forms work
// only from the head, and then from a head that is not ready too, when
// it may (startsBlocked). It returns nil when nothing can be formed.
//
// Work from the head (commit order kept) is extended past a transaction
// that waits for an earlier work still applying: everything before the
// head has been handed out, so once those works commit, which the work
// must wait for before its own commit anyway, nothing it waits for is
// missing. Work.AfterTurn marks such transactions, and those that wait
// for one of them; the worker applies the others at once. Cutting the
// run at the first instead made batches of 35 transactions, not 64, on
// sysbench's write_only backlog with two ordered workers (its hot rows
// make a transaction wait for one of the previous 64 every 25 or so),
// and the second worker's batch waited behind the first anyway.
func (c *core) next(maxTxns, maxBytes int, onlyHead bool) *stage.Work {
	s := c.lowestReady()
	h := c.head()
	if onlyHead && h != 0 && s != h && c.startsBlocked(h, maxTxns) {
		e := c.entry(h)
		e.dispatched = true
		w := &stage.Work{Txns: []*stage.Txn{e.item}, AfterTurn: make([]bool, 1, maxTxns)}
		w.AfterTurn[0] = true
		return c.extend(w, h, e.item.Bytes, true, maxTxns, maxBytes)
	}
	if s == 0 {
		return nil
	}
	fromHead := s == h
	if onlyHead && !fromHead {
		return nil
	}
	w, bytes := c.start(s)
	if w.Txns[0].Alone() {
		return w
	}
	return c.extend(w, s, bytes, fromHead, maxTxns, maxBytes)
}

// startsBlocked says whether work may start at the head h although h is
// not ready: with batches, a run from a blocked head applies at once
// what of it waits for no earlier work, beside the works h waits for,
// and the rest at its turn (AfterTurn marks h). Everything before h is
// handed out, so h waits only for works applying. On a stream with hot
// rows the head of each run waits for the run before it; not starting
// until it was ready ran the runs one after another, on one core. A head
// that goes alone (DDL, a non-transactional change, ...) still waits to
// be ready: its worker would hold it and do nothing else.
func (c *core) startsBlocked(h uint64, maxTxns int) bool {
	e := c.entry(h)
	return maxTxns > 1 && e != nil && !e.dispatched && e.missing > 0 && !e.item.Alone()
}

// extend adds to w, which starts at s and holds bytes, the transactions
// after s that may go with it (see next).
func (c *core) extend(w *stage.Work, s uint64, bytes int, fromHead bool, maxTxns, maxBytes int) *stage.Work {
	for n := s + 1; len(w.Txns) < maxTxns && bytes < maxBytes; n++ {
		e := c.entry(n)
		if e == nil || e.dispatched || e.item.Alone() {
			break
		}
		late := false
		switch {
		case !c.satisfiedWithin(e, s, n-1):
			if !fromHead || waitsAfter(e, n-1) {
				return w
			}
			late = true
		case w.AfterTurn != nil:
			late = e.deps.WaitsForMarked(s, w.AfterTurn)
		}
		if late && w.AfterTurn == nil {
			w.AfterTurn = make([]bool, len(w.Txns), maxTxns)
		}
		bytes += c.take(w, e)
		if w.AfterTurn != nil {
			w.AfterTurn = append(w.AfterTurn, late)
		}
	}
	return w
}

// nextUnordered forms work for a pool that does not preserve commit
// order: the lowest ready transaction, then any later ones (up to scan
// entries further) whose predecessors have committed or are already in the
// work. The transactions need not be consecutive; the worker applies them
// in stream order, so dependencies inside the work are kept.
func (c *core) nextUnordered(maxTxns, maxBytes, scan int) *stage.Work {
	s := c.lowestReady()
	if s == 0 {
		return nil
	}
	w, bytes := c.start(s)
	if w.Txns[0].Alone() {
		return w
	}
	in := map[uint64]bool{s: true}
	for n := s + 1; n <= s+uint64(scan) && len(w.Txns) < maxTxns && bytes < maxBytes; n++ {
		e := c.entry(n)
		if e == nil || e.dispatched || e.item.Alone() || !c.satisfiedBy(e, in) {
			continue
		}
		in[n] = true
		bytes += c.take(w, e)
	}
	return w
}

// start begins work with the ready transaction s and returns its size.
func (c *core) start(s uint64) (*stage.Work, int) {
	c.ready.pop() // s is on top: lowestReady cleaned the heap down to it
	c.nReady--
	e := c.entry(s)
	e.dispatched = true
	return &stage.Work{Txns: []*stage.Txn{e.item}}, e.item.Bytes
}

// take adds e to w and returns its size.
func (c *core) take(w *stage.Work, e *entry) int {
	if e.missing == 0 {
		c.nReady-- // its heap entry is skipped when popped
	}
	e.dispatched = true
	w.Txns = append(w.Txns, e.item)
	return e.item.Bytes
}

// satisfiedBy reports whether e waits only for committed transactions or
// for ones in the set in.
func (c *core) satisfiedBy(e *entry, in map[uint64]bool) bool {
	if w := e.deps.Wait; w > c.prefix {
		if int(w-c.prefix) > len(in) {
			return false
		}
		for s := c.prefix + 1; s <= w; s++ {
			if !c.isDone(s) && !in[s] {
				return false
			}
		}
	}
	for _, o := range e.deps.On {
		if !c.isDone(o) && !in[o] {
			return false
		}
	}
	return true
}

// undo returns work formed by next to the window, undispatched.
func (c *core) undo(w *stage.Work) {
	for _, t := range w.Txns {
		e := c.entry(t.Seq)
		e.dispatched = false
		if e.missing == 0 {
			c.makeReady(e)
		}
		c.cursor = min(c.cursor, t.Seq)
	}
}

// satisfiedWithin reports whether e waits only for committed transactions
// or for ones in lo..hi (the work being formed, which applies them first).
func (c *core) satisfiedWithin(e *entry, lo, hi uint64) bool {
	if w := e.deps.Wait; w > c.prefix && !(c.prefix+1 >= lo && w <= hi) {
		return false
	}
	for _, o := range e.deps.On {
		if !c.isDone(o) && (o < lo || o > hi) {
			return false
		}
	}
	return true
}

// waitsAfter reports whether e waits for a transaction after hi (a
// tracker never makes it so; a run must not be extended past one).
func waitsAfter(e *entry, hi uint64) bool {
	if e.deps.Wait > hi {
		return true
	}
	for _, o := range e.deps.On {
		if o > hi {
			return true
		}
	}
	return false
}

// wmItem is a transaction waiting for the prefix to reach wait.
type wmItem struct {
	wait uint64
	e    *entry
}
