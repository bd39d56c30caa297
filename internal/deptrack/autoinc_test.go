package deptrack

import (
	"slices"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// TestStatementGeneratedKeys: an INSERT that leaves the AUTO_INCREMENT
// column to the server (0, NULL, or the column left out) writes the rows
// its INSERT_ID says (the first, then each auto_increment_increment
// above), not row 0; a 0 is row 0 only under NO_AUTO_VALUE_ON_ZERO. What
// cannot be told is a barrier.
func TestStatementGeneratedKeys(t *testing.T) {
	cat, _, err := schema.Parse(strings.NewReader(`CREATE DATABASE d; USE d;
CREATE TABLE a (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT);
CREATE TABLE p (id INT PRIMARY KEY, v INT);
CREATE TABLE g (grp INT NOT NULL, id INT NOT NULL AUTO_INCREMENT, PRIMARY KEY (grp, id)) ENGINE=MyISAM;
`), "test.sql")
	if err != nil {
		t.Fatal(err)
	}
	if !cat.Table("d", "a").Columns[0].AutoIncrement || cat.Table("d", "p").Columns[0].AutoIncrement {
		t.Fatal("the catalog does not tell the AUTO_INCREMENT column")
	}
	const (
		defaultMode = 1<<21 | 1<<22 // STRICT_TRANS_TABLES, STRICT_ALL_TABLES
		zeroStored  = defaultMode | 1<<19
	)
	x := NewExtractor(cat)
	type ctx struct {
		mode     uint64
		insertID uint64 // 0: no INSERT_ID before the statement
		step     uint16
	}
	stmt := func(q string, c ctx) *Writeset {
		st := binlog.Statement{Schema: "d", Query: q, Kind: binlog.StmtDML}
		st.Session.SQLMode, st.Session.HasSQLMode = c.mode, true
		st.Session.AutoIncrementIncrement = c.step
		st.Context.InsertID, st.Context.HasInsertID = c.insertID, c.insertID != 0
		ws := &Writeset{}
		x.Extract(&binlog.Txn{StatementDML: true, Statements: []binlog.Statement{st}}, ws)
		return ws
	}
	row := func(id int32) []uint64 {
		return extract(x, rows(cat, "a", binlog.Insert, []any{id, int32(1)})).Keys
	}
	for _, c := range []struct {
		q    string
		c    ctx
		want []int32
	}{
		{"INSERT INTO a (id, v) VALUES (0, 1)", ctx{mode: defaultMode, insertID: 7}, []int32{7}},
		{"INSERT INTO a (id, v) VALUES (-0, 1)", ctx{mode: defaultMode, insertID: 7}, []int32{7}},
		{"INSERT INTO a (id, v) VALUES (0, 1), (0, 2), (0, 3)", ctx{mode: defaultMode, insertID: 7}, []int32{7, 8, 9}},
		{"INSERT INTO a (id, v) VALUES (0, 1), (0, 2)", ctx{mode: defaultMode, insertID: 11, step: 10}, []int32{11, 21}},
		{"REPLACE INTO a (v, id) VALUES (1, 0)", ctx{mode: defaultMode, insertID: 5}, []int32{5}},
		{"INSERT INTO a (id, v) VALUES (0, 1)", ctx{mode: zeroStored}, []int32{0}},
		{"INSERT INTO a (id, v) VALUES (NULL, 1), (NULL, 2)", ctx{mode: defaultMode, insertID: 4}, []int32{4, 5}},
		{"INSERT INTO a (id, v) VALUES (NULL, 1)", ctx{mode: zeroStored, insertID: 4}, []int32{4}},
		{"INSERT INTO a (v) VALUES (1), (2)", ctx{mode: defaultMode, insertID: 4, step: 2}, []int32{4, 6}},
		{"INSERT INTO a (id, v) VALUES (3, 1)", ctx{mode: defaultMode}, []int32{3}},
	} {
		ws := stmt(c.q, c.c)
		if ws.Barrier != CauseNone || len(ws.Keys) != len(c.want) {
			t.Errorf("%s %+v: barrier %v, %d keys; want the keys of rows %v", c.q, c.c, ws.Barrier, len(ws.Keys), c.want)
			continue
		}
		for _, id := range c.want {
			if !intersects(ws.Keys, row(id)) {
				t.Errorf("%s %+v: keys %v lack row %d's %v", c.q, c.c, ws.Keys, id, row(id))
			}
		}
		if !slices.Contains(c.want, 0) && intersects(ws.Keys, row(0)) {
			t.Errorf("%s %+v: keyed as row 0", c.q, c.c)
		}
	}
	for _, c := range []struct {
		q string
		c ctx
	}{
		{"INSERT INTO a (id, v) VALUES (0, 1)", ctx{mode: defaultMode}},                      // generated, but no INSERT_ID says what
		{"INSERT INTO a (id, v) VALUES (0, 1), (9, 2)", ctx{mode: defaultMode, insertID: 7}}, // a given value among generated ones
		{"INSERT INTO a (id, v) VALUES (NULL, 1), (5, 2)", ctx{mode: defaultMode, insertID: 7}},
		{"INSERT INTO a (id, v) VALUES (1 + 1, 1)", ctx{mode: defaultMode, insertID: 7}}, // not a literal
		{"INSERT INTO a (v) VALUES (1)", ctx{mode: defaultMode}},                         // no INSERT_ID
		{"INSERT INTO a (id, v) VALUES (3, 1)", ctx{mode: defaultMode, insertID: 7}},     // INSERT_ID, yet nothing generated
		{"INSERT INTO a (id, v) VALUES (0, 1), (NULL, 2)", ctx{mode: zeroStored, insertID: 7}},
		{"INSERT INTO p (id, v) VALUES (0, 1)", ctx{mode: defaultMode, insertID: 7}}, // INSERT_ID, yet no AUTO_INCREMENT column known
		{"INSERT INTO g (grp) VALUES (1), (2)", ctx{mode: defaultMode, insertID: 1}}, // a sequence per group
	} {
		if ws := stmt(c.q, c.c); ws.Barrier != CauseStatement || len(ws.Keys) != 0 {
			t.Errorf("%s %+v: barrier %v, keys %v; want a barrier", c.q, c.c, ws.Barrier, ws.Keys)
		}
	}
}
