package prepare

import "testing"

// TestReadsFullText: a statement that searches a full-text index commits
// in a target transaction of its own (see readsFullText); others batch.
func TestReadsFullText(t *testing.T) {
	for q, want := range map[string]bool{
		"DELETE FROM t1 WHERE MATCH (a,b) AGAINST ('+MySQL' IN BOOLEAN MODE)": true,
		"update t1 set a = 1 where match(a) against('x')":                     true,
		"UPDATE sbtest1 SET k=k+1 WHERE id=5":                                 false,
		"INSERT INTO t (id, against) VALUES (1, 2)":                           false,
		"INSERT INTO t (`match`, note) VALUES (1, 'against the odds')":        true, // alone: costs a batch only
		"DELETE FROM sbtest1 WHERE id=7 /* against */":                        false,
	} {
		if got := readsFullText(q); got != want {
			t.Errorf("readsFullText(%q) = %v, want %v", q, got, want)
		}
	}
}
