package analyze

import (
	"slices"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/deptrack"
)

// modeState is one mode's tracker and measurements.
type modeState struct {
	tracker *deptrack.Tracker
	chains  *chains
	// sims are the distinct simulations (see simKey); ordered[i] and
	// unordered[i] index the ones of Options.Workers[i], with the
	// model's commit order and without; smaller[j] those of smaller
	// batches (see simulations); base is one worker's, which speedups are
	// over, widest the one the histogram follows.
	sims               []*simulator
	ordered, unordered []int
	smaller            []int
	base, widest       int
	window             uint64
	recent             []uint64 // scratch for simulate
	hist               []int64  // transactions by number already in flight at their start (widest simulation)
	// forgottenWaits counts the transactions that waited for the history's
	// newest forgotten writer (deptrack.CauseHistory) within the window: a
	// writer further back has committed before they start, and costs them
	// nothing (see simulate), as on a stream of inserts of new rows.
	forgottenWaits int64
	// conflicts counts the hot keys and tables (writeset mode only).
	conflicts *conflictCounts
	// follows is, while set, the mode whose measurements are this one's
	// too: writeset-session follows writeset until a transaction carries
	// a source session (MariaDB writes none into row-based ones), and
	// then takes a copy of all it measured (adopt). Both run in the same
	// goroutine.
	follows *modeState
}

// newModes sets up a tracker and simulations (see simulations) for each
// dependency mode.
func newModes(opts Options) []*modeState {
	modes := make([]*modeState, len(deptrack.Modes))
	for i, mode := range deptrack.Modes {
		if mode == deptrack.WritesetSession {
			modes[i] = &modeState{follows: modes[slices.Index(deptrack.Modes, deptrack.WritesetMode)]}
			continue
		}
		st := &modeState{tracker: deptrack.NewTracker(mode, opts.HistorySize), chains: newChains()}
		st.simulations(opts.Model, opts.Workers)
		if mode == deptrack.WritesetMode {
			st.conflicts = newConflictCounts(DefaultHotKeyCounters)
		}
		modes[i] = st
	}
	return modes
}

// simulations sets up the mode's simulations under m: of each of
// workers (which hold 1), with m's commit order and without, and of 2
// and 4 workers with batches of a quarter and a sixteenth of m's, which
// tell whether batching is what limits (see limit). Worker counts that
// simulate the same share a simulator.
func (st *modeState) simulations(m CostModel, workers []int) {
	at := map[simKey]int{}
	sim := func(k simKey) int {
		if k.workers == 1 {
			k.ordered = true // one worker commits in order anyway
		}
		j, ok := at[k]
		if !ok {
			j = len(st.sims)
			at[k] = j
			st.sims = append(st.sims, newSimulator(k, m))
		}
		return j
	}
	for _, w := range workers {
		st.ordered = append(st.ordered, sim(keyFor(m, w, m.PreserveOrder)))
		st.unordered = append(st.unordered, sim(keyFor(m, w, false)))
	}
	most := slices.Max(workers)
	st.base = st.ordered[slices.Index(workers, 1)]
	st.widest = st.ordered[slices.Index(workers, most)]
	for _, w := range []int{2, 4} {
		k := keyFor(m, w, m.PreserveOrder)
		for _, b := range []int{k.batch / 4, k.batch / 16} {
			if w <= most && b > 1 {
				st.smaller = append(st.smaller, sim(simKey{workers: w, batch: b, ordered: k.ordered}))
			}
		}
	}
	st.hist = make([]int64, most+1)
	st.window = uint64(max(0, m.Window))
}

// add tracks txn's dependencies in the mode and feeds them to its chains
// and simulations; the widest counts txn by the work in flight at its
// start.
func (st *modeState) add(txn *binlog.Txn, ws *deptrack.Writeset, k txnCost) {
	if st.follows != nil {
		return // the mode followed measures it, as this one would
	}
	d := st.tracker.Add(txn, ws)
	if d.Cause == deptrack.CauseHistory && !st.longCommitted(txn.Seq, d.Wait) {
		st.forgottenWaits++
	}
	st.chains.add(txn.Seq, d.Wait, d.On)
	st.simulate(txn.Seq, d.Wait, d.On, k)
	if st.conflicts != nil {
		st.conflicts.add(ws, d.Conflicts)
	}
}

// longCommitted reports whether transaction seq's wait for every
// transaction up to wait is a window or more behind it, which simulate
// leaves out.
func (st *modeState) longCommitted(seq, wait uint64) bool {
	return st.window > 0 && seq > st.window && wait <= seq-st.window
}

// simulate feeds transaction seq, which waits for every transaction up to
// wait and for each of on, priced k, to the simulations. What it waits
// for a window or more before it has committed in every simulation by the
// time its work starts (see simulator.startAt), and is left out.
func (st *modeState) simulate(seq, wait uint64, on []uint64, k txnCost) {
	if w := st.window; w > 0 && seq > w {
		if st.longCommitted(seq, wait) {
			wait = 0
		}
		st.recent = st.recent[:0]
		for _, o := range on {
			if o > seq-w {
				st.recent = append(st.recent, o)
			}
		}
		on = st.recent
	}
	for j, sim := range st.sims {
		start := sim.add(seq, wait, on, k)
		if j == st.widest {
			st.hist[sim.busy(start)]++
		}
	}
}

// follow is called for each transaction before the mode followed
// measures it: the first that carries a source session ends the
// following.
func (st *modeState) follow(txn *binlog.Txn) {
	if st.follows != nil && txn.ThreadID != 0 {
		st.adopt()
	}
}

// adopt makes st, which followed another mode, a copy of it that goes on
// in its own mode (see follows).
func (st *modeState) adopt() {
	l := st.follows
	st.follows = nil
	st.tracker = l.tracker.CloneAs(deptrack.WritesetSession)
	st.chains = l.chains.clone()
	st.sims = make([]*simulator, len(l.sims))
	for i, s := range l.sims {
		st.sims[i] = s.clone()
	}
	st.ordered, st.unordered, st.smaller = l.ordered, l.unordered, l.smaller
	st.base, st.widest, st.window = l.base, l.widest, l.window
	st.hist = slices.Clone(l.hist)
	st.forgottenWaits = l.forgottenWaits
}
