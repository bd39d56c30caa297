package deptrack

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/paraply/paraply/internal/binlog"
)

// Mode is a dependency mode (see the package comment).
type Mode uint8

// The modes, in the order analyze reports them.
const (
	Serial Mode = iota
	Database
	CommitOrder
	WritesetMode
	WritesetSession
)

// Modes lists every mode.
var Modes = []Mode{Serial, Database, CommitOrder, WritesetMode, WritesetSession}

var modeNames = [...]string{"serial", "database", "commit-order", "writeset", "writeset-session"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// ParseMode parses a mode name as the command line spells it.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown dependency mode %q (want serial, database, commit-order, writeset or writeset-session)", s)
}

// UsesWritesets reports whether the mode needs row keys.
func (m Mode) UsesWritesets() bool { return m == WritesetMode || m == WritesetSession }

// DefaultHistorySize is MySQL's binlog_transaction_dependency_history_size.
const DefaultHistorySize = 25000

// maxSharedDeps bounds the explicit predecessors an exclusive table token
// collects from shared holders; beyond it the exclusive holder waits on a
// watermark instead (safe, less precise).
const maxSharedDeps = 64

// Deps is what a transaction waits for: every transaction numbered up to
// Wait, and each of On (all greater than Wait, ascending).
type Deps struct {
	Wait uint64
	On   []uint64
	// Cause is the barrier cause, or the note that shaped the deps most.
	Cause Cause
	// Conflicts are indexes into the writeset's Keys that had an earlier
	// writer (writeset modes only), for hot-key statistics.
	Conflicts []int
	// Writers[i] is the earlier writer of Keys[Conflicts[i]]: whether it
	// is still running when the transaction is admitted is what makes the
	// conflict a wait (the scheduler counts only those).
	Writers []uint64
}

// LastCommitted is the MySQL-style single parent: the newest predecessor.
func (d Deps) LastCommitted() uint64 {
	if n := len(d.On); n > 0 && d.On[n-1] > d.Wait {
		return d.On[n-1]
	}
	return d.Wait
}

// WaitsForMarked reports whether the transaction waits for one of the
// run first, first+1, ... that marked flags (marked[i] for first+i). A
// Wait reaching into the run counts as waiting for all of it up to there.
// The scheduler and the analyzer's simulator use it to find, in a batch,
// the transactions applied after its commit turn.
func (d Deps) WaitsForMarked(first uint64, marked []bool) bool {
	if d.Wait >= first {
		for _, m := range marked[:min(d.Wait-first+1, uint64(len(marked)))] {
			if m {
				return true
			}
		}
	}
	for _, o := range d.On {
		if o >= first && o-first < uint64(len(marked)) && marked[o-first] {
			return true
		}
	}
	return false
}

// Stats are a tracker's counters.
type Stats struct {
	Transactions int64
	// Statements counts the transactions with statement-format DML (a
	// MIXED or STATEMENT source); Causes[CauseStatement] those of them
	// whose rows could not be told from their text.
	Statements int64
	// Causes counts transactions by cause (barriers and notes).
	Causes [numCauses]int64
	// Forgotten is the number of keys the bounded history evicted.
	Forgotten int64
}

// Tracker computes Deps for one mode. Not safe for concurrent use; the
// scheduler owns it.
type Tracker struct {
	mode  Mode
	last  uint64 // Seq of the previous transaction
	fence uint64 // newest barrier: everyone waits for it
	stats Stats

	schemas map[string]uint64 // database: last writer per schema

	clockFile string            // commit-order: file of the current MySQL clock epoch
	clock     []clockEntry      // commit-order: this epoch's transactions, by sequence_number
	commitID  uint64            // commit-order: MariaDB commit_id of the previous transaction
	groupWait uint64            // commit-order: what the current MariaDB group waits for
	keys      *history          // writeset: last writer per key
	sessions  *history          // writeset-session: last transaction per session
	tokens    map[uint64]*token // writeset: table tokens
	dedupe    map[uint64]struct{}
}

// clockEntry is one transaction of a MySQL logical clock epoch.
type clockEntry struct {
	number int64  // sequence_number
	seq    uint64 // Seq
}

type token struct {
	exclusive uint64   // last exclusive holder
	shared    []uint64 // shared holders since then
	sharedMax uint64   // newest shared holder, when shared overflowed
}

// NewTracker returns a tracker for mode with a key history of historySize
// keys (0 = DefaultHistorySize).
func NewTracker(mode Mode, historySize int) *Tracker {
	t := &Tracker{mode: mode}
	switch mode {
	case Database:
		t.schemas = map[string]uint64{}
	case CommitOrder:
	case WritesetMode, WritesetSession:
		t.keys = newHistory(historySize)
		t.tokens = map[uint64]*token{}
		t.dedupe = map[uint64]struct{}{}
		if mode == WritesetSession {
			t.sessions = newHistory(65536)
		}
	}
	return t
}

// Mode is the tracker's mode.
func (t *Tracker) Mode() Mode { return t.mode }

// Stats returns the counters so far.
func (t *Tracker) Stats() Stats {
	s := t.stats
	if t.keys != nil {
		s.Forgotten = t.keys.evictions
	}
	return s
}

// AddIsolated is Add for a transaction that must run alone in time: it
// waits for every transaction before it, and every later one waits for
// it, whatever its rows (a source restart: see stage.Txn.SourceRestarted).
func (t *Tracker) AddIsolated(txn *binlog.Txn, ws *Writeset) Deps {
	prev := t.last
	d := t.Add(txn, ws)
	d.Wait, d.On = max(d.Wait, prev), d.On[:0]
	t.fence = txn.Seq
	return d
}

// Add computes the dependencies of txn, which must come right after the
// previous one added (txn.Seq increasing). ws is txn's writeset; only the
// writeset modes read it. The returned Deps belongs to the caller.
func (t *Tracker) Add(txn *binlog.Txn, ws *Writeset) Deps {
	seq := txn.Seq
	prev := t.last
	t.last = seq
	t.stats.Transactions++
	if txn.StatementDML {
		t.stats.Statements++
	}
	group := t.mariaGroup(txn, prev)
	var d Deps
	switch t.mode {
	case Serial:
		d.Wait = prev
	case Database:
		d = t.database(txn, prev)
	case CommitOrder:
		d = t.commitOrder(txn, prev, group)
	default:
		d = t.writeset(txn, ws, prev)
	}
	if d.Cause.IsBarrier() {
		d.Wait, d.On = prev, d.On[:0]
		if d.Cause == CauseStatement {
			// A statement's rows are unknown, but the transactions of
			// its MariaDB commit group before it ran beside it on the
			// source (MariaDB's conservative parallel replication):
			// it waits for what its group waits for, and everything
			// after it waits for it.
			d.Wait = max(group, t.fence)
		}
		t.fence = seq
	} else if d.Wait < t.fence {
		d.Wait = t.fence
	}
	d.On = trimAbove(d.On, d.Wait)
	if d.Cause != CauseNone {
		t.stats.Causes[d.Cause]++
	}
	return d
}

func (t *Tracker) database(txn *binlog.Txn, prev uint64) Deps {
	var d Deps
	if txn.DDL {
		d.Cause = CauseDDL
	} else if txn.StatementDML {
		// A statement may touch databases other than its current one.
		d.Cause = CauseStatement
	}
	for _, s := range txn.Schemas() {
		if w := t.schemas[s]; w > 0 {
			d.On = append(d.On, w)
		}
		t.schemas[s] = txn.Seq
	}
	return d
}

func (t *Tracker) commitOrder(txn *binlog.Txn, prev, group uint64) Deps {
	var d Deps
	switch {
	case txn.Clock.Logical:
		d = t.logicalClock(txn, prev)
	case txn.DDL:
	default:
		d.Wait = group
	}
	if txn.DDL {
		d.Cause = CauseDDL
	}
	return d
}

// mariaGroup follows MariaDB's group commits: consecutive transactions
// with one commit_id committed together on the source, so none of them
// waited for another. It returns what txn's group waits for: the
// transaction before the group's first; prev for a transaction outside
// any group (no commit_id) or with a clock of MySQL's.
func (t *Tracker) mariaGroup(txn *binlog.Txn, prev uint64) uint64 {
	c := txn.Clock
	switch {
	case c.Logical || txn.DDL:
		return prev
	case c.CommitID != 0 && c.CommitID == t.commitID:
		return t.groupWait
	case c.CommitID != 0:
		t.commitID, t.groupWait = c.CommitID, prev
		return prev
	}
	t.commitID = 0
	return prev
}

// logicalClock schedules by MySQL's watermark: a transaction waits for
// every transaction whose sequence_number is at most its last_committed.
// Every transaction enters the epoch's clock, DDL included, so that a
// last_committed naming a DDL (or any transaction of the file) is found.
func (t *Tracker) logicalClock(txn *binlog.Txn, prev uint64) Deps {
	var d Deps
	c := txn.Clock
	// sequence_number restarts in each binlog file.
	if n := len(t.clock); txn.Start.File != t.clockFile || (n > 0 && c.SequenceNumber <= t.clock[n-1].number) {
		t.clockFile = txn.Start.File
		t.clock = t.clock[:0]
	}
	// The newest transaction numbered at most last_committed: numbers are
	// consecutive within a file, so every one below it was seen too,
	// unless last_committed is older than the first one seen.
	i, _ := slices.BinarySearchFunc(t.clock, c.LastCommitted+1, func(e clockEntry, n int64) int { return cmp.Compare(e.number, n) })
	t.clock = append(t.clock, clockEntry{number: c.SequenceNumber, seq: txn.Seq})
	if c.LastCommitted == 0 || i == 0 || c.LastCommitted >= c.SequenceNumber {
		d.Wait, d.Cause = prev, CauseUnknownClock
		return d
	}
	d.Wait = t.clock[i-1].seq
	return d
}

func (t *Tracker) writeset(txn *binlog.Txn, ws *Writeset, prev uint64) Deps {
	var d Deps
	if ws.Barrier != CauseNone {
		d.Cause = ws.Barrier
		return d
	}
	seq := txn.Seq
	clear(t.dedupe)
	add := func(s uint64) {
		if s == 0 || s == seq {
			return
		}
		if _, ok := t.dedupe[s]; !ok {
			t.dedupe[s] = struct{}{}
			d.On = append(d.On, s)
		}
	}
	missed := false
	for i, k := range ws.Keys {
		if w, ok := t.keys.get(k); ok {
			add(w)
			d.Conflicts = append(d.Conflicts, i)
			d.Writers = append(d.Writers, w)
		} else {
			missed = true
		}
	}
	if missed && t.keys.forgotten > 0 {
		d.Wait = t.keys.forgotten
		d.Cause = CauseHistory
	}
	for _, k := range ws.Keys {
		t.keys.put(k, seq)
	}
	for _, tk := range ws.Exclusive {
		st := t.token(tk)
		add(st.exclusive)
		for _, s := range st.shared {
			add(s)
		}
		if st.sharedMax > d.Wait {
			d.Wait = st.sharedMax
		}
		st.exclusive, st.shared, st.sharedMax = seq, st.shared[:0], 0
	}
	for _, tk := range ws.Shared {
		st := t.token(tk)
		if st.exclusive == seq {
			continue // this transaction also holds it exclusively
		}
		add(st.exclusive)
		if len(st.shared) < maxSharedDeps {
			st.shared = append(st.shared, seq)
		} else {
			st.sharedMax = seq
		}
	}
	if len(ws.Notes) > 0 && d.Cause == CauseNone {
		d.Cause = ws.Notes[0]
	}
	if t.mode == WritesetSession && txn.ThreadID != 0 {
		sk := uint64(txn.ThreadID)
		if w, ok := t.sessions.get(sk); ok {
			add(w)
		} else if t.sessions.forgotten > d.Wait {
			d.Wait = t.sessions.forgotten
		}
		t.sessions.put(sk, seq)
	}
	slices.Sort(d.On)
	return d
}

func (t *Tracker) token(k uint64) *token {
	st := t.tokens[k]
	if st == nil {
		st = &token{}
		t.tokens[k] = st
	}
	return st
}

// trimAbove keeps the entries of sorted-or-not s greater than w, in
// ascending order.
func trimAbove(s []uint64, w uint64) []uint64 {
	out := s[:0]
	for _, x := range s {
		if x > w {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// CloneAs returns a tracker in mode that has seen what t has seen, for a
// mode whose dependencies have been t's on the stream so far: a
// writeset-session tracker started from a writeset one once the stream
// carries its first session id (before it, the two agree: see
// writeset). analyze runs one tracker for both until then.
func (t *Tracker) CloneAs(mode Mode) *Tracker {
	c := *t
	c.mode = mode
	c.schemas = maps.Clone(t.schemas)
	c.clock = slices.Clone(t.clock)
	c.keys, c.sessions = t.keys.clone(), t.sessions.clone()
	if mode == WritesetSession && c.sessions == nil {
		c.sessions = newHistory(65536)
	}
	if t.tokens != nil {
		c.tokens = make(map[uint64]*token, len(t.tokens))
		for k, tk := range t.tokens {
			cp := *tk
			cp.shared = slices.Clone(tk.shared)
			c.tokens[k] = &cp
		}
	}
	if t.dedupe != nil {
		c.dedupe = map[uint64]struct{}{}
	}
	return &c
}
