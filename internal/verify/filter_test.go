package verify

import (
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/filter"
)

// filterSourceDDL is what a source replicated with --include app_copy.%
// --exclude app_copy.skip_me --rewrite-db app=app_copy holds (the patterns
// name the database as rewritten, as the applier tests them): app.t1 and app.t2
// keyed, app.t3 keyless (its differing rows are read whole, by other
// queries), app.skip_me and other.o1 left out.
var filterSourceDDL = []string{
	"CREATE DATABASE app",
	"CREATE TABLE app.t1 (id INT PRIMARY KEY, v VARCHAR(10))",
	"INSERT INTO app.t1 VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')",
	"CREATE TABLE app.t2 (id INT PRIMARY KEY, v VARCHAR(10))",
	"INSERT INTO app.t2 VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')",
	"CREATE TABLE app.t3 (a INT, b VARCHAR(10))",
	"INSERT INTO app.t3 VALUES (1, 'x'), (1, 'x'), (2, 'y')",
	"CREATE TABLE app.skip_me (id INT PRIMARY KEY)",
	"INSERT INTO app.skip_me VALUES (1)",
	"CREATE DATABASE other",
	"CREATE TABLE other.o1 (id INT PRIMARY KEY)",
	"INSERT INTO other.o1 VALUES (1)",
}

// filterTargetDDL is the target: app_copy with t1 equal, t2 with row 4
// changed and t3 with a row extra, and no skip_me or other. It also has a
// stale app.t1, unlike the source's, which the rules replicate nothing
// into: verify must read app_copy, and not look at app.
var filterTargetDDL = []string{
	"CREATE DATABASE app_copy",
	"CREATE TABLE app_copy.t1 (id INT PRIMARY KEY, v VARCHAR(10))",
	"INSERT INTO app_copy.t1 VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')",
	"CREATE TABLE app_copy.t2 (id INT PRIMARY KEY, v VARCHAR(10))",
	"INSERT INTO app_copy.t2 VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'D'), (5, 'e')",
	"CREATE TABLE app_copy.t3 (a INT, b VARCHAR(10))",
	"INSERT INTO app_copy.t3 VALUES (1, 'x'), (1, 'x'), (2, 'y'), (9, 'z')",
	"CREATE DATABASE app",
	"CREATE TABLE app.t1 (id INT PRIMARY KEY, v VARCHAR(10))",
	"INSERT INTO app.t1 VALUES (1, 'stale')",
}

var filterDrop = []string{
	"DROP DATABASE IF EXISTS app",
	"DROP DATABASE IF EXISTS app_copy",
	"DROP DATABASE IF EXISTS other",
}

// testFilters runs verify under filter rules on the servers of TestVerify,
// beside the vt fixture, which the rules leave out.
func testFilters(t *testing.T, srcDB, tgtDB *sql.DB) {
	exec(t, srcDB, filterDrop...)
	exec(t, tgtDB, filterDrop...)
	t.Cleanup(func() {
		exec(t, srcDB, filterDrop...)
		exec(t, tgtDB, filterDrop...)
	})
	exec(t, srcDB, filterSourceDDL...)
	exec(t, tgtDB, filterTargetDDL...)
	rules := mustRules(t, []string{"app_copy.%"}, []string{"app_copy.skip_me"}, []string{"app=app_copy"})
	const flags = "--include app_copy.% --exclude app_copy.skip_me --rewrite-db app=app_copy"

	t.Run("rules", func(t *testing.T) {
		for _, size := range []int{2, 1000} {
			rep := run(t, Options{Source: srcDB, Target: tgtDB, ChunkSize: size, Filter: &rules})
			want := map[string]Status{"t1": StatusOK, "t2": StatusDifferent, "t3": StatusDifferent}
			if len(rep.Tables) != len(want) || rep.Filters != flags {
				t.Fatalf("chunk size %d: want app.t1, t2, t3 and the filters:\n%s", size, text(rep))
			}
			for _, tr := range rep.Tables {
				if tr.Schema != "app" || tr.Status != want[tr.Name] || tr.Problem != "" ||
					tr.TargetTable == nil || *tr.TargetTable != (TableName{"app_copy", tr.Name}) {
					t.Errorf("chunk size %d: %s -> %v: %s %q, want %s against app_copy", size, tr.TableName, tr.TargetTable, tr.Status, tr.Problem, want[tr.Name])
				}
			}
			t2 := rep.Tables[1]
			if len(t2.Diffs) != 1 || len(t2.Diffs[0].Rows) != 1 || t2.Diffs[0].Rows[0].Kind != RowChanged || !slices.Equal(texts(t2.Diffs[0].Rows[0].Key), []string{"4"}) {
				t.Errorf("chunk size %d: app.t2: want row 4 changed:\n%s", size, text(rep))
			}
			t3 := rep.Tables[2]
			if len(t3.Diffs) != 1 || len(t3.Diffs[0].Rows) != 1 || t3.Diffs[0].Rows[0].Kind != RowExtra || !slices.Equal(texts(t3.Diffs[0].Rows[0].Key), []string{"9", "z"}) {
				t.Errorf("chunk size %d: app.t3: want row (9, 'z') extra:\n%s", size, text(rep))
			}
		}
	})

	t.Run("report", func(t *testing.T) {
		rep := run(t, Options{Source: srcDB, Target: tgtDB, ChunkSize: 2, Filter: &rules})
		out := text(rep)
		for _, want := range []string{
			"\nfilters: " + flags + "\n",
			"ok         app.t1 -> app_copy.t1  5 rows, 3 chunks\n",
			"DIFFERENT  app.t2 -> app_copy.t2  5 rows on source, 5 on target; 1 of 3 chunks differ\n",
			"changed: `id`=4\n",
			"extra on target: `a`=9, `b`='z'\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("text report lacks %q:\n%s", want, out)
			}
		}
		for _, not := range []string{"app.skip_me", "other", "vt."} {
			if strings.Contains(out, not) {
				t.Errorf("text report names %q:\n%s", not, out)
			}
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"filters":"--include app_copy.% --exclude app_copy.skip_me`, `"schema":"app","table":"t1","target_table":{"schema":"app_copy","table":"t1"}`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("JSON lacks %s:\n%s", want, b)
			}
		}
	})

	t.Run("with tables and schemas", func(t *testing.T) {
		rep := run(t, Options{Source: srcDB, Target: tgtDB, Filter: &rules, Tables: []TableName{{"app", "t1"}, {"app", "t2"}}})
		if len(rep.Tables) != 2 || rep.Tables[0].Status != StatusOK || rep.Tables[1].Status != StatusDifferent {
			t.Errorf("tables app.t1, app.t2: want t1 ok and t2 different:\n%s", text(rep))
		}
		rep = run(t, Options{Source: srcDB, Target: tgtDB, Filter: &rules, Schemas: []string{"app", "other"}})
		if len(rep.Tables) != 3 || rep.Summary.OK != 1 || rep.Summary.Different != 2 {
			t.Errorf("schemas app, other: want app.t1, t2, t3:\n%s", text(rep))
		}
		rep = run(t, Options{Source: srcDB, Target: tgtDB, Filter: &rules, Schemas: []string{"other"}})
		if len(rep.Tables) != 0 || !rep.Equal() {
			t.Errorf("schema other: want no table:\n%s", text(rep))
		}
		_, err := Run(t.Context(), Options{Source: srcDB, Target: tgtDB, Filter: &rules, Tables: []TableName{{"app", "skip_me"}}})
		if err == nil || !strings.Contains(err.Error(), "app.skip_me is left out by the filters") {
			t.Errorf("an excluded table asked for by name: error %v", err)
		}
	})

	// Patterns that name the source's database select nothing it
	// rewrites, for verify as for the applier.
	t.Run("patterns on the source name", func(t *testing.T) {
		r := mustRules(t, []string{"app.%"}, nil, []string{"app=app_copy"})
		rep := run(t, Options{Source: srcDB, Target: tgtDB, Filter: &r})
		if len(rep.Tables) != 0 {
			t.Errorf("want no table:\n%s", text(rep))
		}
	})

	t.Run("without rules", func(t *testing.T) {
		rep := run(t, Options{Source: srcDB, Target: tgtDB, Schemas: []string{"app", "app_copy", "other"}})
		want := map[TableName]string{
			{"app", "t1"}:      "", // the target's stale app.t1: its rows differ
			{"app", "t2"}:      ProblemMissingOnTarget,
			{"app", "t3"}:      ProblemMissingOnTarget,
			{"app", "skip_me"}: ProblemMissingOnTarget,
			{"other", "o1"}:    ProblemMissingOnTarget,
			{"app_copy", "t1"}: ProblemMissingOnSource,
			{"app_copy", "t2"}: ProblemMissingOnSource,
			{"app_copy", "t3"}: ProblemMissingOnSource,
		}
		if len(rep.Tables) != len(want) || rep.Filters != "" {
			t.Fatalf("want %d tables and no filters:\n%s", len(want), text(rep))
		}
		for _, tr := range rep.Tables {
			if p, ok := want[tr.TableName]; !ok || tr.Status != StatusDifferent || tr.Problem != p || tr.TargetTable != nil {
				t.Errorf("%s: %s %q, want different %q", tr.TableName, tr.Status, tr.Problem, p)
			}
		}
		if out := text(rep); strings.Contains(out, "filters:") || strings.Contains(out, "->") {
			t.Errorf("text report without rules names filters or target names:\n%s", out)
		}
	})
}

func mustRules(t *testing.T, include, exclude, rewrites []string) filter.Rules {
	t.Helper()
	r, err := filter.NewRules(include, exclude, rewrites)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMapping: target names, what is included, and the source names of
// target tables, under rewrites that merge and move databases.
func TestMapping(t *testing.T) {
	r := mustRules(t, []string{"app_copy.%", "c.%", "d.%", "other.%"}, []string{"app_copy.skip_me"}, []string{"app=app_copy", "a=c", "b=c", "d=e"})
	m := newMapping(&r)
	for _, c := range []struct {
		src, tgt TableName
		included bool
	}{
		{TableName{"app", "t"}, TableName{"app_copy", "t"}, true},
		{TableName{"app", "skip_me"}, TableName{"app_copy", "skip_me"}, false},
		{TableName{"app_copy", "t"}, TableName{"app_copy", "t"}, true}, // merged with app's
		{TableName{"other", "t"}, TableName{"other", "t"}, true},
		{TableName{"vt", "t"}, TableName{"vt", "t"}, false},
		{TableName{"d", "t"}, TableName{"e", "t"}, false}, // the patterns name e, not d
	} {
		if got := m.target(c.src); got != c.tgt {
			t.Errorf("target(%s) = %s, want %s", c.src, got, c.tgt)
		}
		if got := m.included(c.src); got != c.included {
			t.Errorf("included(%s) = %t", c.src, got)
		}
	}
	for _, c := range []struct {
		tgt, src TableName
		ok       bool
	}{
		{TableName{"app_copy", "t"}, TableName{"app", "t"}, true}, // the rewrite before its own name
		{TableName{"c", "t"}, TableName{"a", "t"}, true},          // the first rewrite
		{TableName{"other", "t"}, TableName{"other", "t"}, true},
		{TableName{"app", "t"}, TableName{}, false}, // app goes to app_copy; app is not included either
		{TableName{"app_copy", "skip_me"}, TableName{}, false},
		{TableName{"vt", "t"}, TableName{}, false},
	} {
		if got, ok := m.source(c.tgt); got != c.src || ok != c.ok {
			t.Errorf("source(%s) = %s, %t; want %s, %t", c.tgt, got, ok, c.src, c.ok)
		}
	}
	// A database rewritten away, and one only rewritten into.
	r2 := mustRules(t, nil, nil, []string{"app=app_copy"})
	m2 := newMapping(&r2)
	if got, ok := m2.source(TableName{"app_copy", "t"}); !ok || got != (TableName{"app", "t"}) {
		t.Errorf("source(app_copy.t) = %s, %t; want app.t", got, ok)
	}
	if _, ok := m2.source(TableName{"app", "t"}); ok {
		t.Errorf("source(app.t): app is rewritten away, yet a source table goes to it")
	}
	if got := m2.targetSchemas([]string{"app", "x", "app_copy"}); !slices.Equal(got, []string{"app_copy", "x"}) {
		t.Errorf("targetSchemas = %q", got)
	}

	none := newMapping(nil)
	empty := newMapping(&filter.Rules{})
	for _, m := range []mapping{none, empty} {
		n := TableName{"a", "b"}
		if s, ok := m.source(n); m.target(n) != n || !m.included(n) || !ok || s != n || m.flags() != "" {
			t.Errorf("no rules: %s maps to %s", n, m.target(n))
		}
	}
}

// TestPairs: the tables reported, with the rules, and the source tables
// that go to one target table.
func TestPairs(t *testing.T) {
	cat := func(names ...TableName) catalog {
		c := catalog{}
		for _, n := range names {
			c[n] = &table{Name: n}
		}
		return c
	}
	r := mustRules(t, nil, []string{"app_copy.skip_me"}, []string{"app=app_copy"})
	m := newMapping(&r)
	src := cat(TableName{"app", "t1"}, TableName{"app", "skip_me"}, TableName{"app", "only_src"}, TableName{"app_copy", "t1"})
	tgt := cat(TableName{"app_copy", "t1"}, TableName{"app_copy", "skip_me"}, TableName{"app_copy", "only_tgt"}, TableName{"app", "stale"})
	got := pairs(nil, m, src, tgt)
	want := []pair{
		{TableName{"app", "only_src"}, TableName{"app_copy", "only_src"}},
		{TableName{"app", "only_tgt"}, TableName{"app_copy", "only_tgt"}},
		{TableName{"app", "t1"}, TableName{"app_copy", "t1"}},
		{TableName{"app_copy", "t1"}, TableName{"app_copy", "t1"}},
	}
	if !slices.Equal(got, want) {
		t.Errorf("pairs =\n%v\nwant\n%v", got, want)
	}
	sh := merged(got)
	if len(sh) != 1 || !slices.Equal(sh[TableName{"app_copy", "t1"}], []TableName{{"app", "t1"}, {"app_copy", "t1"}}) {
		t.Errorf("merged = %v", sh)
	}
	got = pairs([]TableName{{"app", "t1"}, {"app", "t1"}, {"x", "y"}}, m, src, tgt)
	want = []pair{{TableName{"app", "t1"}, TableName{"app_copy", "t1"}}, {TableName{"x", "y"}, TableName{"x", "y"}}}
	if !slices.Equal(got, want) {
		t.Errorf("requested pairs = %v, want %v", got, want)
	}
}

// TestFilterFlags: the rules as options, quoted for a shell where they
// must be.
func TestFilterFlags(t *testing.T) {
	r := mustRules(t, []string{"app.*", "my db.%"}, []string{"%.tmp\\_%"}, []string{"a=b", "x=y->z", "it's=q"})
	want := `--include 'app.*' --include 'my db.%' --exclude '%.tmp\_%' --rewrite-db a=b --rewrite-db 'x=y->z' --rewrite-db 'it'\''s=q'`
	if got := newMapping(&r).flags(); got != want {
		t.Errorf("flags =\n%s\nwant\n%s", got, want)
	}
	// Each rewrite reads back as the rule it came from, whatever its
	// names hold ("x=y->z" is x=y to z).
	for _, rw := range append(r.Rewrites, filter.Rewrite{From: "a", To: "b->c"}, filter.Rewrite{From: "a", To: "b=c"}, filter.Rewrite{From: "a-", To: ">b"}) {
		back, err := filter.ParseRewrite(rewriteFlag(rw))
		if err != nil || back != rw {
			t.Errorf("%v written as %q reads back as %v, %v", rw, rewriteFlag(rw), back, err)
		}
	}
}
