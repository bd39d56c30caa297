package deptrack

import (
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// periodSchema has MariaDB's WITHOUT OVERLAPS keys (as a dump writes
// them) and long unique keys, whose hidden hash columns row images carry.
const periodSchema = "CREATE DATABASE d;\nUSE d;\n" +
	"CREATE TABLE `wo` (`id` int(11) NOT NULL, `u` int(11) DEFAULT NULL, `s` date NOT NULL, `e` date NOT NULL,\n" +
	"  PERIOD FOR `p` (`s`, `e`), PRIMARY KEY (`id`,`p` WITHOUT OVERLAPS), UNIQUE KEY `u` (`u`,`p` WITHOUT OVERLAPS));\n" +
	"CREATE TABLE ref (x INT PRIMARY KEY, id INT, s DATE, e DATE, FOREIGN KEY (id, e, s) REFERENCES wo (id, e, s));\n" +
	"CREATE TABLE lu (id INT PRIMARY KEY, b BLOB, UNIQUE KEY b (b) USING HASH);\n" +
	"CREATE TABLE nokey (id INT, DB_ROW_HASH_1 BIGINT);\n"

// hashRows is rows for a table map with column names and types, as
// binlog_row_metadata=FULL logs it.
func hashRows(cat *schema.Catalog, table string, op binlog.Op, names []string, types []byte, images ...[]any) *binlog.Rows {
	r := rows(cat, table, op, images...)
	r.Table.ColumnCount = uint64(len(types))
	r.Table.ColumnType = types
	for _, n := range names {
		r.Table.ColumnName = append(r.Table.ColumnName, []byte(n))
	}
	return r
}

// TestWithoutOverlapsKeys: rows conflict through a WITHOUT OVERLAPS key
// when their periods overlap, which no equality of the key's values
// tells, so its writers of one id (or u) conflict whatever their periods.
func TestWithoutOverlapsKeys(t *testing.T) {
	cat, warnings, err := schema.Parse(strings.NewReader(periodSchema), "period.sql")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("schema: %v %v", err, warnings)
	}
	x := NewExtractor(cat)
	row := func(id int32, u any, s, e string) []any { return []any{id, u, s, e} }
	cases := []struct {
		name    string
		a, b    *binlog.Rows
		collide bool
	}{
		{"a period freed, an overlapping one taken",
			rows(cat, "wo", binlog.Delete, row(1, nil, "2003-01-01", "2003-03-01")),
			rows(cat, "wo", binlog.Insert, row(1, nil, "2003-02-01", "2003-04-01")), true},
		{"one id, periods apart",
			rows(cat, "wo", binlog.Insert, row(1, nil, "2003-01-01", "2003-03-01")),
			rows(cat, "wo", binlog.Insert, row(1, nil, "2003-05-01", "2003-07-01")), true},
		{"a period shrunk, the freed part taken",
			rows(cat, "wo", binlog.Update, row(1, nil, "2003-01-01", "2003-03-01"), row(1, nil, "2003-01-01", "2003-02-01")),
			rows(cat, "wo", binlog.Insert, row(1, nil, "2003-02-01", "2003-03-01")), true},
		{"another id", rows(cat, "wo", binlog.Insert, row(1, int32(1), "2003-01-01", "2003-03-01")),
			rows(cat, "wo", binlog.Insert, row(2, int32(2), "2003-01-01", "2003-03-01")), false},
		{"another id, the same u", rows(cat, "wo", binlog.Delete, row(1, int32(7), "2003-01-01", "2003-03-01")),
			rows(cat, "wo", binlog.Insert, row(2, int32(7), "2003-02-01", "2003-03-01")), true},
		{"NULL u never conflicts", rows(cat, "wo", binlog.Insert, row(1, nil, "2003-01-01", "2003-03-01")),
			rows(cat, "wo", binlog.Insert, row(2, nil, "2003-01-01", "2003-03-01")), false},
		{"a child row waits for its parent row",
			rows(cat, "wo", binlog.Insert, row(1, nil, "2003-01-01", "2003-03-01")),
			rows(cat, "ref", binlog.Insert, []any{int32(9), int32(1), "2003-01-01", "2003-03-01"}), true},
		{"a child row of another parent row",
			rows(cat, "wo", binlog.Insert, row(1, nil, "2003-01-01", "2003-03-01")),
			rows(cat, "ref", binlog.Insert, []any{int32(9), int32(1), "2003-05-01", "2003-07-01"}), false},
	}
	for _, c := range cases {
		wa, wb := extract(x, c.a), extract(x, c.b)
		if wa.Barrier != CauseNone || wb.Barrier != CauseNone {
			t.Errorf("%s: unexpected barrier %s / %s", c.name, wa.Barrier, wb.Barrier)
			continue
		}
		if got := intersects(wa.Keys, wb.Keys); got != c.collide {
			t.Errorf("%s: collide = %v, want %v", c.name, got, c.collide)
		}
	}
}

// TestHashColumns: the hidden hash column of a long unique key, after the
// table's columns in row images, is in no key and makes no barrier; extra
// columns that cannot be hash columns do.
func TestHashColumns(t *testing.T) {
	cat, warnings, err := schema.Parse(strings.NewReader(periodSchema), "period.sql")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("schema: %v %v", err, warnings)
	}
	x := NewExtractor(cat)
	names := []string{"id", "b", "DB_ROW_HASH_1"}
	types := []byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_LONGLONG}
	del := extract(x, hashRows(cat, "lu", binlog.Delete, names, types, []any{int32(1), []byte("a"), int64(111)}))
	ins := extract(x, hashRows(cat, "lu", binlog.Insert, names, types, []any{int32(2), []byte("a"), int64(222)}))
	other := extract(x, hashRows(cat, "lu", binlog.Insert, names, types, []any{int32(3), []byte("b"), int64(111)}))
	if del.Barrier != CauseNone || ins.Barrier != CauseNone || other.Barrier != CauseNone {
		t.Fatalf("barriers %s, %s, %s", del.Barrier, ins.Barrier, other.Barrier)
	}
	if !intersects(del.Keys, ins.Keys) {
		t.Error("a long unique value freed and taken again: no conflict")
	}
	if intersects(del.Keys, other.Keys) {
		t.Error("rows with equal hash columns conflict")
	}
	for _, bad := range []struct {
		name  string
		r     *binlog.Rows
		table string
	}{
		{"no column names (binlog_row_metadata=MINIMAL)",
			hashRows(cat, "lu", binlog.Insert, nil, types, []any{int32(1), []byte("a"), int64(1)}), "lu"},
		{"not a hash column's name",
			hashRows(cat, "lu", binlog.Insert, []string{"id", "b", "extra"}, types, []any{int32(1), []byte("a"), int64(1)}), "lu"},
		{"not a hash column's type",
			hashRows(cat, "lu", binlog.Insert, names, []byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_LONG},
				[]any{int32(1), []byte("a"), int32(1)}), "lu"},
		{"more hash columns than unique keys",
			hashRows(cat, "nokey", binlog.Insert, []string{"id", "DB_ROW_HASH_1", "DB_ROW_HASH_2"},
				[]byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_LONGLONG}, []any{int32(1), int64(1), int64(2)}), "nokey"},
	} {
		if ws := extract(x, bad.r); ws.Barrier != CauseSchemaMismatch {
			t.Errorf("%s: barrier %s, want %s", bad.name, ws.Barrier, CauseSchemaMismatch)
		}
	}
}
