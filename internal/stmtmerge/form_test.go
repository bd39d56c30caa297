package stmtmerge

import (
	"slices"
	"testing"
)

// TestRecognize: the three forms are read with their parts; anything the
// scanner cannot read with certainty, or that writes more than one row by
// its key, is not.
func TestRecognize(t *testing.T) {
	for _, c := range []struct {
		q    string
		want Form
	}{
		{"UPDATE sbtest1 SET k=k+1 WHERE id=5", Form{Kind: Update, Table: "sbtest1", Key: "id", KeyValue: 5, Columns: []string{"k"}, Exprs: []string{"k+1"}}},
		{"update `d`.`t` set c = 'a,b', `n`=CONCAT(c, ')') where `ID` = 12", Form{Kind: Update, Table: "`d`.`t`", Key: "`ID`", KeyValue: 12,
			Columns: []string{"c", "`n`"}, Exprs: []string{"'a,b'", "CONCAT(c, ')')"}}},
		{"DELETE FROM sbtest8 WHERE id=50149", Form{Kind: Delete, Table: "sbtest8", Key: "id", KeyValue: 50149}},
		{"UPDATE t SET d=12.50, e=1.5e3 WHERE id=3", Form{Kind: Update, Table: "t", Key: "id", KeyValue: 3, Columns: []string{"d", "e"}, Exprs: []string{"12.50", "1.5e3"}}},
		{"INSERT INTO sbtest8 (id, k, c) VALUES (50149, 50591, 'it''s')", Form{Kind: Insert, Table: "sbtest8", Key: "id", KeyValue: 50149,
			Columns: []string{"id", "k", "c"}, Exprs: []string{"50149", "50591", "'it''s'"}}},
		{"INSERT t (c, id) VALUES (NOW(), 7)", Form{Kind: Insert, Table: "t", Key: "id", KeyValue: 7, Columns: []string{"c", "id"}, Exprs: []string{"NOW()", "7"}}},
		{"update `sessions` set `payload` = 'x', `last_activity` = 5 where `id` = 'Ab-12'", Form{Kind: Update, Table: "`sessions`", Key: "`id`", KeyText: "'Ab-12'",
			Columns: []string{"`payload`", "`last_activity`"}, Exprs: []string{"'x'", "5"}}},
		{"DELETE FROM t WHERE id='k1'", Form{Kind: Delete, Table: "t", Key: "id", KeyText: "'k1'"}},
		{"INSERT INTO t (id, v) VALUES ('k1', 'v')", Form{Kind: Insert, Table: "t", Key: "id", KeyText: "'k1'", Columns: []string{"id", "v"}, Exprs: []string{"'k1'", "'v'"}}},
	} {
		got, ok := Recognize(c.q, "id")
		if !ok {
			t.Errorf("%s: not recognized", c.q)
			continue
		}
		if got.Kind != c.want.Kind || got.Table != c.want.Table || got.Key != c.want.Key || got.KeyValue != c.want.KeyValue || got.KeyText != c.want.KeyText ||
			!slices.Equal(got.Columns, c.want.Columns) || !slices.Equal(got.Exprs, c.want.Exprs) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.q, got, c.want)
		}
	}
	for _, q := range []string{
		"UPDATE t SET k=k+1 WHERE id=5 LIMIT 1",
		"UPDATE t SET k=1 WHERE id=5 AND k=2",
		"UPDATE t SET k=1 WHERE other=5",
		"UPDATE t SET k=1 WHERE id=0",
		"UPDATE t SET k=1 WHERE id=-5",
		"UPDATE t SET k=1 WHERE id=05",
		"UPDATE t SET k=1 WHERE id=''",
		"UPDATE t SET k=1 WHERE id='a '",
		"UPDATE t SET k=1 WHERE id='it''s'",
		"INSERT INTO t (id, v) VALUES ('a ', 1)",
		"UPDATE t SET k=1 WHERE id IN (5)",
		"UPDATE LOW_PRIORITY t SET k=1 WHERE id=5",
		"UPDATE IGNORE t SET k=1 WHERE id=5",
		"UPDATE t SET k=DEFAULT WHERE id=5",
		"UPDATE t SET k=(SELECT 1) WHERE id=5",
		"UPDATE t SET k=@v WHERE id=5",
		"UPDATE t SET k=\"x\" WHERE id=5",
		"UPDATE t SET c='a\\'b' WHERE id=5",
		"UPDATE t SET c='é' WHERE id=5",
		"UPDATE t SET c='abc WHERE id=5",
		"UPDATE t SET c='a''b WHERE id=5",
		"UPDATE t SET c='a''\\' WHERE id=5",
		"UPDATE t SET c='a\x00' WHERE id=5",
		"UPDATE `té` SET k=1 WHERE id=5",
		"UPDATE t SET k=1 /* c */ WHERE id=5",
		"UPDATE t SET k=1 -- c\n WHERE id=5",
		"UPDATE t SET k=1 # c\n WHERE id=5",
		"UPDATE t SET k=1 WHERE id=5;",
		"UPDATE t SET k=(1 WHERE id=5",
		"UPDATE t, u SET t.k=1 WHERE id=5",
		"DELETE FROM t WHERE id=5 ORDER BY id",
		"DELETE t FROM t WHERE id=5",
		"DELETE FROM t",
		"INSERT INTO t (id, c) VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO t (id, c) VALUES (1, 'a') ON DUPLICATE KEY UPDATE c='b'",
		"INSERT IGNORE INTO t (id) VALUES (1)",
		"INSERT INTO t VALUES (1, 'a')",
		"INSERT INTO t (c) VALUES ('a')",
		"INSERT INTO t (id, c) VALUES (0, 'a')",
		"INSERT INTO t (id, c) VALUES (1+1, 'a')",
		"INSERT INTO t (id, ID) VALUES (1, 2)",
		"INSERT INTO t (id, c) VALUES (1)",
		"INSERT INTO t (id, c) SELECT 1, 'a'",
		"INSERT INTO t SET id=1",
		"REPLACE INTO t (id) VALUES (1)",
	} {
		if f, ok := Recognize(q, "id"); ok {
			t.Errorf("%s: recognized as %+v", q, f)
		}
	}
}

// TestFlushLevels: statements merge within levels of distinct rows, and
// the levels keep the order of statements that write the same row.
func TestFlushLevels(t *testing.T) {
	var m Merger
	add := func(q, table string) {
		t.Helper()
		f, ok := Recognize(q, "id")
		if !ok {
			t.Fatalf("%s: not recognized", q)
		}
		m.Add(&f, q, table)
	}
	add("UPDATE t SET k=k+1 WHERE id=1", "d.t")
	add("UPDATE t SET c='a' WHERE id=2", "d.t")
	add("DELETE FROM t WHERE id=3", "d.t")
	add("INSERT INTO t (id, k, c) VALUES (3, 1, 'x')", "d.t")
	add("UPDATE t SET k=k+1 WHERE id=4", "d.t")
	add("UPDATE t SET c='b' WHERE id=5", "d.t")
	add("DELETE FROM t WHERE id=6", "d.t")
	add("INSERT INTO t (id, k, c) VALUES (6, 2, 'y')", "d.t")
	add("UPDATE t SET k=k+1 WHERE id=3", "d.t") // after the insert of row 3
	add("UPDATE u SET k=k+1 WHERE id=3", "d.u") // another table's row 3
	add("UPDATE t SET c=c WHERE id=7", "d.t")   // not a literal: alone
	add("UPDATE t SET d=1.5 WHERE id=9", "d.t") // decimals: a CASE of their own
	add("UPDATE t SET d=2.25 WHERE id=10", "d.t")
	if m.Len() != 13 {
		t.Errorf("Len = %d, want 13", m.Len())
	}
	got := m.Flush()
	want := []string{
		"UPDATE t SET k=k+1 WHERE id IN (1,4)",
		"UPDATE t SET c=CASE id WHEN 2 THEN 'a' WHEN 5 THEN 'b' END WHERE id IN (2,5)",
		"DELETE FROM t WHERE id IN (3,6)",
		"UPDATE u SET k=k+1 WHERE id=3",
		"UPDATE t SET c=c WHERE id=7",
		"UPDATE t SET d=CASE id WHEN 9 THEN 1.5 WHEN 10 THEN 2.25 END WHERE id IN (9,10)",
		"INSERT INTO t (id, k, c) VALUES (3, 1, 'x'),(6, 2, 'y')",
		"UPDATE t SET k=k+1 WHERE id=3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Flush:\n got %q\nwant %q", got, want)
	}
	if m.Len() != 0 || m.Flush() != nil {
		t.Error("Flush did not empty the merger")
	}
	// Afresh after a Flush: row 3 is at level 0 again.
	add("UPDATE t SET k=k+1 WHERE id=3", "d.t")
	add("UPDATE t SET k=k+1 WHERE id=8", "d.t")
	if got := m.Flush(); !slices.Equal(got, []string{"UPDATE t SET k=k+1 WHERE id IN (3,8)"}) {
		t.Errorf("after Flush: %q", got)
	}
}
