package analyze

import (
	"container/heap"
	"math"

	"github.com/paraply/paraply/internal/deptrack"
)

// CostModel prices a transaction's apply in abstract time units: PerTxn for
// what every transaction pays plus PerRow for each row change, and Commit
// for each commit on the target, which Batch transactions may share. Only
// ratios matter: a speedup is the time of one worker over the time of N.
type CostModel struct {
	PerTxn float64 `json:"per_txn"`
	PerRow float64 `json:"per_row"`
	// PerStatement is what a statement-format DML statement costs: the
	// target parses, plans and runs it, as its source did, where a row
	// change is applied by key.
	PerStatement float64 `json:"per_statement"`
	// Commit is what one target transaction's commit adds: the round trip
	// and the wait for the log to reach the disk.
	Commit float64 `json:"per_commit"`
	// Batch is how many source transactions one target transaction may
	// apply (paraply's --batch-max-txns): consecutive ones, as paraply's
	// coordinator forms them (see simulator). 0 or 1: one each.
	Batch int `json:"batch_max_txns"`
	// PreserveOrder makes workers commit in source order, as paraply and
	// MySQL do by default: a worker stays busy until its turn to commit,
	// and commits follow one another.
	PreserveOrder bool `json:"preserve_commit_order"`
	// Capacity is how many transactions the target can apply at once
	// before they slow each other down (its cores over the share of an
	// apply spent on CPU); more workers than that add nothing, and
	// workers keeping commit order use OrderedShare of it. 0 means
	// unlimited: the speedup the dependencies alone allow.
	Capacity float64 `json:"capacity"`
}

// DefaultCostModel prices a row change at a quarter of a transaction's
// fixed cost and a commit at ten (on this project's durable two-core
// MariaDB target, sysbench write_only, four rows, applied by the native
// single thread at 2,420 transactions a second durable and 14,572 not: the
// commit's flush adds five times the transaction's own 0.07 ms), with
// replicate's defaults: batches of 256, commit order preserved; and a
// target of unlimited capacity. DefaultCapacity is the calibrated capacity
// of a target with the given number of cores.
//
// A statement costs 2.2: the native single thread applied the same
// write_only backlog (four changes a transaction) at 1,032 transactions a
// second from a MIXED source and 2,353 from a ROW one, durable target
// (bench/results/2026-11-27-mixed-quick and 2026-11-27-durable-3rounds):
// 0.14 ms more for each statement than for its row change.
var DefaultCostModel = CostModel{PerTxn: 1, PerRow: 0.25, PerStatement: 2.2, Commit: 10, Batch: 256, PreserveOrder: true}

// DefaultCapacity is calibrated on this project's benchmark
// (bench/results/2026-11-26-predictions: sysbench write_only, hot rows and
// update_index from one client, a durable two-core MariaDB 10.11 target,
// paraply batching 256 transactions a commit): 4 unordered workers applied
// 1.13 to 1.39 times as fast as one, because one batching worker already
// keeps the two cores busy between the target's CPU, its fsyncs and
// paraply's own. What more workers gain there is batching, not parallel
// apply. (It was 0.55 for every worker, from runs batching 16
// transactions, before ordered batches went on past waiting ones.)
func DefaultCapacity(cores int) float64 { return 0.65 * float64(cores) }

// OrderedShare is the share of the target's capacity that workers keeping
// commit order use: each holds its open transaction until its turn, so
// part of the target's time is one worker waiting for another. Measured
// with DefaultCapacity's runs: 4 and 16 ordered writeset workers applied
// 1.03 to 1.15 times as fast as one, unordered 1.13 to 1.39.
const OrderedShare = 0.85

// capacity is how many transactions the simulated workers can apply at
// once on the target (0: unlimited).
func (c CostModel) capacity() float64 {
	if c.PreserveOrder {
		return c.Capacity * OrderedShare
	}
	return c.Capacity
}

func (c CostModel) cost(rows, statements int) float64 {
	return c.PerTxn + c.PerRow*float64(rows) + c.PerStatement*float64(statements)
}

// ringSize bounds how far back the simulator remembers exact times; an
// older predecessor is assumed to commit at the latest time of anything
// that old, which can only overestimate a wait.
const ringSize = 1 << 16

// simulator replays one mode's dependencies on N workers as paraply's
// coordinator applies them: work is a batch of up to Model.Batch
// consecutive transactions (see CostModel.Batch) that starts on the first
// free worker once what its first transaction waits for has committed,
// and takes its transactions' costs and then one commit. With
// PreserveOrder a worker is busy until its turn to commit, and commits
// follow one another; a later transaction of the batch that waits for
// work still in flight, or for one of the batch that does, is applied
// after the turn, the others at once (stage.Work.AfterTurn). Without
// it, such a transaction is applied once what it waits for has committed,
// at the end of the same work: paraply leaves it for later work and goes
// on past it, so it shares a commit either way, and waiting at the end
// of this work approximates the later work's start.
type simulator struct {
	model   CostModel
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
	first     uint64
	n         int
	start     float64
	work      float64
	late      float64
	lateReady float64
	lateAt    []bool
}

func newSimulator(workers int, model CostModel) *simulator {
	if c := model.capacity(); c > 0 && float64(workers) > c {
		workers = max(1, int(math.Ceil(c))) // and speedups caps the result at c
	}
	return &simulator{model: model, free: make(floatHeap, workers)}
}

// add schedules transaction seq (numbered from 1, consecutively) that waits
// for every transaction up to wait and for each of on, and changes rows
// and runs statements (statement-format DML). It returns when the
// transaction's work starts.
func (s *simulator) add(seq, wait uint64, on []uint64, rows, statements int) float64 {
	cost := s.model.cost(rows, statements)
	b := &s.open
	if b.n > 0 && b.n < max(1, s.model.Batch) {
		late := !s.joins(wait, on) || b.lateAt != nil && (deptrack.Deps{Wait: wait, On: on}).WaitsForMarked(b.first, b.lateAt)
		if late && b.lateAt == nil {
			b.lateAt = make([]bool, b.n, s.model.Batch)
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
	s.open = batch{first: seq, n: 1, start: s.startAt(wait, on), work: cost}
	return s.open.start
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

// startAt is when work beginning with a transaction that waits for wait
// and on starts: once those committed, on the first free worker.
func (s *simulator) startAt(wait uint64, on []uint64) float64 {
	ready := s.prefixAt(wait)
	for _, o := range on {
		ready = max(ready, s.commitAt(o))
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
	if s.model.PreserveOrder {
		commit = max(commit, s.lastCmt)
	}
	commit += b.late + s.model.Commit
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
