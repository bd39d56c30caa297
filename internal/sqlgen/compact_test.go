package sqlgen

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// refs is a catalog's view of foreign keys, for NewTableIn: the children of
// each parent. A child in schema "unknown" is reported as an unknown table.
type refs map[schema.TableName][]schema.ChildRef

func (r refs) Children(p schema.TableName) []schema.ChildRef { return r[p] }

func (r refs) UnknownTables() []schema.TableName {
	var out []schema.TableName
	for _, cs := range r {
		for _, c := range cs {
			if c.Child.Schema == "unknown" {
				out = append(out, c.Child)
			}
		}
	}
	return out
}

// compactTable builds a Table with NewTableIn and no foreign keys around.
func compactTable(t testing.TB, db, name string, cols []col, indexes ...schema.Index) *Table {
	t.Helper()
	def, tm := fixture(db, name, cols, indexes...)
	tab, err := NewTableIn(refs{}, def, tm)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestCompactable(t *testing.T) {
	binKey := col{name: "b", typ: "varbinary", tp: mysql.MYSQL_TYPE_VARCHAR, meta: 10, cs: "binary", co: "binary"}
	dtKey := col{name: "d", typ: "datetime", tp: mysql.MYSQL_TYPE_DATETIME2, meta: 6}
	decKey := col{name: "d", typ: "decimal", tp: mysql.MYSQL_TYPE_NEWDECIMAL, meta: 10<<8 | 2}
	floatKey := col{name: "f", typ: "double", tp: mysql.MYSQL_TYPE_DOUBLE, meta: 8}
	genKey := col{name: "g", typ: "int", tp: mysql.MYSQL_TYPE_LONG, generated: true}
	prefix := primary(0)
	prefix.Prefix = []int{4}
	cases := []struct {
		name string
		cols []col
		ix   []schema.Index
		fks  []schema.ForeignKey
		refs refs
		want bool
	}{
		{"int primary key", tCols, []schema.Index{primary(0)}, nil, nil, true},
		{"composite key of int and varbinary", []col{intCol("a"), binKey, varcharCol("v")}, []schema.Index{primary(0, 1)}, nil, nil, true},
		{"datetime key", []col{dtKey, varcharCol("v")}, []schema.Index{primary(0)}, nil, nil, true},
		{"another unique key", tCols, []schema.Index{primary(0), unique("u", 3)}, nil, nil, false},
		{"no primary key", uCols, []schema.Index{unique("u", 1)}, nil, nil, false},
		{"no key", kCols, nil, nil, nil, false},
		{"text key: its collation", cCols, []schema.Index{primary(0, 1)}, nil, nil, false},
		{"utf8mb4 key", []col{varcharCol("s")}, []schema.Index{primary(0)}, nil, nil, false},
		{"decimal key", []col{decKey}, []schema.Index{primary(0)}, nil, nil, false},
		{"double key", []col{floatKey}, []schema.Index{primary(0)}, nil, nil, false},
		{"key prefix", []col{binKey}, []schema.Index{prefix}, nil, nil, false},
		{"generated key column", []col{intCol("a"), genKey}, []schema.Index{primary(1)}, nil, nil, false},
		{"child of a foreign key", tCols, []schema.Index{primary(0)},
			[]schema.ForeignKey{{Name: "fk", Columns: []int{3}, Ref: schema.TableName{Schema: "db", Name: "p"}, RefColumns: []string{"id"}}}, nil, false},
		{"parent of a foreign key", tCols, []schema.Index{primary(0)}, nil,
			refs{{Schema: "db", Name: "t"}: {{Child: schema.TableName{Schema: "db", Name: "c"}}}}, false},
		{"an unknown table in the catalog", tCols, []schema.Index{primary(0)}, nil,
			refs{{Schema: "db", Name: "x"}: {{Child: schema.TableName{Schema: "unknown", Name: "c"}}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			def, tm := fixture("db", "t", c.cols, c.ix...)
			def.ForeignKeys = c.fks
			r := c.refs
			if r == nil {
				r = refs{}
			}
			tab, err := NewTableIn(r, def, tm)
			if err != nil {
				t.Fatal(err)
			}
			if tab.Compactable() != c.want {
				t.Errorf("Compactable() = %v", !c.want)
			}
			if plain, _ := NewTable(def, tm); plain.Compactable() {
				t.Error("a Table from NewTable is compactable")
			}
		})
	}
	// Without a schema nothing is known of unique and foreign keys.
	_, tm := fixture("db", "t", []col{intCol("id"), intCol("n")}, primary(0))
	tab, err := NewTableIn(refs{}, nil, tm)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Compactable() {
		t.Error("a Table from the table map only is compactable")
	}
}

func TestBatchCompact(t *testing.T) {
	tt := compactTable(t, "db", "t", tCols, primary(0))
	// b(a int, b varbinary, v varchar, PRIMARY KEY (a, b))
	tb := compactTable(t, "db", "b", []col{intCol("a"), {name: "b", typ: "varbinary", tp: mysql.MYSQL_TYPE_VARCHAR, meta: 10, cs: "binary", co: "binary"}, varcharCol("v")}, primary(0, 1))
	// u: as t, with a unique key on n: not compactable.
	tu := compactTable(t, "db", "u", tCols, primary(0), unique("n", 3))
	if !tt.Compactable() || !tb.Compactable() || tu.Compactable() {
		t.Fatal("fixture tables")
	}

	ins := func(tab *Table, imgs ...[]any) *binlog.Rows { return rows(tab, binlog.Insert, imgs...) }
	del := func(tab *Table, imgs ...[]any) *binlog.Rows { return rows(tab, binlog.Delete, imgs...) }
	upd := func(tab *Table, imgs ...[]any) *binlog.Rows { return rows(tab, binlog.Update, imgs...) }
	row := func(id int32, c any, n any) []any { return []any{id, c, int32(0), n} }
	b2 := func(a int32, b string, v any) []any { return []any{a, []byte(b), v} }

	cases := []struct {
		name    string
		max     int // Batch.MaxStatement
		rows    int // Batch.MaxGroupRows
		ops     []op
		sql     string
		args    []any
		expects []Expect
	}{{
		name: "updates of a row become one, from the first before image to the last after image",
		ops: []op{
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil)), txn: 0},
			{rows: upd(tt, row(1, "b", nil), row(1, "b", int32(5))), txn: 1},
			{rows: upd(tt, row(1, "b", int32(5)), row(1, "a", int32(5))), txn: 2},
		},
		sql:     "UPDATE `db`.`t` SET `n`=? WHERE `id`=?",
		args:    []any{int64(5), int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 2}},
	}, {
		name: "updates that undo each other still prove that the row exists",
		ops: []op{
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil)), txn: 0},
			{rows: upd(tt, row(1, "b", nil), row(1, "a", nil)), txn: 1},
		},
		sql:     "UPDATE `db`.`t` SET `c`=`c` WHERE `id`=?",
		args:    []any{int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 1}},
	}, {
		name: "delete then insert of a key becomes an UPDATE of every column",
		ops: []op{
			{rows: del(tt, row(1, "a", int32(3))), txn: 0},
			{rows: ins(tt, row(1, "a", int32(4))), txn: 0},
		},
		sql:     "UPDATE `db`.`t` SET `c`=?, `n`=? WHERE `id`=?",
		args:    []any{"a", int64(4), int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1"}},
	}, {
		name: "insert then updates becomes an INSERT of the last image",
		ops: []op{
			{rows: ins(tt, row(1, "a", nil)), txn: 3},
			{rows: upd(tt, row(1, "a", nil), row(1, "b", int32(2))), txn: 4},
		},
		sql:     "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?)",
		args:    []any{int64(1), "b", int64(2)},
		expects: []Expect{{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=1", Txn: 3, LastTxn: 4}},
	}, {
		name: "updates then delete become a DELETE",
		ops: []op{
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil)), txn: 0},
			{rows: del(tt, row(1, "b", nil)), txn: 1},
		},
		sql:     "DELETE FROM `db`.`t` WHERE `id`=?",
		args:    []any{int64(1)},
		expects: []Expect{{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 1}},
	}, {
		name: "insert then delete keeps both, grouped: proves that the row did not exist",
		ops: []op{
			{rows: ins(tt, row(1, "a", nil), row(2, "x", nil)), txn: 0},
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil)), txn: 1},
			{rows: del(tt, row(1, "b", nil)), txn: 2},
		},
		sql:  "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?),(?,?,?);DELETE FROM `db`.`t` WHERE `id`=?",
		args: []any{int64(1), "b", nil, int64(2), "x", nil, int64(1)},
		expects: []Expect{
			{Rows: 2, Op: binlog.Insert, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 2},
			{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 2},
		},
	}, {
		name: "insert, delete, insert is an INSERT; delete, insert, delete a DELETE",
		ops: []op{
			{rows: ins(tt, row(1, "a", nil)), txn: 0},
			{rows: del(tt, row(2, "x", nil)), txn: 0},
			{rows: del(tt, row(1, "a", nil)), txn: 1},
			{rows: ins(tt, row(2, "y", nil)), txn: 1},
			{rows: ins(tt, row(1, "c", nil)), txn: 2},
			{rows: del(tt, row(2, "y", nil)), txn: 2},
		},
		sql:  "DELETE FROM `db`.`t` WHERE `id`=?;INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?)",
		args: []any{int64(2), int64(1), "c", nil},
		expects: []Expect{
			{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=2", Txn: 0, LastTxn: 2},
			{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 2},
		},
	}, {
		name: "net changes are grouped: DELETE IN, UPDATE by the columns set, one INSERT",
		ops: []op{
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil)), txn: 0},
			{rows: del(tt, row(6, "a", nil)), txn: 0},
			{rows: upd(tt, row(4, "a", int32(1)), row(4, "a", int32(2))), txn: 1},
			{rows: ins(tt, row(8, "h", nil)), txn: 1},
			{rows: upd(tt, row(2, "a", nil), row(2, "c", nil), row(5, "a", nil), row(5, "a", int32(3))), txn: 2},
			{rows: del(tt, row(7, "a", nil)), txn: 3},
			{rows: ins(tt, row(9, "i", nil)), txn: 4},
			{rows: upd(tt, row(3, "a", nil), row(3, "d", nil)), txn: 5},
		},
		sql: "DELETE FROM `db`.`t` WHERE `id` IN (?,?);" +
			"UPDATE `db`.`t` SET `c`=CASE `id` WHEN ? THEN ? WHEN ? THEN ? WHEN ? THEN ? ELSE `c` END WHERE `id` IN (?,?,?);" +
			"UPDATE `db`.`t` SET `n`=CASE `id` WHEN ? THEN ? WHEN ? THEN ? ELSE `n` END WHERE `id` IN (?,?);" +
			"INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?),(?,?,?)",
		args: []any{
			int64(6), int64(7),
			int64(1), "b", int64(2), "c", int64(3), "d", int64(1), int64(2), int64(3),
			int64(4), int64(2), int64(5), int64(3), int64(4), int64(5),
			int64(8), "h", nil, int64(9), "i", nil,
		},
		expects: []Expect{
			{Rows: 2, Op: binlog.Delete, Table: tt.Name, Key: "id=6", Txn: 0, LastTxn: 3},
			{Rows: 3, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 5},
			{Rows: 2, Op: binlog.Update, Table: tt.Name, Key: "id=4", Txn: 1, LastTxn: 2},
			{Rows: 2, Op: binlog.Insert, Table: tt.Name, Key: "id=8", Txn: 1, LastTxn: 4},
		},
	}, {
		name: "a composite key: OR of ANDs, searched CASE",
		ops: []op{
			{rows: upd(tb, b2(1, "x", "a"), b2(1, "x", "b")), txn: 0},
			{rows: upd(tb, b2(1, "y", "a"), b2(1, "y", "c")), txn: 1},
			{rows: del(tb, b2(2, "x", nil), b2(2, "y", nil)), txn: 1},
		},
		sql: "DELETE FROM `db`.`b` WHERE (`a`=? AND `b`=?) OR (`a`=? AND `b`=?);" +
			"UPDATE `db`.`b` SET `v`=CASE WHEN `a`=? AND `b`=? THEN ? WHEN `a`=? AND `b`=? THEN ? ELSE `v` END" +
			" WHERE (`a`=? AND `b`=?) OR (`a`=? AND `b`=?)",
		args: []any{
			int64(2), []byte("x"), int64(2), []byte("y"),
			int64(1), []byte("x"), "b", int64(1), []byte("y"), "c", int64(1), []byte("x"), int64(1), []byte("y"),
		},
		expects: []Expect{
			{Rows: 2, Op: binlog.Delete, Table: tb.Name, Key: "a=2,b=0x78", Txn: 1, LastTxn: 1},
			{Rows: 2, Op: binlog.Update, Table: tb.Name, Key: "a=1,b=0x78", Txn: 0, LastTxn: 1},
		},
	}, {
		name: "a primary key change ends the chains of both keys: before it, it, after it",
		ops: []op{
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil), row(5, "a", int32(1)), row(5, "a", int32(2))), txn: 0},
			{rows: upd(tt, row(1, "b", nil), row(2, "b", nil)), txn: 1},
			{rows: upd(tt, row(2, "b", nil), row(2, "c", nil), row(5, "a", int32(2)), row(5, "a", int32(3))), txn: 2},
			{rows: ins(tt, row(1, "new", nil)), txn: 2},
		},
		sql: "UPDATE `db`.`t` SET `c`=? WHERE `id`=?;UPDATE `db`.`t` SET `n`=? WHERE `id`=?;" +
			"UPDATE `db`.`t` SET `id`=? WHERE `id`=?;" +
			"UPDATE `db`.`t` SET `c`=? WHERE `id`=?;INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?)",
		args: []any{"b", int64(1), int64(3), int64(5), int64(2), int64(1), "c", int64(2), int64(1), "new", nil},
		expects: []Expect{
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 0},
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=5", Txn: 0, LastTxn: 2},
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 1, LastTxn: 1},
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=2", Txn: 2, LastTxn: 2},
			{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=1", Txn: 2, LastTxn: 2},
		},
	}, {
		name: "a change the chain says is impossible is written as it comes",
		ops: []op{
			{rows: ins(tt, row(1, "a", nil)), txn: 0},
			{rows: ins(tt, row(1, "b", nil)), txn: 1},
		},
		sql:  "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?);INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?)",
		args: []any{int64(1), "a", nil, int64(1), "b", nil},
		expects: []Expect{
			{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 0},
			{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=1", Txn: 1, LastTxn: 1},
		},
	}, {
		name: "statements of a table that is not compactable are written as they come, the others commute with them",
		ops: []op{
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil)), txn: 0},
			{rows: upd(tu, row(1, "a", nil), row(1, "b", nil)), txn: 0},
			{rows: upd(tu, row(1, "b", nil), row(1, "c", nil)), txn: 1},
			{rows: upd(tt, row(1, "b", nil), row(1, "c", nil)), txn: 1},
			{rows: upd(tt, row(2, "b", nil), row(2, "c", nil)), txn: 2},
		},
		sql: "UPDATE `db`.`u` SET `c`=? WHERE `id`=?;UPDATE `db`.`u` SET `c`=? WHERE `id`=?;" +
			"UPDATE `db`.`t` SET `c`=CASE `id` WHEN ? THEN ? WHEN ? THEN ? ELSE `c` END WHERE `id` IN (?,?)",
		args: []any{"b", int64(1), "c", int64(1), int64(1), "c", int64(2), "c", int64(1), int64(2)},
		expects: []Expect{
			{Rows: 1, Op: binlog.Update, Table: tu.Name, Key: "id=1", Txn: 0, LastTxn: 0},
			{Rows: 1, Op: binlog.Update, Table: tu.Name, Key: "id=1", Txn: 1, LastTxn: 1},
			{Rows: 2, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 2},
		},
	}, {
		name: "Raw is a barrier; partial images are written as they come, after the table's changes",
		ops: []op{
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil)), txn: 0},
			{raw: "SET foreign_key_checks=0"},
			{rows: upd(tt, row(1, "b", nil), row(1, "c", nil)), txn: 1},
			{rows: withImages(upd(tt, row(1, "c", nil), row(1, "d", nil)), bitmap(4, 0, 1), bitmap(4, 1)), txn: 2},
		},
		sql: "UPDATE `db`.`t` SET `c`=? WHERE `id`=?;SET foreign_key_checks=0;" +
			"UPDATE `db`.`t` SET `c`=? WHERE `id`=?;UPDATE `db`.`t` SET `c`=? WHERE `id`=?",
		args: []any{"b", int64(1), "c", int64(1), "d", int64(1)},
		expects: []Expect{
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 0},
			{Rows: -1, Txn: -1, LastTxn: -1},
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 1, LastTxn: 1},
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 2, LastTxn: 2},
		},
	}, {
		name: "tables interleaved are grouped each",
		ops: []op{
			{rows: del(tt, row(1, "a", nil)), txn: 0},
			{rows: del(tb, b2(1, "x", nil)), txn: 0},
			{rows: del(tt, row(2, "a", nil)), txn: 1},
			{rows: ins(tb, b2(2, "x", nil)), txn: 1},
		},
		sql: "DELETE FROM `db`.`t` WHERE `id` IN (?,?);" +
			"DELETE FROM `db`.`b` WHERE `a`=? AND `b`=?;INSERT INTO `db`.`b` (`a`,`b`,`v`) VALUES (?,?,?)",
		args: []any{int64(1), int64(2), int64(1), []byte("x"), int64(2), []byte("x"), nil},
		expects: []Expect{
			{Rows: 2, Op: binlog.Delete, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 1},
			{Rows: 1, Op: binlog.Delete, Table: tb.Name, Key: "a=1,b=0x78", Txn: 0, LastTxn: 0},
			{Rows: 1, Op: binlog.Insert, Table: tb.Name, Key: "a=2,b=0x78", Txn: 1, LastTxn: 1},
		},
	}, {
		name: "groups split at MaxGroupRows",
		rows: 2,
		ops: []op{
			{rows: del(tt, row(1, "a", nil), row(2, "a", nil), row(3, "a", nil)), txn: 0},
			{rows: ins(tt, row(4, "a", nil), row(5, "a", nil), row(6, "a", nil)), txn: 1},
		},
		sql: "DELETE FROM `db`.`t` WHERE `id` IN (?,?);DELETE FROM `db`.`t` WHERE `id`=?;" +
			"INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?),(?,?,?);INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?)",
		args: []any{int64(1), int64(2), int64(3), int64(4), "a", nil, int64(5), "a", nil, int64(6), "a", nil},
		expects: []Expect{
			{Rows: 2, Op: binlog.Delete, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 0},
			{Rows: 1, Op: binlog.Delete, Table: tt.Name, Key: "id=3", Txn: 0, LastTxn: 0},
			{Rows: 2, Op: binlog.Insert, Table: tt.Name, Key: "id=4", Txn: 1, LastTxn: 1},
			{Rows: 1, Op: binlog.Insert, Table: tt.Name, Key: "id=6", Txn: 1, LastTxn: 1},
		},
	}, {
		name: "groups split at MaxStatement",
		max:  1,
		ops: []op{
			{rows: upd(tt, row(1, "a", nil), row(1, "b", nil), row(2, "a", nil), row(2, "b", nil)), txn: 0},
		},
		sql:  "UPDATE `db`.`t` SET `c`=? WHERE `id`=?;UPDATE `db`.`t` SET `c`=? WHERE `id`=?",
		args: []any{"b", int64(1), "b", int64(2)},
		expects: []Expect{
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=1", Txn: 0, LastTxn: 0},
			{Rows: 1, Op: binlog.Update, Table: tt.Name, Key: "id=2", Txn: 0, LastTxn: 0},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &Batch{Compact: true, MaxStatement: c.max, MaxGroupRows: c.rows}
			for _, o := range c.ops {
				if o.raw != "" {
					b.Raw(o.raw)
					continue
				}
				if err := b.Add(tableOf(o.rows, tt, tb, tu), o.rows, o.txn); err != nil {
					t.Fatal(err)
				}
			}
			if got := b.SQL(); got != c.sql {
				t.Errorf("SQL\n got %s\nwant %s", got, c.sql)
			}
			if !reflect.DeepEqual(b.Args(), c.args) {
				t.Errorf("args\n got %#v\nwant %#v", b.Args(), c.args)
			}
			if !reflect.DeepEqual(b.Expects(), c.expects) {
				t.Errorf("expects\n got %+v\nwant %+v", b.Expects(), c.expects)
			}
			if n := strings.Count(b.SQL(), "?"); n != len(b.Args()) {
				t.Errorf("%d placeholders, %d arguments", n, len(b.Args()))
			}
			// Reset keeps the mode and forgets the changes.
			b.Reset()
			if !b.Compact || b.Len() != 0 || b.SQL() != "" {
				t.Errorf("after Reset: Compact %v, %d statements", b.Compact, b.Len())
			}
		})
	}
}

// tableOf returns the one of tabs that r's table map names.
func tableOf(r *binlog.Rows, tabs ...*Table) *Table {
	for _, t := range tabs {
		if t.Matches(r.Table) {
			return t
		}
	}
	return nil
}

func withImages(r *binlog.Rows, before, after []byte) *binlog.Rows {
	r.Before, r.After = before, after
	return r
}

// TestBatchCompactSameName: two Tables of one table (two table maps) do not
// mix their chains: the first one's changes are written first.
func TestBatchCompactSameName(t *testing.T) {
	t1 := compactTable(t, "db", "t", tCols, primary(0))
	t2 := compactTable(t, "db", "t", tCols, primary(0))
	b := &Batch{Compact: true}
	ops := []struct {
		tab *Table
		op  binlog.Op
		img [][]any
	}{
		{t1, binlog.Delete, [][]any{{int32(1), "a", nil, nil}}},
		{t1, binlog.Delete, [][]any{{int32(2), "a", nil, nil}}},
		{t2, binlog.Insert, [][]any{{int32(1), "b", nil, nil}}},
		{t2, binlog.Insert, [][]any{{int32(2), "b", nil, nil}}},
	}
	for i, o := range ops {
		if err := b.Add(o.tab, rows(o.tab, o.op, o.img...), i); err != nil {
			t.Fatal(err)
		}
	}
	want := "DELETE FROM `db`.`t` WHERE `id` IN (?,?);INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?),(?,?,?)"
	if got := b.SQL(); got != want {
		t.Errorf("got %s", got)
	}
}

func TestBatchCompactCaseBudget(t *testing.T) {
	// Three columns set: at most caseBudget/3 rows per UPDATE.
	cols := []col{intCol("id"), intCol("a"), intCol("b"), intCol("c")}
	tab := compactTable(t, "db", "w", cols, primary(0))
	b := &Batch{Compact: true}
	per := caseBudget / 3
	for i := range per + 5 {
		r := rows(tab, binlog.Update, []any{int32(i), int32(0), int32(0), int32(0)}, []any{int32(i), int32(1), int32(1), int32(1)})
		if err := b.Add(tab, r, i); err != nil {
			t.Fatal(err)
		}
	}
	exp := b.Expects()
	if len(exp) != 2 || exp[0].Rows != int64(per) || exp[1].Rows != 5 || exp[0].LastTxn != per-1 || exp[1].Txn != per {
		t.Errorf("got %+v", exp)
	}
}

func TestBatchCompactError(t *testing.T) {
	tt := compactTable(t, "db", "t", tCols, primary(0))
	b := &Batch{Compact: true}
	if err := b.Add(tt, rows(tt, binlog.Insert, []any{int32(1), "a", nil, nil}), 0); err != nil {
		t.Fatal(err)
	}
	// A float for an int column: refused, and nothing of the event is kept.
	err := b.Add(tt, rows(tt, binlog.Insert, []any{int32(2), "b", nil, nil}, []any{float64(3), "c", nil, nil}), 1)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "sqlgen: `db`.`t`: column `id`") {
		t.Fatalf("got %v", err)
	}
	if got, want := b.SQL(), "INSERT INTO `db`.`t` (`id`,`c`,`n`) VALUES (?,?,?)"; got != want {
		t.Errorf("got %s", got)
	}
	if !reflect.DeepEqual(b.Args(), []any{int64(1), "a", nil}) {
		t.Errorf("got %#v", b.Args())
	}
}

// TestBatchCompactCheck: a grouped statement that finds fewer rows than it
// changes fails the check, naming the range of transactions.
func TestBatchCompactCheck(t *testing.T) {
	tt := compactTable(t, "db", "t", tCols, primary(0))
	b := &Batch{Compact: true}
	for i := range 3 {
		if err := b.Add(tt, rows(tt, binlog.Delete, []any{int32(i), "a", nil, nil}), i); err != nil {
			t.Fatal(err)
		}
	}
	var rc *RowCountError
	err := b.Check([]int64{2})
	if !errors.As(err, &rc) || rc.Expect.Txn != 0 || rc.Expect.LastTxn != 2 ||
		err.Error() != "DELETE `db`.`t` id=0: 1 of 3 rows not found on the target" {
		t.Errorf("got %v", err)
	}
}
