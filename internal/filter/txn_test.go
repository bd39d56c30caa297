package filter

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
)

// fixture is a MariaDB 10.11 binlog (CRC32, full row metadata) of one
// database, fx: a statement that writes two tables (fx.a and, through a
// trigger, fx.audit: 0-1-6), savepoints, statement-format DML (0-1-20,
// 0-1-21), DDL, CREATE ... SELECT.
const fixture = "../binlog/testdata/mariadb-10.11-fidelity.000001"

// rawTxns reads the fixture's transactions as raw events, by GTID.
func rawTxns(t *testing.T) map[string]*binlog.RawTxn {
	t.Helper()
	txns, err := binlog.FrameFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*binlog.RawTxn{}
	for _, rt := range txns {
		g, err := rt.GTID()
		if err != nil {
			t.Fatal(err)
		}
		out[g.String()] = rt
	}
	return out
}

func decode(t *testing.T, rt *binlog.RawTxn) *binlog.Txn {
	t.Helper()
	txn, err := binlog.NewDecoder().Decode(rt)
	if err != nil {
		t.Fatal(err)
	}
	return txn
}

// rowsText renders a transaction's rows: table, kind, changes, flags.
func rowsText(txn *binlog.Txn) string {
	var b strings.Builder
	for _, r := range txn.Rows {
		fmt.Fprintf(&b, "%s.%s %s %d end=%t; ", r.Schema(), r.Name(), r.Op, r.Changes(), r.Flags&binlog.RowsFlagStmtEnd != 0)
	}
	return b.String()
}

// checkRaw parses every event of rt with go-mysql, checksums verified,
// and decodes rt again: the rows must be those of want (the transaction
// filtered), each statement's last rows event must end it, and no table
// map may be left without rows.
func checkRaw(t *testing.T, rt *binlog.RawTxn, want *binlog.Txn) {
	t.Helper()
	p := replication.NewBinlogParser()
	p.SetFlavor("mariadb")
	p.SetVerifyChecksum(true)
	if _, err := p.Parse(rt.Format.Event.Data); err != nil {
		t.Fatal(err)
	}
	maps := 0
	for _, ev := range rt.Events {
		if _, err := p.Parse(ev.Data); err != nil {
			t.Fatalf("%s: go-mysql rejects the filtered event: %v", ev.Type(), err)
		}
		switch typ := ev.Type(); {
		case typ == replication.TABLE_MAP_EVENT:
			maps++
		case binlog.IsRowsEvent(typ):
			if maps == 0 {
				t.Fatal("a rows event without a table map before it")
			}
			if binlog.RowsFlags(ev)&binlog.RowsFlagStmtEnd != 0 {
				maps = 0
			}
		}
	}
	if maps != 0 {
		t.Fatal("the last statement kept does not end (table maps without a rows event that ends them)")
	}
	got := decode(t, rt)
	if g, w := rowsText(got), rowsText(want); g != w {
		t.Fatalf("the filtered events decode to\n  %s\nthe filtered transaction has\n  %s", g, w)
	}
	for i := range got.Rows {
		if !slices.EqualFunc(got.Rows[i].Images, want.Rows[i].Images, slices.Equal) {
			t.Fatalf("rows event %d: images differ", i)
		}
	}
}

// TestTxnKeepsIncludedTables: of a statement writing fx.a and fx.audit,
// only the included table's rows remain, in the decoded transaction and
// in its events; the last rows event kept gets the end-of-statement flag
// the dropped one had.
func TestTxnKeepsIncludedTables(t *testing.T) {
	raws := rawTxns(t)
	rt := raws["0-1-6"]
	if got := rowsText(decode(t, rt)); got != "fx.a update 1 end=false; fx.audit insert 1 end=true; " {
		t.Fatalf("fixture changed: %s", got)
	}
	for _, c := range []struct {
		include, exclude []string
		want             string
		rows             int
	}{
		{include: []string{"fx.a"}, want: "fx.a update 1 end=true; ", rows: 1},
		{exclude: []string{"%.audit"}, want: "fx.a update 1 end=true; ", rows: 1},
		{include: []string{"fx.%"}, exclude: []string{"fx.a"}, want: "fx.audit insert 1 end=true; ", rows: 1},
		{include: []string{"f%.*"}, want: "fx.a update 1 end=false; fx.audit insert 1 end=true; "},
	} {
		f := New(mustRules(t, c.include, c.exclude, nil))
		txn := decode(t, rt)
		o, err := f.Txn(txn)
		if err != nil {
			t.Fatal(err)
		}
		if got := rowsText(txn); got != c.want || o.Rows != c.rows || o.Whole {
			t.Fatalf("%v %v: %s, outcome %+v; want %s", c.include, c.exclude, got, o, c.want)
		}
		raw, err := f.Raw(o).Piece(rt, true)
		if err != nil {
			t.Fatal(err)
		}
		checkRaw(t, raw, txn)
		if o.Rows > 0 && len(raw.Events) >= len(rt.Events) {
			t.Fatalf("%d events kept of %d", len(raw.Events), len(rt.Events))
		}
	}
}

// TestTxnRewrite: rows and table map events of a renamed database name
// the new one; the source's table maps are left alone.
func TestTxnRewrite(t *testing.T) {
	raws := rawTxns(t)
	rt := raws["0-1-6"]
	f := New(mustRules(t, []string{"ü`ber.%"}, []string{"ü`ber.audit"}, []string{"fx=ü`ber"}))
	txn := decode(t, rt)
	orig := txn.Rows[0].Table
	o, err := f.Txn(txn)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsText(txn); got != "ü`ber.a update 1 end=true; " || !o.Renamed {
		t.Fatalf("%s, %+v", got, o)
	}
	if string(orig.Schema) != "fx" {
		t.Fatal("the source's table map was changed")
	}
	raw, err := f.Raw(o).Piece(rt, true)
	if err != nil {
		t.Fatal(err)
	}
	checkRaw(t, raw, txn)
	for _, ev := range rt.Events {
		if ev.Type() == replication.TABLE_MAP_EVENT {
			if s, _, _ := binlog.TableMapNames(ev); s != "fx" {
				t.Fatal("the source's events were changed")
			}
		}
	}
}

// TestTxnWhollyFiltered: a transaction whose every change is left out
// keeps nothing to apply, rows or statements, and its events keep no
// table map and no rows.
func TestTxnWhollyFiltered(t *testing.T) {
	raws := rawTxns(t)
	f := New(mustRules(t, []string{"other.%"}, nil, nil))
	for _, g := range []string{"0-1-5", "0-1-6", "0-1-17", "0-1-20", "0-1-21", "0-1-23", "0-1-2", "0-1-4"} {
		txn := decode(t, raws[g])
		o, err := f.Txn(txn)
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		if !o.Whole || len(txn.Rows) != 0 || len(txn.Statements) != 0 || txn.DDL || txn.StatementDML {
			t.Fatalf("%s: outcome %+v, rows %d, statements %d, ddl %t, statement DML %t", g, o, len(txn.Rows), len(txn.Statements), txn.DDL, txn.StatementDML)
		}
		raw, err := f.Raw(o).Piece(raws[g], true)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range raw.Events {
			typ := ev.Type()
			if typ == replication.TABLE_MAP_EVENT || binlog.IsRowsEvent(typ) {
				t.Fatalf("%s: a %s is left", g, typ)
			}
			if typ == replication.QUERY_EVENT {
				if q, _ := binlog.QueryText(ev, raw.Format); binlog.ClassifyStatement(q) == binlog.StmtDML {
					t.Fatalf("%s: statement %q is left", g, q)
				}
			}
		}
	}
	// The last piece of a large transaction, read alone, comes without
	// the table maps its rows events refer to.
	rt := raws["0-1-6"]
	piece := &binlog.RawTxn{Format: rt.Format}
	for _, ev := range rt.Events {
		if ev.Type() != replication.TABLE_MAP_EVENT {
			piece.Events = append(piece.Events, ev)
		}
	}
	o, err := f.Txn(decode(t, rt))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Raw(o).Piece(piece, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range raw.Events {
		if binlog.IsRowsEvent(ev.Type()) {
			t.Fatal("a rows event of a transaction left out whole is left, its table map not read")
		}
	}
	var c Counts
	c.Add(Outcome{Whole: true, Rows: 3, Statements: 1})
	c.Add(Outcome{Rows: 2})
	if c != (Counts{Transactions: 1, Rows: 5, Statements: 1}) {
		t.Fatalf("counts %+v", c)
	}
}

// TestTxnSavepointsKeepTheirPlace: with rows left out before a
// savepoint, the savepoint still comes after the rows kept before it.
func TestTxnSavepointsKeepTheirPlace(t *testing.T) {
	raws := rawTxns(t)
	txn := decode(t, raws["0-1-20"]) // a, audit, SAVEPOINT p, INSERT a (statement), DELETE a (statement)
	at := map[string]int{}
	for _, st := range txn.Statements {
		at[st.Query] = st.At
	}
	if at["SAVEPOINT `p`"] != 2 {
		t.Fatalf("fixture changed: %+v", txn.Statements)
	}
	f := New(mustRules(t, nil, []string{"fx.a"}, nil))
	o, err := f.Txn(txn)
	if err != nil {
		t.Fatal(err)
	}
	// fx.a's rows and statements go; the audit row stays, the savepoint
	// after it.
	if rowsText(txn) != "fx.audit insert 1 end=true; " || len(txn.Statements) != 1 || txn.Statements[0].At != 1 || txn.StatementDML || o.Statements != 2 {
		t.Fatalf("rows %s, statements %+v, statement DML %t, outcome %+v", rowsText(txn), txn.Statements, txn.StatementDML, o)
	}
}

// TestRawPieces: filtering a transaction cut anywhere into two pieces
// gives the events filtering it whole gives.
func TestRawPieces(t *testing.T) {
	raws := rawTxns(t)
	for _, g := range []string{"0-1-6", "0-1-20", "0-1-23"} {
		rt := raws[g]
		for _, rules := range []Rules{
			mustRules(t, nil, []string{"fx.audit"}, []string{"fx=renamed"}),
			mustRules(t, nil, []string{"fx.a"}, nil),
		} {
			f := New(rules)
			o, err := f.Txn(decode(t, rt))
			if err != nil {
				t.Fatal(err)
			}
			whole, err := f.Raw(o).Piece(rt, true)
			if err != nil {
				t.Fatal(err)
			}
			for cut := 0; cut <= len(rt.Events); cut++ {
				raw := f.Raw(o)
				a, err := raw.Piece(&binlog.RawTxn{Events: rt.Events[:cut], Format: rt.Format, Part: true}, false)
				if err != nil {
					t.Fatal(err)
				}
				b, err := raw.Piece(&binlog.RawTxn{Events: rt.Events[cut:], Format: rt.Format}, true)
				if err != nil {
					t.Fatal(err)
				}
				got := append(slices.Clone(a.Events), b.Events...)
				if !slices.EqualFunc(got, whole.Events, func(x, y binlog.Event) bool { return string(x.Data) == string(y.Data) }) {
					t.Fatalf("%s cut before event %d: %d events, %d whole", g, cut, len(got), len(whole.Events))
				}
			}
		}
	}
}
