package schema

import (
	"reflect"
	"testing"
)

// TestStatementWrites: the statements whose written rows their text
// fixes, and those it does not.
func TestStatementWrites(t *testing.T) {
	tn := TableName{"db", "t"}
	for _, c := range []struct {
		q    string
		want Writes
		ok   bool
	}{
		{"UPDATE t SET k=k+1 WHERE id=5", Writes{Table: tn, Where: []ColumnValues{{"id", []int64{5}}}, Set: []string{"k"}}, true},
		{"UPDATE sbtest1 SET c='x' WHERE id=42", Writes{Table: TableName{"db", "sbtest1"}, Where: []ColumnValues{{"id", []int64{42}}}, Set: []string{"c"}}, true},
		{"DELETE FROM `o`.`t` WHERE (id = -3) AND c LIKE 'a%'", Writes{Table: TableName{"o", "t"}, Where: []ColumnValues{{"id", []int64{-3}}}}, true},
		{"DELETE FROM t WHERE id IN (1, 2) AND k = 7", Writes{Table: tn, Where: []ColumnValues{{"id", []int64{1, 2}}, {"k", []int64{7}}}}, true},
		{"INSERT INTO t (id, k, c) VALUES (1, 2, 'a'), (3, 4, CONCAT('b', NOW()))",
			Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{{{"id", 1}, {"k", 2}}, {{"id", 3}, {"k", 4}}}, Columns: []string{"id", "k", "c"}}, true},
		{"INSERT INTO t (id, n) VALUES (1, 1) ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
			Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{{{"id", 1}, {"n", 1}}}, Set: []string{"n"}, Columns: []string{"id", "n"}}, true},
		{"REPLACE INTO t (id) VALUES (9)", Writes{Table: tn, Insert: true, Replace: true, Rows: [][]ColumnValue{{{"id", 9}}}, Columns: []string{"id"}}, true},
		{"INSERT INTO t (ID, k) VALUES (NULL, 1), (0, NULL), (7, 2)",
			Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{{{"k", 1}}, {{"id", 0}}, {{"id", 7}, {"k", 2}}}, Columns: []string{"id", "k"},
				Nulls: [][]string{{"id"}, {"k"}, nil}}, true},
		{"INSERT INTO t (k) VALUES (1)", Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{{{"k", 1}}}, Columns: []string{"k"}}, true},
		{"UPDATE t SET v = @x WHERE id = 1", Writes{Table: tn, Where: []ColumnValues{{"id", []int64{1}}}, Set: []string{"v"}}, true},
		// Reads beyond its row, or writes rows its text does not fix.
		{"UPDATE t SET v = (SELECT MAX(v) FROM u) WHERE id = 1", Writes{}, false},
		{"UPDATE t JOIN u USING (id) SET t.v = 1 WHERE id = 1", Writes{}, false},
		{"UPDATE t SET v = 1", Writes{}, false},
		{"UPDATE t SET v = 1 WHERE id > 5", Writes{}, false},
		{"UPDATE t SET v = f(1) WHERE id = 1", Writes{}, false},
		{"UPDATE t SET v = db.f(1) WHERE id = 1", Writes{}, false},
		{"INSERT INTO t SELECT * FROM u", Writes{}, false},
		{"INSERT INTO t VALUES (1, 2)", Writes{}, false},
		{"DELETE FROM t WHERE id = (SELECT 1)", Writes{}, false},
		{"UPDATE t SET v = 1 WHERE id = 1 ORDER BY id", Writes{}, false},
		{"CALL p()", Writes{}, false},
	} {
		got, ok := StatementWrites("db", c.q)
		if ok != c.ok || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%s:\n got %+v %v\nwant %+v %v", c.q, got, ok, c.want, c.ok)
		}
	}
	w, _ := StatementWrites("db", "INSERT INTO t (id, k) VALUES (NULL, 1), (0, NULL)")
	for _, c := range []struct {
		row  int
		col  string
		want bool
	}{{0, "id", true}, {0, "k", false}, {1, "id", false}, {1, "k", true}, {0, "c", true}, {1, "c", true}} {
		if got := w.LeavesOut(c.row, c.col); got != c.want {
			t.Errorf("row %d leaves out %s: %v, want %v", c.row, c.col, got, c.want)
		}
	}
}

// TestTriggersFollowed: CREATE TRIGGER marks its table, in any form the
// server logs it.
func TestTriggersFollowed(t *testing.T) {
	c := NewCatalog()
	for _, q := range []string{"CREATE TABLE a (id INT PRIMARY KEY)", "CREATE TABLE b (id INT PRIMARY KEY)"} {
		if _, err := c.ApplyDDL("db", q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ApplyDDL("db", "CREATE DEFINER=`root`@`localhost` TRIGGER a_bi BEFORE INSERT ON a FOR EACH ROW SET NEW.id = NEW.id + 1"); err != nil {
		t.Fatal(err)
	}
	if !c.Table("db", "a").Triggers || c.Table("db", "b").Triggers {
		t.Errorf("triggers: a %v, b %v", c.Table("db", "a").Triggers, c.Table("db", "b").Triggers)
	}
}
