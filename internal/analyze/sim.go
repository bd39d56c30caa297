package analyze

import (
	"container/heap"
	"math"
)

// CostModel prices a transaction's apply in abstract time units: PerTxn for
// what every transaction pays (round trips, commit) plus PerRow for each
// row change. Only ratios matter: a speedup is the time of one worker over
// the time of N.
type CostModel struct {
	PerTxn float64 `json:"per_txn"`
	PerRow float64 `json:"per_row"`
	// PreserveOrder makes workers commit in source order, as paraply and
	// MySQL do by default: a worker stays busy until its turn to commit.
	PreserveOrder bool `json:"preserve_commit_order"`
	// Capacity is how many transactions the target can apply at once
	// before they slow each other down (its cores over the share of an
	// apply spent on CPU); more workers than that add nothing. 0 means
	// unlimited: the speedup the dependencies alone allow.
	Capacity float64 `json:"capacity"`
}

// DefaultCostModel prices a row change at a quarter of a transaction's
// fixed cost, with commit order preserved and a target of unlimited
// capacity; DefaultCapacity is the calibrated capacity of a target with
// the given number of cores.
var DefaultCostModel = CostModel{PerTxn: 1, PerRow: 0.25, PreserveOrder: true}

// DefaultCapacity is calibrated on this project's benchmark
// (bench/results/2026-11-22-durable: five sysbench workloads, backlogs
// from 1 and 16 clients, a durable two-core MariaDB 10.11 target, paraply
// batching 16 transactions a commit): 16 workers applied 0.79 to 1.25
// times as fast as one (1.02 on average with writeset), because one
// batching worker already keeps the two cores busy between the target's
// CPU, its fsyncs and paraply's own. What more workers gain there is
// batching, not parallel apply.
func DefaultCapacity(cores int) float64 { return 0.55 * float64(cores) }

func (c CostModel) cost(rows int) float64 { return c.PerTxn + c.PerRow*float64(rows) }

// ringSize bounds how far back the simulator remembers exact times; an
// older predecessor is assumed to commit at the latest time of anything
// that old, which can only overestimate a wait.
const ringSize = 1 << 16

// simulator replays one mode's dependencies on N workers fed in source
// order, as MySQL's and MariaDB's coordinators do: transaction i is
// dispatched after i-1, to the first free worker, once its predecessors
// have committed. With PreserveOrder a worker is busy until its
// transaction's turn to commit.
type simulator struct {
	model   CostModel
	free    floatHeap         // when each worker is next free
	commit  [ringSize]float64 // commit time by seq % ringSize
	prefix  [ringSize]float64 // latest commit of 1..seq by seq % ringSize
	last    uint64            // seq of the last transaction added
	lastDsp float64           // dispatch time of the last transaction
	lastCmt float64           // commit time of the last transaction
	latest  float64           // latest commit so far
}

func newSimulator(workers int, model CostModel) *simulator {
	if c := model.Capacity; c > 0 && float64(workers) > c {
		workers = max(1, int(math.Ceil(c))) // and speedups caps the result at c
	}
	return &simulator{model: model, free: make(floatHeap, workers)}
}

// add schedules transaction seq (numbered from 1, consecutively) that waits
// for every transaction up to wait and for each of on, and changes rows.
func (s *simulator) add(seq, wait uint64, on []uint64, rows int) {
	ready := s.prefixAt(wait)
	for _, o := range on {
		ready = max(ready, s.commitAt(o))
	}
	start := max(ready, s.lastDsp, s.free[0])
	commit := start + s.model.cost(rows)
	if s.model.PreserveOrder {
		commit = max(commit, s.lastCmt)
	}
	s.free[0] = commit
	heap.Fix(&s.free, 0)
	s.lastDsp, s.lastCmt = start, commit
	s.latest = max(s.latest, commit)
	s.last = seq
	s.commit[seq%ringSize] = commit
	s.prefix[seq%ringSize] = s.latest
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
func (s *simulator) makespan() float64 { return s.latest }

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

// busy counts the workers still busy at time t (the transactions in flight
// when a new one starts), for the parallelism histogram.
func (s *simulator) busy(t float64) int {
	n := 0
	for _, f := range s.free {
		if f > t {
			n++
		}
	}
	return n
}
