package deptrack

import (
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

const testSchema = `
CREATE DATABASE d;
USE d;
CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, UNIQUE KEY code (code)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE);
CREATE TABLE plain (id INT PRIMARY KEY, pid INT, CONSTRAINT fk2 FOREIGN KEY (pid) REFERENCES p (id));
CREATE TABLE u (id INT PRIMARY KEY, a INT NULL, b INT NULL, UNIQUE KEY ab (a, b));
CREATE TABLE k (x INT, y VARCHAR(5));
CREATE TABLE bin (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_bin NOT NULL, UNIQUE KEY name (name));
CREATE TABLE l1 (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET latin1 NOT NULL, UNIQUE KEY name (name));
CREATE TABLE nu (a INT NULL, b INT, UNIQUE KEY a (a));
CREATE TABLE nn (a INT NOT NULL, b INT NULL, c INT NULL, UNIQUE KEY bc (b, c), UNIQUE KEY a (a));
CREATE TABLE m (id INT PRIMARY KEY, u INT NULL, v INT, UNIQUE KEY u (u));
CREATE TABLE pre (id INT PRIMARY KEY, s VARCHAR(50) NOT NULL, UNIQUE KEY s (s(3)));
`

func catalog(t *testing.T) *schema.Catalog {
	t.Helper()
	cat, warnings, err := schema.Parse(strings.NewReader(testSchema), "test.sql")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("schema: %v %v", err, warnings)
	}
	return cat
}

// rows builds one rows event on d.<table> with the given images.
func rows(cat *schema.Catalog, table string, op binlog.Op, images ...[]any) *binlog.Rows {
	tb := cat.Table("d", table)
	n := uint64(len(images[0]))
	if tb != nil {
		n = uint64(len(tb.Columns))
	}
	return &binlog.Rows{Op: op, Table: &replication.TableMapEvent{Schema: []byte("d"), Table: []byte(table), ColumnCount: n}, Images: images}
}

func extract(x *Extractor, rs ...*binlog.Rows) *Writeset {
	ws := &Writeset{}
	x.Extract(&binlog.Txn{Rows: rs}, ws)
	return ws
}

func intersects(a, b []uint64) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func TestKeysCollide(t *testing.T) {
	cat := catalog(t)
	x := NewExtractor(cat)
	cases := []struct {
		name    string
		a, b    *binlog.Rows
		collide bool
	}{
		{"same primary key", rows(cat, "p", binlog.Insert, []any{int32(1), "a"}), rows(cat, "p", binlog.Delete, []any{int32(1), "z"}), true},
		{"different rows", rows(cat, "p", binlog.Insert, []any{int32(1), "a"}), rows(cat, "p", binlog.Insert, []any{int32(2), "b"}), false},
		{"unique value reused", rows(cat, "p", binlog.Delete, []any{int32(1), "a"}), rows(cat, "p", binlog.Insert, []any{int32(9), "a"}), true},
		{"case-insensitive unique", rows(cat, "p", binlog.Delete, []any{int32(1), "a"}), rows(cat, "p", binlog.Insert, []any{int32(9), "A"}), true},
		{"accent-insensitive unique", rows(cat, "p", binlog.Delete, []any{int32(1), "e"}), rows(cat, "p", binlog.Insert, []any{int32(9), "É"}), true},
		{"trailing spaces pad", rows(cat, "p", binlog.Delete, []any{int32(1), "ab"}), rows(cat, "p", binlog.Insert, []any{int32(9), "ab  "}), true},
		{"ß is s in general_ci", rows(cat, "p", binlog.Delete, []any{int32(1), "straße"}), rows(cat, "p", binlog.Insert, []any{int32(9), "STRASE"}), true},
		{"binary collation keeps case", rows(cat, "bin", binlog.Delete, []any{int32(1), "a"}), rows(cat, "bin", binlog.Insert, []any{int32(9), "A"}), false},
		{"latin1 bytes fold too", rows(cat, "l1", binlog.Delete, []any{int32(1), "\xe9"}), rows(cat, "l1", binlog.Insert, []any{int32(9), "\xc9"}), true},
		{"prefix unique key", rows(cat, "pre", binlog.Delete, []any{int32(1), "abcdef"}), rows(cat, "pre", binlog.Insert, []any{int32(9), "abcxyz"}), true},
		{"update after image", rows(cat, "p", binlog.Update, []any{int32(1), "a"}, []any{int32(1), "q"}), rows(cat, "p", binlog.Insert, []any{int32(5), "q"}), true},
		{"update before image", rows(cat, "p", binlog.Update, []any{int32(1), "a"}, []any{int32(1), "q"}), rows(cat, "p", binlog.Insert, []any{int32(5), "a"}), true},
		{"NULL in unique key never collides", rows(cat, "u", binlog.Insert, []any{int32(1), nil, int32(2)}), rows(cat, "u", binlog.Insert, []any{int32(2), nil, int32(2)}), false},
		{"full unique key collides", rows(cat, "u", binlog.Delete, []any{int32(1), int32(1), int32(2)}), rows(cat, "u", binlog.Insert, []any{int32(2), int32(1), int32(2)}), true},
		{"child waits for parent", rows(cat, "p", binlog.Insert, []any{int32(7), "x"}), rows(cat, "plain", binlog.Insert, []any{int32(1), int32(7)}), true},
		{"child of another parent", rows(cat, "p", binlog.Insert, []any{int32(7), "x"}), rows(cat, "plain", binlog.Insert, []any{int32(1), int32(8)}), false},
		{"int widths agree", rows(cat, "plain", binlog.Insert, []any{int32(1), int32(7)}), rows(cat, "p", binlog.Delete, []any{int64(7), "x"}), true},
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

func TestBarriersAndTokens(t *testing.T) {
	cat := catalog(t)
	x := NewExtractor(cat)
	if ws := extract(x, rows(cat, "nosuch", binlog.Insert, []any{int32(1)})); ws.Barrier != CauseUnknownTable || ws.Table != "`d`.`nosuch`" {
		t.Errorf("unknown table: %s %q", ws.Barrier, ws.Table)
	}
	bad := rows(cat, "p", binlog.Insert, []any{int32(1), "a"})
	bad.Table.ColumnCount = 3
	if ws := extract(x, bad); ws.Barrier != CauseSchemaMismatch {
		t.Errorf("column count mismatch: %s", ws.Barrier)
	}
	minimal := rows(cat, "p", binlog.Delete, []any{int32(1), nil})
	minimal.Before = []byte{0x01} // only the primary key column present
	if ws := extract(x, minimal); ws.Barrier != CauseMissingKeyColumn {
		t.Errorf("minimal image without the unique key column: %s", ws.Barrier)
	}
	ws := extract(x, rows(cat, "k", binlog.Insert, []any{int32(1), "a"}))
	if ws.Barrier != CauseNone || len(ws.Exclusive) != 1 || len(ws.Keys) != 0 {
		t.Errorf("keyless table: %+v", ws)
	}
	del := extract(x, rows(cat, "p", binlog.Delete, []any{int32(1), "a"}))
	child := extract(x, rows(cat, "c", binlog.Insert, []any{int32(1), int32(3)}))
	if len(del.Exclusive) != 1 || len(child.Shared) != 1 || del.Exclusive[0] != child.Shared[0] {
		t.Errorf("cascade: parent delete exclusive %v, child shared %v", del.Exclusive, child.Shared)
	}
	ins := extract(x, rows(cat, "p", binlog.Insert, []any{int32(2), "b"}))
	if len(ins.Exclusive) != 0 {
		t.Errorf("a parent insert cannot cascade, yet takes %v", ins.Exclusive)
	}
	if ws := extract(x, rows(cat, "plain", binlog.Insert, []any{int32(1), int32(3)})); len(ws.Shared) != 0 {
		t.Errorf("a child without cascading actions takes shared token %v", ws.Shared)
	}
}

// TestNullableUniqueKeyIsKeyless: without a primary key, a unique key with
// a nullable column does not identify rows (any number of rows may hold
// NULL in it), so its table is keyless: INSERT (NULL,5), UPDATE to
// (NULL,6) and DELETE (NULL,6) must still conflict.
func TestNullableUniqueKeyIsKeyless(t *testing.T) {
	cat := catalog(t)
	x := NewExtractor(cat)
	ins := extract(x, rows(cat, "nu", binlog.Insert, []any{nil, int32(5)}))
	upd := extract(x, rows(cat, "nu", binlog.Update, []any{nil, int32(5)}, []any{nil, int32(6)}))
	del := extract(x, rows(cat, "nu", binlog.Delete, []any{nil, int32(6)}))
	for _, ws := range []*Writeset{ins, upd, del} {
		if ws.Barrier != CauseNone || len(ws.Exclusive) != 1 || ws.Exclusive[0] != ins.Exclusive[0] {
			t.Fatalf("writes to a table keyed by a nullable unique key only: %+v, want the table's exclusive token", ws)
		}
	}
	deps := run(WritesetMode, 0, []step{{excl: ins.Exclusive}, {excl: upd.Exclusive}, {excl: del.Exclusive}})
	if criticalPath(deps) != 3 {
		t.Errorf("INSERT, UPDATE, DELETE of one NULL-keyed row: deps %+v, want a chain", deps)
	}
	if ws := extract(x, rows(cat, "nn", binlog.Insert, []any{int32(1), nil, nil})); len(ws.Exclusive) != 0 || len(ws.Keys) != 1 {
		t.Errorf("a unique key on NOT NULL columns identifies rows: %+v, want its key and no token", ws)
	}
}

// TestMinimalRowImage: with binlog_row_image=MINIMAL an update's before
// image holds the primary key and its after image only the columns set.
// An unchanged key column is the before image's; an unchanged unique key
// the images lack needs no hash; a changed one whose old value is unknown
// is a barrier.
func TestMinimalRowImage(t *testing.T) {
	cat := catalog(t)
	x := NewExtractor(cat)
	setV := rows(cat, "m", binlog.Update, []any{int32(5), nil, nil}, []any{nil, nil, int32(7)})
	setV.Before, setV.After = []byte{0x01}, []byte{0x04}
	ws := extract(x, setV)
	del := extract(x, rows(cat, "m", binlog.Delete, []any{int32(5), int32(1), int32(2)}))
	if ws.Barrier != CauseNone || len(ws.Keys) != 1 || !intersects(ws.Keys, del.Keys) {
		t.Errorf("UPDATE m SET v=7 WHERE id=5 (minimal images): %+v, want the primary key 5 only", ws)
	}
	movePK := rows(cat, "m", binlog.Update, []any{int32(5), nil, nil}, []any{int32(6), nil, nil})
	movePK.Before, movePK.After = []byte{0x01}, []byte{0x01}
	if ws := extract(x, movePK); ws.Barrier != CauseNone || len(ws.Keys) != 2 {
		t.Errorf("UPDATE m SET id=6 WHERE id=5 (minimal images): %+v, want both primary keys", ws)
	}
	setU := rows(cat, "m", binlog.Update, []any{int32(5), nil, nil}, []any{nil, int32(3), nil})
	setU.Before, setU.After = []byte{0x01}, []byte{0x02}
	if ws := extract(x, setU); ws.Barrier != CauseMissingKeyColumn {
		t.Errorf("UPDATE m SET u=3 (minimal images, old u unknown): %s, want a barrier", ws.Barrier)
	}
}

func TestDDLAndStatementAreBarriers(t *testing.T) {
	x := NewExtractor(catalog(t))
	ws := &Writeset{}
	x.Extract(&binlog.Txn{DDL: true}, ws)
	if ws.Barrier != CauseDDL {
		t.Errorf("DDL: %s", ws.Barrier)
	}
	x.Extract(&binlog.Txn{StatementDML: true}, ws)
	if ws.Barrier != CauseStatement {
		t.Errorf("statement: %s", ws.Barrier)
	}
}

func TestDedupe(t *testing.T) {
	cat := catalog(t)
	x := NewExtractor(cat)
	ws := extract(x, rows(cat, "p", binlog.Update, []any{int32(1), "a"}, []any{int32(1), "a"}))
	if len(ws.Keys) != 2 {
		t.Errorf("keys %v, want 2 (primary and unique, deduplicated)", ws.Keys)
	}
}
