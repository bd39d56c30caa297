package binlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/fixtures"
)

// TestFramingMariaDBGroups reads a binlog MariaDB 10.11 wrote for the
// workload in testdata/mariadb-10.11-fidelity.sql: one transaction of each
// kind an application writes. Each GTID must be one transaction, with its
// savepoints in place, its XA phase and XID, and its statements in order.
func TestFramingMariaDBGroups(t *testing.T) {
	res := readAll("testdata/mariadb-10.11-fidelity.000001")
	if res.err != nil || res.panic != "" {
		t.Fatalf("reading: %v %s", res.err, res.panic)
	}
	if len(res.txns) != 23 {
		t.Fatalf("%d transactions, want 23 (one per GTID 0-1-1 .. 0-1-23)", len(res.txns))
	}
	for i, txn := range res.txns {
		if want := uint64(i + 1); txn.GTID.Seq != want {
			t.Fatalf("transaction %d has GTID %s, want 0-1-%d", i+1, txn.GTID, want)
		}
		// As the server flagged them: NEXTVAL (a sequence's row is not
		// rolled back), the MyISAM rows, and 0-1-23, whose InnoDB rows
		// were in a transaction that changed a MyISAM table (its row was
		// logged apart, as 0-1-22). Not CREATE TABLE my: DDL.
		if s := txn.GTID.Seq; txn.NonTransactional() != (s == 11 || s == 19 || s == 22 || s == 23) {
			t.Errorf("0-1-%d: non-transactional %t", s, txn.NonTransactional())
		}
	}
	type want struct {
		rows      int      // row changes
		stmts     []string // statements, with their At: "2:SAVEPOINT `s`"
		ddl       bool
		stmtDML   bool
		xa        XAPhase
		xid       string
		rollsBack bool
	}
	cases := map[uint64]want{
		5:  {rows: 2, stmts: []string{"1:SAVEPOINT `s`"}},
		6:  {rows: 2},
		9:  {rows: 2}, // versioned: the current row updated, the history row inserted
		11: {rows: 1},
		12: {rows: 1, xa: XAPrepare, xid: "X'7831',X'',1"},
		13: {xa: XACommit, xid: "X'7831',X'',1"},
		14: {rows: 1, xa: XAPrepare, xid: "X'7832',X'6232',7"},
		15: {xa: XARollback, xid: "X'7832',X'6232',7"},
		16: {rows: 1},
		17: {rows: 4, ddl: true, stmts: []string{"0:CREATE TABLE `ctas`"}},
		19: {rows: 2},
		20: {rows: 2, stmtDML: true, stmts: []string{"2:SAVEPOINT `p`", "2:INSERT INTO a VALUES (40, 40)", "2:DELETE FROM a WHERE id = 40"}},
		21: {stmtDML: true, stmts: []string{"0:INSERT INTO audit (delta) VALUES (6)", "0:INSERT INTO audit (delta) VALUES (7)"}},
		22: {rows: 1},
		23: {rows: 3, stmts: []string{"1:SAVEPOINT `q`", "2:ROLLBACK TO `q`"}, rollsBack: true},
	}
	for seq, w := range cases {
		txn := res.txns[seq-1]
		var got []string
		for _, s := range txn.Statements {
			q := s.Query
			if i := strings.IndexByte(q, '\n'); i >= 0 {
				q = strings.TrimSpace(q[:i])
			}
			if strings.HasPrefix(q, "CREATE TABLE `ctas`") {
				q = "CREATE TABLE `ctas`"
			}
			got = append(got, strconv.Itoa(s.At)+":"+q)
		}
		if txn.RowCount() != w.rows || strings.Join(got, "|") != strings.Join(w.stmts, "|") || txn.DDL != w.ddl ||
			txn.StatementDML != w.stmtDML || txn.XA != w.xa || txn.XID != w.xid || txn.RollsBackToSavepoint() != w.rollsBack {
			t.Errorf("0-1-%d: rows %d, statements %q, ddl %t, statement DML %t, %q %q, rolls back %t;\nwant rows %d, statements %q, ddl %t, statement DML %t, %q %q, rolls back %t",
				seq, txn.RowCount(), got, txn.DDL, txn.StatementDML, txn.XA, txn.XID, txn.RollsBackToSavepoint(),
				w.rows, w.stmts, w.ddl, w.stmtDML, w.xa, w.xid, w.rollsBack)
		}
	}
}

// TestParseXID reads the XIDs of XA COMMIT and XA ROLLBACK as users and
// servers write them.
func TestParseXID(t *testing.T) {
	for q, want := range map[string]string{
		"XA COMMIT X'7831',X'',1":           "X'7831',X'',1",
		"XA COMMIT 'x1'":                    "X'7831',X'',1",
		"xa rollback 'x2', 'b2', 7":         "X'7832',X'6232',7",
		"XA COMMIT 0x6162,'c'":              "X'6162',X'63',1",
		"XA COMMIT 'it''s'":                 "X'69742773',X'',1",
		"/* c */ XA ROLLBACK X'00FF',X'',0": "X'00FF',X'',0",
	} {
		got, err := parseXID(q)
		if err != nil || got != want {
			t.Errorf("parseXID(%q) = %q, %v; want %q", q, got, err, want)
		}
	}
	for _, q := range []string{"XA COMMIT", "XA COMMIT 'x", "XA COMMIT X'zz'"} {
		if _, err := parseXID(q); err == nil {
			t.Errorf("parseXID(%q): no error", q)
		}
	}
	if !xaOnePhase("XA COMMIT 'x3' ONE PHASE") || xaOnePhase("XA COMMIT 'x3'") {
		t.Error("xaOnePhase")
	}
}

// TestXAPrepareEvent reads XA_PREPARE_LOG_EVENT bodies laid out as MySQL's
// Xa_prepare_log_event writes them: a prepare, and MySQL's XA COMMIT ...
// ONE PHASE (one_phase set), which commits the group and must not be held
// for an XA COMMIT that never comes (no MySQL server here to write one).
func TestXAPrepareEvent(t *testing.T) {
	body := func(onePhase byte, formatID uint32, gtrid, bqual string) []byte {
		b := []byte{onePhase}
		b = binary.LittleEndian.AppendUint32(b, formatID)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(gtrid)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(bqual)))
		return append(append(b, gtrid...), bqual...)
	}
	for _, c := range []struct {
		body     []byte
		xid      string
		onePhase bool
	}{
		{body(0, 1, "x1", ""), "X'7831',X'',1", false},
		{body(1, 7, "x3", "b"), "X'7833',X'62',7", true},
	} {
		xid, onePhase, err := xaPrepareXID(c.body)
		if err != nil || xid != c.xid || onePhase != c.onePhase {
			t.Errorf("%x: %q one phase %t (%v), want %q %t", c.body, xid, onePhase, err, c.xid, c.onePhase)
		}
	}
	if _, _, err := xaPrepareXID(body(0, 1, "x1", "")[:14]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a truncated XID: %v, want ErrCorrupt", err)
	}
}

// TestFramerRecycle: a framer whose transactions are given back once
// used frames a binlog as one whose are not, and reuses the room.
func TestFramerRecycle(t *testing.T) {
	path := filepath.Join(fixtures.Root(), "internal", "binlog", "testdata", "mariadb-10.11-fidelity.000001")
	want, err := FrameFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fr := NewFileReader(path)
	defer fr.Close()
	f := NewFramer()
	var got [][]Event
	var room *Event // where the last recycled transaction's events were
	reused := 0
	for {
		ev, err := fr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Push(ev); err != nil {
			t.Fatal(err)
		}
		for rt := f.Next(); rt != nil; rt = f.Next() {
			if len(rt.Events) == 0 {
				t.Fatal("a transaction without events")
			}
			if &rt.Events[0] == room {
				reused++
			}
			got = append(got, slices.Clone(rt.Events))
			room = &rt.Events[0]
			f.Recycle(rt)
			if rt.Events != nil {
				t.Fatal("a recycled transaction still holds its events")
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d transactions with Recycle, %d without", len(got), len(want))
	}
	for i := range want {
		if !slices.EqualFunc(got[i], want[i].Events, func(a, b Event) bool { return bytes.Equal(a.Data, b.Data) && a.Pos == b.Pos }) {
			t.Fatalf("transaction %d differs with Recycle", i+1)
		}
	}
	if reused == 0 {
		t.Error("Recycle kept no room for reuse")
	}
}
