package analyze

import (
	"container/heap"
	"slices"

	"github.com/paraply/paraply/internal/deptrack"
)

// ringSize bounds how far back the simulator remembers exact times; an
// older predecessor is assumed to commit at the latest time of anything
// that old, which can only overestimate a wait.
const ringSize = 1 << 14

// simulator replays one mode's dependencies on N workers as paraply's
// coordinator applies them: work is a batch of up to batch consecutive
// transactions (see CostModel.batchFor) that starts on the first
// free worker once what its first transaction waits for has committed,
// and takes its transactions' costs and then one commit. With
// PreserveOrder a worker is busy until its turn to commit, and commits
// follow one another; a later transaction of the batch that waits for
// work still in flight, or for one of the batch that does, is applied
// after the turn, the others at once (stage.Work.AfterTurn). Without
// it, such a transaction is applied once what it waits for has committed,
// at the end of the same work: paraply leaves it for later work and goes
// on past it, so it shares a commit either way, and waiting at the end
// of this work approximates the later work's start. With commit order
// kept and batching, work starts on the first free worker even when its
// first transaction waits for work in flight: that one is applied at the
// turn too (scheduler's core.startsBlocked); without, work waits for its
// first transaction to be ready. A transaction paraply applies alone
// (txnCost.alone) is a work of its own, once ready.
//
// It also adds up the CPU the works cost (txnCost.cpu, and CommitCPU of
// each commit), which bounds the speedup on a target of few cores (see
// CostModel.capacity).
type simulator struct {
	workers int // simulated at once
	batch   int
	window  uint64
	ordered bool
	commitT float64
	stmtW   float64 // CostModel.StatementWork
	cpu     float64
	stmtT   float64           // the time of statement transactions and works
	free    floatHeap         // when each worker is next free
	commit  [ringSize]float64 // commit time by seq % ringSize
	prefix  [ringSize]float64 // latest commit of 1..seq by seq % ringSize
	last    uint64            // seq of the last transaction whose work closed
	lastCmt float64           // commit time of the last work
	latest  float64           // latest commit so far
	open    batch             // the batch being formed (n == 0: none)
}

// batch is work being formed: transactions first..first+n-1, started at
// start, costing work before its commit, of which late once lateReady has
// passed (and, with commit order kept, after its turn): the transactions
// lateAt marks (nil when none).
type batch struct {
	stmts     bool // holds statement transactions
	first     uint64
	n         int
	start     float64
	work      float64
	late      float64
	lateReady float64
	lateAt    []bool
}

// simKey tells simulators apart: two with the same key simulate the same.
type simKey struct {
	workers, batch int
	ordered        bool
}

// keyFor is the simulation of workers under model, with commit order kept
// or not.
func keyFor(model CostModel, workers int, ordered bool) simKey {
	return simKey{workers: workers, batch: model.batchFor(workers), ordered: ordered}
}

func newSimulator(k simKey, model CostModel) *simulator {
	return &simulator{workers: k.workers, batch: k.batch, window: uint64(max(0, model.Window)), ordered: k.ordered, commitT: model.Commit, stmtW: model.StatementWork,
		free: make(floatHeap, k.workers)}
}

// add schedules transaction seq (numbered from 1, consecutively) that waits
// for every transaction up to wait and for each of on, priced k. It
// returns when the transaction's work starts.
func (s *simulator) add(seq, wait uint64, on []uint64, k txnCost) float64 {
	s.cpu += k.cpu
	if k.statements {
		s.stmtT += k.time
	}
	b := &s.open
	if k.alone {
		s.close()
		s.open = batch{first: seq, n: 1, start: s.startAt(seq, wait, on)}
		s.open.work += s.workOf(k)
		start := s.open.start
		s.close()
		return start
	}
	if b.n > 0 && b.n < s.batch {
		cost := s.workOf(k)
		late := !s.joins(wait, on) || b.lateAt != nil && (deptrack.Deps{Wait: wait, On: on}).WaitsForMarked(b.first, b.lateAt)
		if late && b.lateAt == nil {
			b.lateAt = make([]bool, b.n, s.batch)
		}
		b.n++
		if b.lateAt != nil {
			b.lateAt = append(b.lateAt, late)
		}
		if !late {
			b.work += cost
			return b.start
		}
		b.late += cost
		b.lateReady = max(b.lateReady, s.readyBefore(b.first, wait, on))
		return max(b.start+b.work, b.lateReady)
	}
	s.close()
	if !s.ordered || s.batch <= 1 {
		s.open = batch{first: seq, n: 1, start: s.startAt(seq, wait, on)}
		s.open.work += s.workOf(k)
		return s.open.start
	}
	// Batches in commit order start on the first free worker even when
	// their head waits for work in flight: the head is applied at its
	// turn, with what waits for it, the rest at once (core.startsBlocked).
	s.open = batch{first: seq, n: 1, start: s.startAt(seq, 0, nil)}
	cost := s.workOf(k)
	if ready := s.readyBefore(seq+1, wait, on); ready > s.open.start {
		b := &s.open
		b.lateAt = append(make([]bool, 0, s.batch), true)
		b.late, b.lateReady = cost, ready
		return max(b.start+b.work, ready)
	}
	s.open.work += cost
	return s.open.start
}

// workOf is what transaction k adds to the open batch's work: its time,
// and, the first time the batch holds statements, what a work of
// statements costs (CostModel.StatementWork), before its turn.
func (s *simulator) workOf(k txnCost) float64 {
	t := k.time
	if b := &s.open; k.statements && !b.stmts {
		b.stmts = true
		b.work += s.stmtW
		s.cpu += CommitCPU * s.stmtW
		s.stmtT += s.stmtW
	}
	return t
}

// joins reports whether a transaction waiting for wait and on may join the
// open batch: everything it waits for before the batch has committed when
// the batch starts.
func (s *simulator) joins(wait uint64, on []uint64) bool {
	return s.readyBefore(s.open.first, wait, on) <= s.open.start
}

// readyBefore is when everything before transaction first that a
// transaction waiting for wait and on waits for has committed (what it
// waits for from first on is in its own work).
func (s *simulator) readyBefore(first, wait uint64, on []uint64) float64 {
	ready := s.prefixAt(min(wait, first-1))
	for _, o := range on {
		if o < first {
			ready = max(ready, s.commitAt(o))
		}
	}
	return ready
}

// startAt is when work beginning with transaction first, which waits for
// wait and on, starts: once those committed, on the first free worker, and
// once the window has room for the batch: paraply admits a transaction
// when fewer than its window are admitted and not committed, which, as
// commits go mostly in order, is taken as every transaction a window
// before it committed.
func (s *simulator) startAt(first, wait uint64, on []uint64) float64 {
	ready := s.prefixAt(wait)
	for _, o := range on {
		ready = max(ready, s.commitAt(o))
	}
	if last := first + uint64(s.batch) - 1; s.window > 0 && last > s.window {
		ready = max(ready, s.prefixAt(last-s.window))
	}
	return max(ready, s.free[0])
}

// close commits the open batch: its transactions' commit times are known
// from here on.
func (s *simulator) close() {
	b := s.open
	if b.n == 0 {
		return
	}
	s.open = batch{}
	commit := max(b.start+b.work, b.lateReady)
	if s.ordered {
		commit = max(commit, s.lastCmt)
	}
	commit += b.late + s.commitT
	s.cpu += CommitCPU * s.commitT
	s.free[0] = commit
	heap.Fix(&s.free, 0)
	s.lastCmt = commit
	s.latest = max(s.latest, commit)
	for seq := b.first; seq < b.first+uint64(b.n); seq++ {
		s.last = seq
		s.commit[seq%ringSize] = commit
		s.prefix[seq%ringSize] = s.latest
	}
}

// inRing reports whether seq's times are still remembered.
func (s *simulator) inRing(seq uint64) bool { return seq+ringSize > s.last }

func (s *simulator) commitAt(seq uint64) float64 {
	if seq == 0 {
		return 0
	}
	if s.inRing(seq) {
		return s.commit[seq%ringSize]
	}
	return s.prefix[(s.last+1)%ringSize] // the oldest remembered prefix: an upper bound
}

func (s *simulator) prefixAt(seq uint64) float64 {
	if seq == 0 {
		return 0
	}
	if s.inRing(seq) {
		return s.prefix[seq%ringSize]
	}
	return s.prefix[(s.last+1)%ringSize]
}

// makespan is when the last transaction commits.
func (s *simulator) makespan() float64 {
	s.close()
	return s.latest
}

// floatHeap is a min-heap of worker free times.
type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// busy counts the workers still busy at time t (the work in flight when a
// transaction starts, the batch it joins not counted), for the
// parallelism histogram.
func (s *simulator) busy(t float64) int {
	n := 0
	for _, f := range s.free {
		if f > t {
			n++
		}
	}
	return n
}

// clone returns a copy of s that goes on on its own.
func (s *simulator) clone() *simulator {
	c := *s
	c.free = slices.Clone(s.free)
	c.open.lateAt = slices.Clone(s.open.lateAt)
	return &c
}
