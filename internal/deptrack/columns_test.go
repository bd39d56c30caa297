package deptrack

import (
	"slices"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/schema"
)

// TestColumns: the columns a decoder must give the extractor are those of
// the table's keys (primary, unique, foreign, and column lists another
// table's foreign key references), and all of them for a table whose keys
// are not known; DDL followed (Invalidate) changes them.
func TestColumns(t *testing.T) {
	cat, _, err := schema.Parse(strings.NewReader(`
CREATE DATABASE d;
USE d;
CREATE TABLE p (id INT PRIMARY KEY, code INT, note TEXT, KEY (code));
CREATE TABLE c (id INT PRIMARY KEY, a INT, u INT, pid INT, pcode INT, note TEXT, UNIQUE KEY (u),
  FOREIGN KEY (pid) REFERENCES p (id), FOREIGN KEY (pcode) REFERENCES p (code));
`), "cols.sql")
	if err != nil {
		t.Fatal(err)
	}
	x := NewExtractor(cat)
	for _, c := range []struct {
		table string
		want  []bool
	}{
		{"p", []bool{true, true, false}},                    // id, and code that c references
		{"c", []bool{true, false, true, true, true, false}}, // id, u, pid, pcode
	} {
		if got := x.Columns("d", c.table, len(c.want)); !slices.Equal(got, c.want) {
			t.Errorf("d.%s: columns %v, want %v", c.table, got, c.want)
		}
	}
	if got := x.Columns("d", "unknown", 3); got != nil {
		t.Errorf("a table without a schema: columns %v, want all (nil)", got)
	}
	if _, err := cat.ApplyDDL("d", "ALTER TABLE c ADD UNIQUE KEY (a)"); err != nil {
		t.Fatal(err)
	}
	x.Invalidate()
	if got := x.Columns("d", "c", 6); !got[1] {
		t.Errorf("after ADD UNIQUE KEY (a): columns %v, want a among them", got)
	}
}
