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
		{"UPDATE t SET k=k+1 WHERE id=5", Writes{Table: tn, Where: []ColumnValues{{Column: "id", Values: []int64{5}}}, Set: []string{"k"}}, true},
		{"UPDATE sbtest1 SET c='x' WHERE id=42", Writes{Table: TableName{"db", "sbtest1"}, Where: []ColumnValues{{Column: "id", Values: []int64{42}}}, Set: []string{"c"}}, true},
		{"DELETE FROM `o`.`t` WHERE (id = -3) AND c LIKE 'a%'", Writes{Table: TableName{"o", "t"}, Where: []ColumnValues{{Column: "id", Values: []int64{-3}}}}, true},
		{"DELETE FROM t WHERE id IN (1, 2) AND k = 7", Writes{Table: tn, Where: []ColumnValues{{Column: "id", Values: []int64{1, 2}}, {Column: "k", Values: []int64{7}}}}, true},
		{"INSERT INTO t (id, k, c) VALUES (1, 2, 'a'), (3, 4, CONCAT('b', NOW()))",
			Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{{{Column: "id", Value: 1}, {Column: "k", Value: 2}, {Column: "c", Str: "a", IsStr: true}}, {{Column: "id", Value: 3}, {Column: "k", Value: 4}}}, Columns: []string{"id", "k", "c"}}, true},
		{"INSERT INTO t (id, n) VALUES (1, 1) ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
			Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{{{Column: "id", Value: 1}, {Column: "n", Value: 1}}}, Set: []string{"n"}, Columns: []string{"id", "n"}}, true},
		{"REPLACE INTO t (id) VALUES (9)", Writes{Table: tn, Insert: true, Replace: true, Rows: [][]ColumnValue{{{Column: "id", Value: 9}}}, Columns: []string{"id"}}, true},
		{"INSERT INTO t (ID, k) VALUES (NULL, 1), (0, NULL), (7, 2)",
			Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{{{Column: "k", Value: 1}}, {{Column: "id", Value: 0}}, {{Column: "id", Value: 7}, {Column: "k", Value: 2}}}, Columns: []string{"id", "k"},
				Nulls: [][]string{{"id"}, {"k"}, nil}}, true},
		{"INSERT INTO t (k) VALUES (1)", Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{{{Column: "k", Value: 1}}}, Columns: []string{"k"}}, true},
		{"UPDATE t SET v = @x WHERE id = 1", Writes{Table: tn, Where: []ColumnValues{{Column: "id", Values: []int64{1}}}, Set: []string{"v"}}, true},
		// Plain strings are values; others (escapes, quotes, a trailing
		// blank, beyond ASCII) are not literals to Writes.
		{"UPDATE t SET n = 1 WHERE id = 'ab-12:Z'", Writes{Table: tn, Where: []ColumnValues{{Column: "id", Strs: []string{"ab-12:Z"}}}, Set: []string{"n"}}, true},
		{`DELETE FROM t WHERE id IN ('a', "b c") AND k = 'x'`, Writes{Table: tn, Where: []ColumnValues{{Column: "id", Strs: []string{"a", "b c"}}, {Column: "k", Strs: []string{"x"}}}}, true},
		{"DELETE FROM t WHERE id IN ('a', 1) AND k = 2", Writes{Table: tn, Where: []ColumnValues{{Column: "k", Values: []int64{2}}}}, true},
		{`UPDATE t SET n = 1 WHERE id = 'a\nb' AND k = 'it''s' AND v = 'b ' AND w = 'é' AND x = ''`,
			Writes{Table: tn, Where: []ColumnValues{{Column: "x", Strs: []string{""}}}, Set: []string{"n"}}, true},
		{"UPDATE t SET n = 1 WHERE id = 'a\\nb'", Writes{Table: tn, Set: []string{"n"}}, false},
		{"INSERT INTO t (id, k, id) VALUES ('a', 'b\\nc', CONCAT('x'))", Writes{Table: tn, Insert: true, Rows: [][]ColumnValue{nil}, Columns: []string{"id", "k", "id"}}, true},
		{"UPDATE t SET n = 1 WHERE id = 'a\\Qb'", Writes{Table: tn, Where: []ColumnValues{{Column: "id", Strs: []string{"aQb"}}}, Set: []string{"n"}}, true},
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
