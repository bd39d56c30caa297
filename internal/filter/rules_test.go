package filter

import (
	"strings"
	"testing"
)

func mustRules(t *testing.T, include, exclude, rewrite []string) Rules {
	t.Helper()
	r, err := NewRules(include, exclude, rewrite)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRulesTable: included and not excluded; no --include is all.
func TestRulesTable(t *testing.T) {
	r := mustRules(t, []string{"app.*", "shop.orders"}, []string{"%.tmp_%"}, nil)
	for _, c := range []struct {
		db, table string
		want      bool
	}{
		{"app", "users", true},
		{"app", "tmp_x", false}, // MariaDB would apply it: its do rule wins
		{"shop", "orders", true},
		{"shop", "items", false},
		{"other", "t", false},
	} {
		if got := r.Table(c.db, c.table); got != c.want {
			t.Errorf("%s.%s: %t, want %t", c.db, c.table, got, c.want)
		}
	}
	only := mustRules(t, nil, []string{"skip.%"}, nil)
	if !only.Table("any", "t") || only.Table("skip", "t") {
		t.Error("--exclude alone: everything but what it matches")
	}
	var none Rules
	if !none.Empty() || !none.Table("a", "b") || !none.WholeDatabase("a") || none.Filters() {
		t.Error("the zero Rules must let everything through")
	}
}

// TestRulesWholeDatabase: database statements pass when a table of the
// database could be included and db.% does not exclude it.
func TestRulesWholeDatabase(t *testing.T) {
	r := mustRules(t, []string{"app.*", "shop.orders"}, []string{"%.tmp_%", "app_old.%"}, nil)
	for db, want := range map[string]bool{"app": true, "shop": true, "other": false} {
		if got := r.WholeDatabase(db); got != want {
			t.Errorf("%s: %t, want %t", db, got, want)
		}
	}
	ex := mustRules(t, nil, []string{"app_old.%", "%.tmp_%"}, nil)
	if ex.WholeDatabase("app_old") || !ex.WholeDatabase("app") {
		t.Error("only db.% excludes a whole database")
	}
}

// TestRulesRewrite: exact names, once, and errors for bad values.
func TestRulesRewrite(t *testing.T) {
	r := mustRules(t, nil, nil, []string{"src=dst", "a->b", "b=c"})
	for from, want := range map[string]string{"src": "dst", "a": "b", "b": "c", "Src": "Src", "other": "other"} {
		if got, _ := r.Database(from); got != want {
			t.Errorf("%s: %s, want %s", from, got, want)
		}
	}
	if r.Filters() || r.Empty() {
		t.Error("rewrites are not filters, but are rules")
	}
	for _, bad := range [][]string{{"src"}, {"=dst"}, {"src="}, {"x=x"}, {"a=b", "a=c"}, {"a=" + strings.Repeat("x", 65)}, {"a=b "}} {
		if _, err := NewRules(nil, nil, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := NewRules([]string{"nodot"}, nil, nil); err == nil || !strings.Contains(err.Error(), "--include") {
		t.Errorf("bad --include: %v", err)
	}
	if s := mustRules(t, []string{"app.%"}, []string{"%.tmp_%"}, []string{"src=dst"}); s.String() != "include app.%; exclude %.tmp_%; rewrite src to dst" {
		t.Errorf("String() = %q", s.String())
	}
}
