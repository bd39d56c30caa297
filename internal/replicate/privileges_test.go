package replicate

import "testing"

// TestLikeDatabase: a GRANT's database pattern covers databases as the
// server matches them: % any characters, _ one, \ escapes either.
func TestLikeDatabase(t *testing.T) {
	for _, c := range []struct {
		pattern, db string
		want        bool
	}{
		{"app", "app", true}, {"app", "apps", false}, {"app%", "apps", true}, {"app%", "ap", false},
		{"a_p", "aXp", true}, {`a\_p`, "aXp", false}, {`a\_p`, "a_p", true}, {"%", "", true}, {"%x%", "axb", true},
		{"%x%", "ab", false}, {"", "", true},
	} {
		if got := likeDatabase(c.pattern, c.db); got != c.want {
			t.Errorf("likeDatabase(%q, %q) = %v, want %v", c.pattern, c.db, got, c.want)
		}
	}
}

// TestGrantsMissing: a privilege counts when held globally or on a
// pattern that covers the database.
func TestGrantsMissing(t *testing.T) {
	g := &grants{global: map[string]bool{"SELECT": true},
		schemas: map[string]map[string]bool{"app%": {"INSERT": true}, "paraply": {"DELETE": true}}}
	if got := g.missing("app1", []string{"SELECT", "INSERT", "DELETE"}); len(got) != 1 || got[0] != "DELETE" {
		t.Errorf("app1: missing %v, want [DELETE]", got)
	}
	if got := g.missing("paraply", []string{"SELECT", "DELETE"}); len(got) != 0 {
		t.Errorf("paraply: missing %v, want none", got)
	}
}
