package deptrack

import (
	"math/rand/v2"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
)

// criticalPath computes the longest chain through deps (test oracle).
func criticalPath(deps []Deps) int {
	depth := make([]int, len(deps)+1)
	best := 0
	for i, d := range deps {
		seq := i + 1
		m := 0
		for j := 1; j <= int(d.Wait); j++ {
			m = max(m, depth[j])
		}
		for _, o := range d.On {
			m = max(m, depth[o])
		}
		depth[seq] = m + 1
		best = max(best, depth[seq])
	}
	return best
}

type step struct {
	keys    []uint64
	thread  uint32
	barrier Cause
	excl    []uint64
	shared  []uint64
}

func run(mode Mode, history int, steps []step) []Deps {
	tr := NewTracker(mode, history)
	out := make([]Deps, len(steps))
	for i, s := range steps {
		txn := &binlog.Txn{Seq: uint64(i + 1), ThreadID: s.thread}
		ws := &Writeset{Keys: s.keys, Barrier: s.barrier, Exclusive: s.excl, Shared: s.shared}
		if s.barrier == CauseDDL {
			txn.DDL = true
		}
		out[i] = tr.Add(txn, ws)
	}
	return out
}

// TestSessionsExample is the example: 4 sessions x 100
// transactions, session s cycling over its own 5 rows.
func TestSessionsExample(t *testing.T) {
	var steps []step
	for i := 0; i < 100; i++ {
		for s := 0; s < 4; s++ {
			steps = append(steps, step{keys: []uint64{uint64(s*5 + i%5 + 1)}, thread: uint32(s + 1)})
		}
	}
	for mode, want := range map[Mode]int{Serial: 400, WritesetMode: 20, WritesetSession: 100} {
		if got := criticalPath(run(mode, 0, steps)); got != want {
			t.Errorf("%s: critical path %d, want %d", mode, got, want)
		}
	}
}

func TestBarrierSplitsStream(t *testing.T) {
	var steps []step
	for i := 0; i < 10; i++ {
		steps = append(steps, step{keys: []uint64{uint64(i + 1)}})
	}
	steps = append(steps, step{barrier: CauseDDL})
	for i := 0; i < 10; i++ {
		steps = append(steps, step{keys: []uint64{uint64(i + 1)}})
	}
	deps := run(WritesetMode, 0, steps)
	if got := criticalPath(deps); got != 3 {
		t.Fatalf("critical path %d, want 3", got)
	}
	if d := deps[10]; d.Wait != 10 || d.Cause != CauseDDL {
		t.Errorf("barrier deps = %+v, want Wait 10, cause ddl", d)
	}
	if d := deps[11]; d.Wait != 11 {
		t.Errorf("after barrier: Wait = %d, want 11", d.Wait)
	}
}

func TestLastCommitted(t *testing.T) {
	d := Deps{Wait: 3, On: []uint64{5, 9}}
	if d.LastCommitted() != 9 {
		t.Fatal(d.LastCommitted())
	}
	if (Deps{Wait: 4}).LastCommitted() != 4 {
		t.Fatal("watermark only")
	}
}

// ancestors returns, for each transaction, the set of transactions it
// waits for directly or transitively (bitsets as bool slices).
func ancestors(deps []Deps) [][]bool {
	n := len(deps)
	anc := make([][]bool, n+1)
	for i, d := range deps {
		seq := i + 1
		a := make([]bool, n+1)
		mark := func(p uint64) {
			a[p] = true
			for q := 1; q <= n; q++ {
				if anc[p][q] {
					a[q] = true
				}
			}
		}
		for p := uint64(1); p <= d.Wait; p++ {
			mark(p)
		}
		for _, p := range d.On {
			if p >= uint64(seq) {
				panic("dependency on a later transaction")
			}
			mark(p)
		}
		anc[seq] = a
	}
	return anc
}

// TestSafetyProperty: in random workloads, whenever two transactions
// conflict (a common key, a barrier, the same session in
// writeset-session, an exclusive token against any holder), the later
// waits for the earlier, directly or transitively — whatever the history
// size, so that forgetting keys stays safe.
func TestSafetyProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 40; round++ {
		n := 150
		keySpace := 5 + rng.IntN(200)
		steps := make([]step, n)
		for i := range steps {
			s := step{thread: uint32(1 + rng.IntN(4))}
			switch r := rng.IntN(100); {
			case r < 2:
				s.barrier = CauseDDL
			case r < 6:
				s.excl = []uint64{uint64(1 + rng.IntN(3))}
			case r < 15:
				s.shared = []uint64{uint64(1 + rng.IntN(3))}
			}
			if s.barrier == CauseNone {
				for k := 0; k < 1+rng.IntN(6); k++ {
					s.keys = append(s.keys, uint64(1+rng.IntN(keySpace)))
				}
				s.keys = dedupeKeys(s.keys)
			}
			steps[i] = s
		}
		for _, mode := range []Mode{WritesetMode, WritesetSession} {
			for _, hist := range []int{3, 17, 100000} {
				deps := run(mode, hist, steps)
				anc := ancestors(deps)
				for j := 1; j < n; j++ {
					for i := 0; i < j; i++ {
						if conflict(steps[i], steps[j], mode) && !anc[j+1][i+1] {
							t.Fatalf("round %d %s history %d: txn %d does not wait for conflicting txn %d (deps %+v)",
								round, mode, hist, j+1, i+1, deps[j])
						}
					}
				}
			}
		}
	}
}

func dedupeKeys(k []uint64) []uint64 {
	seen := map[uint64]bool{}
	out := k[:0]
	for _, x := range k {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func conflict(a, b step, mode Mode) bool {
	if a.barrier != CauseNone || b.barrier != CauseNone {
		return true
	}
	if mode == WritesetSession && a.thread == b.thread {
		return true
	}
	for _, x := range a.keys {
		for _, y := range b.keys {
			if x == y {
				return true
			}
		}
	}
	for _, x := range a.excl {
		for _, y := range append(append([]uint64{}, b.excl...), b.shared...) {
			if x == y {
				return true
			}
		}
	}
	for _, x := range a.shared {
		for _, y := range b.excl {
			if x == y {
				return true
			}
		}
	}
	return false
}

// TestSharedTokensRunTogether: shared holders of a token do not wait for
// each other; an exclusive holder waits for all of them.
func TestSharedTokensRunTogether(t *testing.T) {
	steps := []step{{shared: []uint64{7}, keys: []uint64{1}}, {shared: []uint64{7}, keys: []uint64{2}}, {excl: []uint64{7}}, {shared: []uint64{7}, keys: []uint64{3}}}
	deps := run(WritesetMode, 0, steps)
	if len(deps[1].On) != 0 || deps[1].Wait != 0 {
		t.Errorf("second shared holder waits: %+v", deps[1])
	}
	if got := deps[2].On; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("exclusive holder waits for %v, want [1 2]", got)
	}
	if got := deps[3].On; len(got) != 1 || got[0] != 3 {
		t.Errorf("shared after exclusive waits for %v, want [3]", got)
	}
}

func TestCommitOrderMySQLClock(t *testing.T) {
	tr := NewTracker(CommitOrder, 0)
	type tx struct {
		file   string
		lc, sn int64
		want   uint64
		cause  Cause
	}
	// seq:        1     2     3     4     5     6 (new file)  7
	txs := []tx{
		{"f1", 0, 1, 0, CauseUnknownClock},
		{"f1", 1, 2, 1, CauseNone},
		{"f1", 1, 3, 1, CauseNone},
		{"f1", 3, 4, 3, CauseNone},
		{"f1", 2, 5, 2, CauseNone},
		{"f2", 0, 1, 5, CauseUnknownClock},
		{"f2", 1, 2, 6, CauseNone},
	}
	for i, x := range txs {
		txn := &binlog.Txn{Seq: uint64(i + 1), Start: binlog.Pos{File: x.file}, Clock: binlog.Clock{Logical: true, LastCommitted: x.lc, SequenceNumber: x.sn}}
		d := tr.Add(txn, &Writeset{})
		if d.Wait != x.want || d.Cause != x.cause {
			t.Errorf("txn %d (lc %d sn %d): Wait %d cause %s, want %d %s", i+1, x.lc, x.sn, d.Wait, d.Cause, x.want, x.cause)
		}
	}
}

// TestCommitOrderClockThroughDDL: a DDL enters the clock like any
// transaction, so one whose last_committed names it waits for it (and what
// came before it) instead of becoming a barrier; a last_committed between
// numbers seen, or older than the epoch's first, is a watermark too.
func TestCommitOrderClockThroughDDL(t *testing.T) {
	tr := NewTracker(CommitOrder, 0)
	type tx struct {
		lc, sn int64
		ddl    bool
		want   uint64
		cause  Cause
	}
	// seq:          1                2                       3     4
	txs := []tx{
		{lc: 5, sn: 6, want: 0, cause: CauseUnknownClock}, // started mid-file: parent unseen
		{lc: 6, sn: 7, ddl: true, want: 1, cause: CauseDDL},
		{lc: 7, sn: 8, want: 2, cause: CauseNone},
		{lc: 7, sn: 9, want: 2, cause: CauseNone},
	}
	for i, x := range txs {
		txn := &binlog.Txn{Seq: uint64(i + 1), DDL: x.ddl, Start: binlog.Pos{File: "f"}, Clock: binlog.Clock{Logical: true, LastCommitted: x.lc, SequenceNumber: x.sn}}
		d := tr.Add(txn, &Writeset{})
		if d.Wait != x.want || d.Cause != x.cause {
			t.Errorf("txn %d (lc %d sn %d): Wait %d cause %s, want %d %s", i+1, x.lc, x.sn, d.Wait, d.Cause, x.want, x.cause)
		}
	}
}

func TestCommitOrderMariaDBGroups(t *testing.T) {
	tr := NewTracker(CommitOrder, 0)
	// commit ids: 0 (no group), 10, 10, 10, 11, 0, 12, 12
	ids := []uint64{0, 10, 10, 10, 11, 0, 12, 12}
	want := []uint64{0, 1, 1, 1, 4, 5, 6, 6}
	for i, id := range ids {
		d := tr.Add(&binlog.Txn{Seq: uint64(i + 1), Clock: binlog.Clock{CommitID: id}}, &Writeset{})
		if d.Wait != want[i] {
			t.Errorf("txn %d (commit id %d): Wait %d, want %d", i+1, id, d.Wait, want[i])
		}
	}
}

func TestDatabaseMode(t *testing.T) {
	tr := NewTracker(Database, 0)
	mk := func(seq uint64, schemas ...string) *binlog.Txn {
		t := &binlog.Txn{Seq: seq}
		for _, s := range schemas {
			t.Statements = append(t.Statements, binlog.Statement{Schema: s})
		}
		return t
	}
	// Statements without DDL/DML flags stand in for row changes here.
	d1 := tr.Add(mk(1, "a"), nil)
	d2 := tr.Add(mk(2, "b"), nil)
	d3 := tr.Add(mk(3, "a", "b"), nil)
	d4 := tr.Add(mk(4, "b"), nil)
	if len(d1.On)+len(d2.On) != 0 {
		t.Errorf("first writers wait: %+v %+v", d1, d2)
	}
	if len(d3.On) != 2 || d3.On[0] != 1 || d3.On[1] != 2 {
		t.Errorf("cross-schema txn waits for %v, want [1 2]", d3.On)
	}
	if len(d4.On) != 1 || d4.On[0] != 3 {
		t.Errorf("txn 4 waits for %v, want [3]", d4.On)
	}
}

func TestHistoryForgetsOldestFirst(t *testing.T) {
	h := newHistory(3)
	for k := uint64(1); k <= 3; k++ {
		h.put(k, k)
	}
	h.put(1, 4) // key 1 rewritten: key 2 is now the oldest
	h.put(5, 5)
	if _, ok := h.get(2); ok {
		t.Error("key 2 should be forgotten first")
	}
	if s, ok := h.get(1); !ok || s != 4 {
		t.Errorf("key 1 = %d %v", s, ok)
	}
	if h.forgotten != 2 || h.evictions != 1 {
		t.Errorf("forgotten %d evictions %d, want 2 1", h.forgotten, h.evictions)
	}
	for i := uint64(0); i < 10000; i++ {
		h.put(9, 100+i) // one hot key must not grow the FIFO without bound
	}
	if len(h.fifo)-h.head > 4*h.capacity+1 {
		t.Errorf("fifo grew to %d entries for %d live keys", len(h.fifo)-h.head, len(h.last))
	}
}

// TestConflictsNameTheirWriters: each conflicting key comes with the
// transaction that wrote it last, the one a scheduler may find running.
func TestConflictsNameTheirWriters(t *testing.T) {
	deps := run(WritesetMode, 0, []step{
		{keys: []uint64{1, 2}},
		{keys: []uint64{3}},
		{keys: []uint64{2, 4}},
		{keys: []uint64{3, 2, 5}},
	})
	d := deps[3]
	if len(d.Conflicts) != 2 || d.Conflicts[0] != 0 || d.Conflicts[1] != 1 {
		t.Fatalf("conflicts %v, want keys 0 and 1", d.Conflicts)
	}
	if len(d.Writers) != 2 || d.Writers[0] != 2 || d.Writers[1] != 3 {
		t.Errorf("writers %v, want [2 3]: key 3 was written by 2, key 2 last by 3", d.Writers)
	}
	if len(deps[1].Writers) != 0 {
		t.Errorf("a transaction without conflicts has writers %v", deps[1].Writers)
	}
}

// TestStatementsInMariaDBGroups: in the writeset modes a statement-format
// transaction, whose rows are unknown, waits for what its MariaDB commit
// group waits for (the group's transactions before it ran beside it on
// the source), and everything after it waits for it.
func TestStatementsInMariaDBGroups(t *testing.T) {
	x := NewExtractor(nil)
	for _, mode := range []Mode{WritesetMode, WritesetSession, Database} {
		tr := NewTracker(mode, 0)
		type txn struct {
			id    uint64
			stmt  bool
			wants uint64 // Wait
		}
		for i, c := range []txn{
			{id: 7, wants: 0},              // 1: rows, its own group
			{id: 9, wants: 0},              // 2: rows, group 9 waits for 1 (writesets say nothing)
			{id: 9, stmt: true, wants: 1},  // 3: a statement in group 9: waits for what 9 waits for
			{id: 9, wants: 3},              // 4: after the statement
			{id: 0, stmt: true, wants: 4},  // 5: no group: waits for everything
			{id: 11, stmt: true, wants: 5}, // 6: its group's first
		} {
			tx := &binlog.Txn{Seq: uint64(i + 1), Clock: binlog.Clock{CommitID: c.id}, StatementDML: c.stmt}
			var ws Writeset
			x.Extract(tx, &ws)
			d := tr.Add(tx, &ws)
			if d.Wait != c.wants && !(c.wants == 0 && d.Wait == 0) {
				t.Errorf("%s: transaction %d: waits for %d, want %d", mode, i+1, d.Wait, c.wants)
			}
		}
	}
}
