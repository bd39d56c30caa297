package sqlgen

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
)

// Tables shared by the cases below.
var (
	// t(id int PK, c varchar utf8mb4, g int generated, n int)
	tCols = []col{intCol("id"), varcharCol("c"), {name: "g", typ: "int", tp: mysql.MYSQL_TYPE_LONG, nullable: true, generated: true}, {name: "n", typ: "int", tp: mysql.MYSQL_TYPE_LONG, nullable: true}}
	// c(a int, b varchar latin1, v varchar, PRIMARY KEY (a, b))
	cCols = []col{intCol("a"), {name: "b", typ: "varchar", tp: mysql.MYSQL_TYPE_VARCHAR, meta: 100, cs: "latin1", co: "latin1_german1_ci"}, varcharCol("v")}
	// k(a int, b varchar, g int generated): no key
	kCols = []col{{name: "a", typ: "int", tp: mysql.MYSQL_TYPE_LONG, nullable: true}, varcharCol("b"), {name: "g", typ: "int", tp: mysql.MYSQL_TYPE_LONG, nullable: true, generated: true}}
	// u(x int NULL, u int NOT NULL, v varchar, UNIQUE(x), UNIQUE(u)): keyed by u
	uCols = []col{{name: "x", typ: "int", tp: mysql.MYSQL_TYPE_LONG, nullable: true}, intCol("u"), varcharCol("v")}
)

// op is one call on a Batch.
type op struct {
	rows *binlog.Rows
	txn  int
	raw  string
}

func TestBatch(t *testing.T) {
	tt := newTable(t, "db", "t", tCols, primary(0))
	tc := newTable(t, "db", "c", cCols, primary(0, 1))
	tk := newTable(t, "db", "k", kCols)
	tu := newTable(t, "db", "u", uCols, unique("x", 0), unique("u", 1))
	tkl := newTable(t, "db", "kl", []col{latin1Col("l"), {name: "bin", typ: "varbinary", tp: mysql.MYSQL_TYPE_VARCHAR, meta: 10, cs: "binary", co: "binary", nullable: true}})
	weird := newTable(t, "d`b", "we`ird tåble", []col{intCol("co`l ü"), varcharCol("?'\"#-- \\")}, primary(0))

	ins := func(tab *Table, imgs ...[]any) *binlog.Rows { return rows(tab, binlog.Insert, imgs...) }
	del := func(tab *Table, imgs ...[]any) *binlog.Rows { return rows(tab, binlog.Delete, imgs...) }
	upd := func(tab *Table, imgs ...[]any) *binlog.Rows { return rows(tab, binlog.Update, imgs...) }
	with := func(r *binlog.Rows, before, after []byte) *binlog.Rows { r.Before, r.After = before, after; return r }

	cases := []struct {
		name    string
		max     int
		ops     []op
		sql     string
		args    []any
		expects []Expect
	}{{
		name:    "insert skips generated columns, one statement per event",
		ops:     []op{{rows: ins(tt, []any{int32(1), "a", int32(7), nil}, []any{int32(2), "b", int32(8), int32(-3)}), txn: 4}},
		sql:     "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?),(?,?,?)",
		args:    []any{int64(1), "a", nil, int64(2), "b", int64(-3)},
		expects: []Expect{{Rows: 2, Op: binlog.Insert, Table: tt.Name, Key: "id=1", Txn: 4, LastTxn: 4}},
	}, {
		name: "inserts into the same table with the same columns merge across events and transactions",
		ops: []op{
			{rows: ins(tt, []any{int32(1), "a", nil, nil}), txn: 0},
			{rows: ins(tt, []any{int32(2), "b", nil, nil}), txn: 1},
			{rows: ins(tt, []any{int32(3), "c", nil, nil}), txn: 2},
		},
		sql:     "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?),(?,?,?),(?,?,?)",
		args:    []any{int64(1), "a", nil, int64(2), "b", nil, int64(3), "c", nil},
		expects: []Expect{{Rows: 3, Op: binlog.Insert, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 2}},
	}, {
		name: "inserts do not merge across another statement, another table or other columns",
		ops: []op{
			{rows: ins(tt, []any{int32(1), "a", nil, nil})},
			{raw: "SET foreign_key_checks=0"},
			{rows: ins(tt, []any{int32(2), "b", nil, nil})},
			{rows: ins(tk, []any{int32(2), "b", nil})},
			{rows: with(ins(tt, []any{int32(3), nil, nil, nil}), nil, bitmap(4, 0))},
			{rows: with(ins(tt, []any{int32(4), nil, nil, nil}), nil, bitmap(4, 0))},
		},
		sql: "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?);SET foreign_key_checks=0;" +
			"INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?);INSERT INTO `db`.`k` (`a`,`b`) VALUES (?,?);" +
			"INSERT INTO `db`.`t` (`id`) VALUES (?),(?)",
		args: []any{int64(1), "a", nil, int64(2), "b", nil, int64(2), "b", int64(3), int64(4)},
		expects: []Expect{
			{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=1"},
			{Rows: -1, Txn: -1, LastTxn: -1},
			{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=2"},
			{Rows: 1, Op: binlog.Insert, Table: tk.Name, Key: "a=2,b=\"b\""},
			{Rows: 2, Op: binlog.Insert, Table: tt.Name, Key: "id=3"},
		},
	}, {
		name: "a merged insert stops at the size cap",
		// "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES " is 43 bytes, a row
		// "(?,?,?)" 7 plus 20+3+4 of arguments.
		max:  43 + 2*(7+27) + 1 + 5,
		ops:  []op{{rows: ins(tt, []any{int32(1), "a", nil, nil}, []any{int32(2), "b", nil, nil}, []any{int32(3), "c", nil, nil}, []any{int32(4), "d", nil, nil})}},
		sql:  "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?),(?,?,?);INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?),(?,?,?)",
		args: []any{int64(1), "a", nil, int64(2), "b", nil, int64(3), "c", nil, int64(4), "d", nil},
		expects: []Expect{
			{Rows: 2, Op: binlog.Insert, Table: tt.Name, Key: "id=1"},
			{Rows: 2, Op: binlog.Insert, Table: tt.Name, Key: "id=3"},
		},
	}, {
		name:    "delete one row",
		ops:     []op{{rows: del(tt, []any{int32(5), "x", int32(1), nil})}},
		sql:     "DELETE FROM `db`.`t` WHERE `id`=?",
		args:    []any{int64(5)},
		expects: []Expect{{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=5"}},
	}, {
		name:    "delete several rows by a single-column key",
		ops:     []op{{rows: del(tt, []any{int32(5), "x", nil, nil}, []any{int32(6), "y", nil, nil}, []any{int32(7), nil, nil, nil}), txn: 3}},
		sql:     "DELETE FROM `db`.`t` WHERE `id` IN (?,?,?)",
		args:    []any{int64(5), int64(6), int64(7)},
		expects: []Expect{{Rows: 3, Op: binlog.Delete, Table: tt.Name, Key: "id=5", Txn: 3, LastTxn: 3}},
	}, {
		name: "delete several rows by a composite key, latin1 compared in its collation",
		ops:  []op{{rows: del(tc, []any{int32(1), "\xe9", "v"}, []any{int32(2), "b", nil})}},
		sql: "DELETE FROM `db`.`c` WHERE (`a`=? AND `b`=CONVERT(? USING latin1) COLLATE latin1_german1_ci)" +
			" OR (`a`=? AND `b`=CONVERT(? USING latin1) COLLATE latin1_german1_ci)",
		args:    []any{int64(1), []byte("\xe9"), int64(2), []byte("b")},
		expects: []Expect{{Rows: 2, Op: binlog.Delete, Table: tc.Name, Key: "a=1,b=0xe9"}},
	}, {
		name: "a multi-row delete splits at the size cap; a last single row uses =",
		max:  1,
		ops:  []op{{rows: del(tt, []any{int32(5), nil, nil, nil}, []any{int32(6), nil, nil, nil}, []any{int32(7), nil, nil, nil})}},
		sql:  "DELETE FROM `db`.`t` WHERE `id` IN (?);DELETE FROM `db`.`t` WHERE `id` IN (?);DELETE FROM `db`.`t` WHERE `id`=?",
		args: []any{int64(5), int64(6), int64(7)},
		expects: []Expect{
			{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=5"},
			{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=6"},
			{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=7"},
		},
	}, {
		name: "keyless delete: one statement per row, NULL-safe, generated columns left out, LIMIT 1",
		ops:  []op{{rows: del(tk, []any{int32(1), "x", int32(2)}, []any{nil, "x", nil})}},
		sql: "DELETE FROM `db`.`k` WHERE `a` <=> ? AND `b` <=> ? AND CAST(`b` AS BINARY) <=> CAST(? AS BINARY) LIMIT 1;" +
			"DELETE FROM `db`.`k` WHERE `a` <=> ? AND `b` <=> ? AND CAST(`b` AS BINARY) <=> CAST(? AS BINARY) LIMIT 1",
		args: []any{int64(1), "x", "x", nil, "x", "x"},
		expects: []Expect{
			{Rows: 1, Op: binlog.Delete, Table: tk.Name, Key: "a=1,b=\"x\""},
			{Rows: 1, Op: binlog.Delete, Table: tk.Name, Key: "a=NULL,b=\"x\""},
		},
	}, {
		name:    "keyless update",
		ops:     []op{{rows: upd(tk, []any{int32(1), "x", int32(2)}, []any{int32(1), "y", int32(2)})}},
		sql:     "UPDATE `db`.`k` SET `b`=? WHERE `a` <=> ? AND `b` <=> ? AND CAST(`b` AS BINARY) <=> CAST(? AS BINARY) LIMIT 1",
		args:    []any{"y", int64(1), "x", "x"},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tk.Name, Key: "a=1,b=\"x\""}},
	}, {
		name: "keyless latin1: the column's collation, then the bytes",
		ops:  []op{{rows: del(tkl, []any{"\xe9", []byte{0}})}},
		sql: "DELETE FROM `db`.`kl` WHERE `l` <=> CONVERT(? USING latin1) COLLATE latin1_swedish_ci" +
			" AND CAST(`l` AS BINARY) <=> ? AND `bin` <=> ? LIMIT 1",
		args:    []any{[]byte("\xe9"), []byte("\xe9"), []byte{0}},
		expects: []Expect{{Rows: 1, Op: binlog.Delete, Table: tkl.Name, Key: "l=0xe9,bin=0x00"}},
	}, {
		name: "update sets only the columns that changed, one statement per row",
		ops: []op{{rows: upd(tt,
			[]any{int32(1), "a", int32(2), nil}, []any{int32(1), "b", int32(3), nil},
			[]any{int32(2), "a", int32(2), int32(1)}, []any{int32(2), "a", int32(2), nil},
		)}},
		sql:  "UPDATE `db`.`t` SET `c`=? WHERE `id`=?;UPDATE `db`.`t` SET `n`=? WHERE `id`=?",
		args: []any{"b", int64(1), nil, int64(2)},
		expects: []Expect{
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1"},
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=2"},
		},
	}, {
		name:    "update that changes nothing sets the first writable column",
		ops:     []op{{rows: upd(tt, []any{int32(1), "a", int32(2), nil}, []any{int32(1), "a", int32(2), nil})}},
		sql:     "UPDATE `db`.`t` SET `id`=? WHERE `id`=?",
		args:    []any{int64(1), int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1"}},
	}, {
		name:    "values of another type differ: int32(1) is not int64(1)",
		ops:     []op{{rows: upd(tt, []any{int32(1), []byte("a"), nil, int32(1)}, []any{int32(1), "a", nil, int64(1)})}},
		sql:     "UPDATE `db`.`t` SET `c`=?, `n`=? WHERE `id`=?",
		args:    []any{"a", int64(1), int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1"}},
	}, {
		name:    "primary key change: WHERE the old key",
		ops:     []op{{rows: upd(tt, []any{int32(1), "a", nil, nil}, []any{int32(101), "a", nil, nil})}},
		sql:     "UPDATE `db`.`t` SET `id`=? WHERE `id`=?",
		args:    []any{int64(101), int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1"}},
	}, {
		name: "minimal images: columns missing from the before image are set",
		ops: []op{{rows: with(upd(tt, []any{int32(1), nil, nil, nil}, []any{nil, "z", int32(9), int32(4)}),
			bitmap(4, 0), bitmap(4, 1, 2, 3))}},
		sql:     "UPDATE `db`.`t` SET `c`=?, `n`=? WHERE `id`=?",
		args:    []any{"z", int64(4), int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1"}},
	}, {
		name: "minimal images: an after image of generated columns only sets the key to itself",
		ops: []op{{rows: with(upd(tt, []any{int32(1), nil, nil, nil}, []any{nil, nil, int32(9), nil}),
			bitmap(4, 0), bitmap(4, 2))}},
		sql:     "UPDATE `db`.`t` SET `id`=? WHERE `id`=?",
		args:    []any{int64(1), int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1"}},
	}, {
		name:    "minimal images: delete by the primary key",
		ops:     []op{{rows: with(del(tt, []any{int32(1), nil, nil, nil}), bitmap(4, 0), nil)}},
		sql:     "DELETE FROM `db`.`t` WHERE `id`=?",
		args:    []any{int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=1"}},
	}, {
		name:    "minimal images: insert of some columns",
		ops:     []op{{rows: with(ins(tt, []any{int32(1), nil, int32(4), nil}), nil, bitmap(4, 0, 2))}},
		sql:     "INSERT INTO `db`.`t` (`id`) VALUES (?)",
		args:    []any{int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=1"}},
	}, {
		name:    "keyed by the first unique key whose columns are NOT NULL",
		ops:     []op{{rows: upd(tu, []any{int32(1), int32(2), "a"}, []any{int32(1), int32(2), "b"})}},
		sql:     "UPDATE `db`.`u` SET `v`=? WHERE `u`=?",
		args:    []any{"b", int64(2)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tu.Name, Key: "u=2"}},
	}, {
		name: "latin1 values are bytes converted by the server",
		ops: []op{
			{rows: ins(tc, []any{int32(1), "\xe9\xff", "é"})},
			{rows: upd(tc, []any{int32(1), "\xe9\xff", "é"}, []any{int32(1), "\xff", "é"})},
		},
		sql: "INSERT INTO `db`.`c` (`a`,`b`,`v`) VALUES (?,CONVERT(? USING latin1),?);" +
			"UPDATE `db`.`c` SET `b`=CONVERT(? USING latin1) WHERE `a`=? AND `b`=CONVERT(? USING latin1) COLLATE latin1_german1_ci",
		args: []any{int64(1), []byte("\xe9\xff"), "é", []byte("\xff"), int64(1), []byte("\xe9\xff")},
		expects: []Expect{
			{Rows: 1, Op: binlog.Insert, Table: tc.Name, Key: "a=1,b=0xe9ff"},
			{Rows: 1, Op: binlog.Update, Table: tc.Name, Key: "a=1,b=0xe9ff"},
		},
	}, {
		name: "identifiers are quoted with backticks doubled, whatever they contain",
		ops: []op{
			{rows: ins(weird, []any{int32(1), "x"})},
			{rows: upd(weird, []any{int32(1), "x"}, []any{int32(1), "y"})},
			{rows: del(weird, []any{int32(1), "y"}, []any{int32(2), "y"})},
		},
		sql: "INSERT INTO `d``b`.`we``ird tåble` (`co``l ü`,`?'\"#-- \\`) VALUES (?,?);" +
			"UPDATE `d``b`.`we``ird tåble` SET `?'\"#-- \\`=? WHERE `co``l ü`=?;" +
			"DELETE FROM `d``b`.`we``ird tåble` WHERE `co``l ü` IN (?,?)",
		args: []any{int64(1), "x", "y", int64(1), int64(1), int64(2)},
		expects: []Expect{
			{Rows: 1, Op: binlog.Insert, Table: weird.Name, Key: "co`l ü=1"},
			{Rows: 1, Op: binlog.Update, Table: weird.Name, Key: "co`l ü=1"},
			{Rows: 2, Op: binlog.Delete, Table: weird.Name, Key: "co`l ü=1"},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &Batch{MaxStatement: c.max}
			for _, o := range c.ops {
				if o.rows == nil {
					b.Raw(o.raw)
					continue
				}
				if err := b.Add(tabOf(o.rows, tt, tc, tk, tu, tkl, weird), o.rows, o.txn); err != nil {
					t.Fatal(err)
				}
			}
			if got := b.SQL(); got != c.sql {
				t.Errorf("SQL:\n got %s\nwant %s", got, c.sql)
			}
			if got := b.Args(); !reflect.DeepEqual(got, c.args) {
				t.Errorf("args:\n got %#v\nwant %#v", got, c.args)
			}
			if got := b.Expects(); !reflect.DeepEqual(got, c.expects) {
				t.Errorf("expects:\n got %+v\nwant %+v", got, c.expects)
			}
			if b.Len() != len(c.expects) || strings.Count(b.SQL(), ";")+1 != b.Len() {
				t.Errorf("Len %d, %d expects", b.Len(), len(c.expects))
			}
			if got, want := strings.Count(b.SQL(), "?")-strings.Count(b.SQL(), "`?"), len(c.args); got != want {
				t.Errorf("%d placeholders for %d args", got, want)
			}
		})
	}
}

// tabOf finds the Table of a rows event among tabs.
func tabOf(r *binlog.Rows, tabs ...*Table) *Table {
	for _, tab := range tabs {
		if tab.Matches(r.Table) {
			return tab
		}
	}
	return nil
}

func TestBatchErrorsLeaveBatchUnchanged(t *testing.T) {
	tt := newTable(t, "db", "t", tCols, primary(0))
	tu := newTable(t, "db", "u", uCols, unique("x", 0), unique("u", 1))
	tj := newTable(t, "db", "j", []col{intCol("id"), {name: "j", typ: "json", tp: mysql.MYSQL_TYPE_JSON, meta: 4, nullable: true}}, primary(0))

	b := &Batch{}
	if err := b.Add(tt, rows(tt, binlog.Insert, []any{int32(1), "a", nil, nil}), 0); err != nil {
		t.Fatal(err)
	}
	sql, args, expects := b.SQL(), append([]any(nil), b.Args()...), append([]Expect(nil), b.Expects()...)
	bytes := b.Bytes()

	diff := &replication.JsonDiff{Op: replication.JsonDiffOperationReplace, Path: "$.a", Value: "1"}
	cases := []struct {
		name string
		tab  *Table
		rows *binlog.Rows
		want error
	}{
		// The first row merges into the INSERT before the second fails.
		{"bad value in a merged insert", tt, rows(tt, binlog.Insert, []any{int32(2), "b", nil, nil}, []any{int32(3), 3.5, nil, nil}), ErrMismatch},
		{"partial JSON", tj, &binlog.Rows{Op: binlog.Update, Table: tableMap(tj), PartialJSON: true,
			Images: [][]any{{int32(1), "{}"}, {int32(1), diff}}}, ErrPartialJSON},
		{"before image without the key", tu, &binlog.Rows{Op: binlog.Delete, Table: tableMap(tu), Before: bitmap(3, 0, 2),
			Images: [][]any{{int32(1), nil, "v"}}}, ErrNoKey},
		{"image of the wrong width", tt, rows(tt, binlog.Delete, []any{int32(1)}), ErrMismatch},
		{"table map of another table", tt, rows(tu, binlog.Delete, []any{int32(1), int32(1), nil}), ErrMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := b.Add(c.tab, c.rows, 1)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "sqlgen: "+c.tab.Name.String()+": ") || strings.Count(msg, "sqlgen") != 1 {
				t.Errorf("message %q", msg)
			}
			t.Log(err)
			if b.SQL() != sql || !reflect.DeepEqual(b.Args(), args) || !reflect.DeepEqual(b.Expects(), expects) || b.Bytes() != bytes {
				t.Errorf("batch changed: %s %v %+v", b.SQL(), b.Args(), b.Expects())
			}
		})
	}
	// And the batch still merges the next insert.
	if err := b.Add(tt, rows(tt, binlog.Insert, []any{int32(2), "b", nil, nil}), 1); err != nil {
		t.Fatal(err)
	}
	if got := b.Expects()[0]; got.Rows != 2 || got.LastTxn != 1 {
		t.Errorf("after the errors: %+v", got)
	}
}

func TestBatchReset(t *testing.T) {
	tt := newTable(t, "db", "t", tCols, primary(0))
	b := &Batch{MaxStatement: 77}
	b.Raw("SET @a=?", int64(1))
	if err := b.Add(tt, rows(tt, binlog.Insert, []any{int32(1), "a", nil, nil}), 0); err != nil {
		t.Fatal(err)
	}
	if b.Bytes() == 0 || b.Len() != 2 {
		t.Fatalf("Bytes %d Len %d", b.Bytes(), b.Len())
	}
	b.Reset()
	if b.SQL() != "" || len(b.Args()) != 0 || b.Len() != 0 || b.Bytes() != 0 || b.MaxStatement != 77 {
		t.Fatalf("after Reset: %q %v %d %d", b.SQL(), b.Args(), b.Len(), b.Bytes())
	}
	// A reset batch does not merge into the statement it forgot.
	if err := b.Add(tt, rows(tt, binlog.Insert, []any{int32(2), "b", nil, nil}), 0); err != nil {
		t.Fatal(err)
	}
	if want := "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?)"; b.SQL() != want {
		t.Fatalf("got %s", b.SQL())
	}
}

func TestCheck(t *testing.T) {
	b := &Batch{}
	tt := newTable(t, "db", "t", tCols, primary(0))
	b.Raw("SET foreign_key_checks=0")
	if err := b.Add(tt, rows(tt, binlog.Update, []any{int32(5), "a", nil, nil}, []any{int32(5), "b", nil, nil}), 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(tt, rows(tt, binlog.Delete, []any{int32(6), "a", nil, nil}, []any{int32(7), "b", nil, nil}), 0); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		affected []int64
		want     string
	}{
		{[]int64{0, 1, 2}, ""},
		{[]int64{0, 0, 2}, "UPDATE `db`.`t` id=5: row not found on the target"},
		{[]int64{0, 1, 1}, "DELETE `db`.`t` id=6: 1 of 2 rows not found on the target"},
		{[]int64{0, 2, 2}, "UPDATE `db`.`t` id=5: 2 rows affected on the target, 1 expected"},
		{[]int64{0, 1}, "sqlgen: 2 results for 3 statements"},
	}
	for _, c := range cases {
		err := b.Check(c.affected)
		if got := fmt_(err); got != c.want {
			t.Errorf("%v: got %q, want %q", c.affected, got, c.want)
		}
	}
	var rc *RowCountError
	if err := b.Check([]int64{5, 0, 2}); !errors.As(err, &rc) || rc.Statement != 1 || rc.Affected != 0 {
		t.Errorf("got %#v", err)
	}
}

func fmt_(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestNamedValues(t *testing.T) {
	b := &Batch{}
	b.Raw("SELECT ?, ?", int64(1), "x")
	nv := b.NamedValues(nil)
	if len(nv) != 2 || nv[0].Ordinal != 1 || nv[1].Ordinal != 2 || nv[1].Value != "x" {
		t.Fatalf("got %+v", nv)
	}
}

func TestBatchPaddedBinaryKey(t *testing.T) {
	// BINARY(4) PRIMARY KEY: the server logs 'a\0\0\0' as "a".
	tab := newTable(t, "db", "b", []col{{name: "k", typ: "binary", tp: mysql.MYSQL_TYPE_STRING, meta: 0xfe04, cs: "binary", co: "binary"}}, primary(0))
	b := &Batch{}
	if err := b.Add(tab, rows(tab, binlog.Delete, []any{"a"}), 0); err != nil {
		t.Fatal(err)
	}
	if want := []any{[]byte("a\x00\x00\x00")}; !reflect.DeepEqual(b.Args(), want) {
		t.Errorf("got %#v", b.Args())
	}
	if got := b.Expects()[0].Key; got != "k=0x61000000" {
		t.Errorf("key %q", got)
	}
}
