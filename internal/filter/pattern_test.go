package filter

import "testing"

// TestPattern: MariaDB's wildcards, * as %, escapes, the database part,
// and case-sensitive names.
func TestPattern(t *testing.T) {
	cases := []struct {
		pattern, db, table string
		want               bool
	}{
		{"app.*", "app", "orders", true},
		{"app.%", "app", "", true},
		{"app.%", "apps", "orders", false},
		{"app.%", "App", "orders", false},
		{"%.tmp_%", "app", "tmp_1", true},
		{"%.tmp_%", "app", "tmp1", true}, // _ is any one character
		{"%.tmp\\_%", "app", "tmp1", false},
		{"%.tmp\\_%", "app", "tmp_1", true},
		{"%.tmp_%", "app", "tmp", false},
		{"a_c.t", "abc", "t", true},
		{"a_c.t", "ac", "t", false},
		{"a_c.t", "aüc", "t", true}, // a character, not a byte
		{"foo%.bar%", "food", "barn", true},
		{"foo%.bar%", "food", "xbar", false},
		{"a%.t", "a.b", "t", true}, // % spans the dot, as on MariaDB
		{"app.orders", "app", "orders", true},
		{"app.orders", "app", "orders2", false},
		{"app.o\\*", "app", "o*", true},
		{"app.o\\*", "app", "ox", false},
		{"日本.%", "日本", "t", true},
		{"%.%", "x", "y", true},
		{"a.b\\", "a", "b\\", true}, // a trailing backslash is itself
	}
	for _, c := range cases {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := p.Table(c.db, c.table); got != c.want {
			t.Errorf("%s matches %s.%s: %t, want %t", c.pattern, c.db, c.table, got, c.want)
		}
	}
	for _, bad := range []string{"app", "app\\.t", ".t", "app.", ""} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

// TestPatternDatabase: the database part, and db.% as a whole database.
func TestPatternDatabase(t *testing.T) {
	cases := []struct {
		pattern, db  string
		could, whole bool
	}{
		{"app.%", "app", true, true},
		{"app.*", "app", true, true},
		{"app.t%", "app", true, false},
		{"app.%", "apps", false, false},
		{"%.tmp_%", "anything", true, false},
		{"a%.%%", "abc", true, true},
		{"a\\%.%", "a%", true, true},
		{"a\\%.%", "ab", false, false},
	}
	for _, c := range cases {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Database(c.db); got != c.could {
			t.Errorf("%s: Database(%s) = %t", c.pattern, c.db, got)
		}
		if got := p.WholeDatabase(c.db); got != c.whole {
			t.Errorf("%s: WholeDatabase(%s) = %t", c.pattern, c.db, got)
		}
	}
}
