package clone

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/checkpoint"
)

func str(s string) *string { return &s }

// TestHoles finds the key ranges no committed chunk holds, by equality of
// bounds alone, through segments of segments.
func TestHoles(t *testing.T) {
	seg := func(n int, lo, hi *string) checkpoint.CloneSegment {
		return checkpoint.CloneSegment{Segment: n, Lower: lo, Upper: hi}
	}
	ch := func(s, n int, lo, hi *string, last bool) checkpoint.CloneChunk {
		return checkpoint.CloneChunk{Segment: s, Seq: n, Lower: lo, Upper: hi, Last: last}
	}
	show := func(spans []span) string {
		var b []string
		for _, s := range spans {
			b = append(b, "("+or(s.lower)+","+or(s.upper)+"]")
		}
		return strings.Join(b, " ")
	}
	for _, c := range []struct {
		name   string
		segs   []checkpoint.CloneSegment
		chunks []checkpoint.CloneChunk
		want   string
	}{
		{"not begun", nil, nil, "(-,-]"},
		{"whole", []checkpoint.CloneSegment{seg(0, nil, nil)},
			[]checkpoint.CloneChunk{ch(0, 1, nil, str("a"), false), ch(0, 2, str("a"), nil, true)}, ""},
		{"a chunk missing in the middle, and the tail", []checkpoint.CloneSegment{seg(0, nil, nil)},
			[]checkpoint.CloneChunk{ch(0, 1, nil, str("a"), false), ch(0, 3, str("b"), str("c"), false)}, "(a,b] (c,-]"},
		{"the first chunks missing", []checkpoint.CloneSegment{seg(0, nil, nil)},
			[]checkpoint.CloneChunk{ch(0, 3, str("b"), nil, true)}, "(-,b]"},
		{"holes read in a later run, one of them in part",
			[]checkpoint.CloneSegment{seg(0, nil, nil), seg(1, str("a"), str("b")), seg(2, str("c"), nil)},
			[]checkpoint.CloneChunk{ch(0, 1, nil, str("a"), false), ch(0, 3, str("b"), str("c"), false),
				ch(1, 1, str("a"), str("a5"), false), ch(1, 2, str("a5"), str("b"), true),
				ch(2, 2, str("d"), str("e"), false)},
			"(c,d] (e,-]"},
	} {
		if got := show(holes(c.segs, c.chunks)); got != c.want {
			t.Errorf("%s: holes %s, want %s", c.name, got, c.want)
		}
	}
}

func or(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// TestSplitIndexes takes the secondary indexes out of a definition but
// the key it is read by, and adds them back in as few statements as
// InnoDB allows.
func TestSplitIndexes(t *testing.T) {
	create := "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `k` int(11) NOT NULL,\n  `c` text,\n  `u` varchar(10) NOT NULL,\n" +
		"  PRIMARY KEY (`id`),\n  UNIQUE KEY `u` (`u`),\n  KEY `k_1` (`k`),\n  FULLTEXT KEY `ft` (`c`)\n) ENGINE=InnoDB"
	got, ixs := splitIndexes(create, "PRIMARY")
	want := "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `k` int(11) NOT NULL,\n  `c` text,\n  `u` varchar(10) NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	if strings.Join(ixs, "|") != "UNIQUE KEY `u` (`u`)|KEY `k_1` (`k`)|FULLTEXT KEY `ft` (`c`)" {
		t.Errorf("indexes: %q", ixs)
	}
	stmts := addIndexes("d", "t", ixs)
	if len(stmts) != 2 || stmts[0] != "ALTER TABLE `d`.`t` ADD UNIQUE KEY `u` (`u`), ADD KEY `k_1` (`k`)" || stmts[1] != "ALTER TABLE `d`.`t` ADD FULLTEXT KEY `ft` (`c`)" {
		t.Errorf("statements: %q", stmts)
	}
	// The key a table without a primary key is read by stays.
	got, ixs = splitIndexes(create, "u")
	if !strings.Contains(got, "UNIQUE KEY `u`") || len(ixs) != 2 {
		t.Errorf("kept u: %s, %q", got, ixs)
	}
}

// TestValues writes each kind of value as a literal that the server reads
// back as the bytes the source stored.
func TestValues(t *testing.T) {
	cols := []column{{kind: numberKind}, {kind: quotedKind}, {kind: textKind, charset: "latin1"}, {kind: bytesKind}}
	got := string(appendTuple(nil, cols, []sql.RawBytes{[]byte("-1.5e-07"), []byte("2024-01-01 00:00:00.5"), []byte("\xe9'\\"), []byte("\x00\n\r\x1a\"")}))
	want := `(-1.5e-07,'2024-01-01 00:00:00.5',_latin1'` + "\xe9" + `\'\\',_binary'\0\n\r\Z"')`
	if got != want {
		t.Errorf("tuple %s, want %s", got, want)
	}
	if got := string(appendTuple(nil, cols[:2], []sql.RawBytes{nil, {}})); got != "(NULL,'')" {
		t.Errorf("NULL and empty: %s", got)
	}
	// Bounds go into the chunk's query as string literals, never into a
	// quoted name.
	if got := inline("SELECT `a?``b` FROM t WHERE `a?``b` > CAST(? AS SIGNED) AND c = '?' AND d <= ?", []any{"1", "x'y"}); got !=
		"SELECT `a?``b` FROM t WHERE `a?``b` > CAST('1' AS SIGNED) AND c = '?' AND d <= 'x\\'y'" {
		t.Errorf("inline: %s", got)
	}
}

// TestBudget holds at most its bytes, and a part larger than all of it
// alone.
func TestBudget(t *testing.T) {
	ctx := context.Background()
	b := newBudget(100)
	got, err := b.take(ctx, 60)
	if err != nil || got != 60 {
		t.Fatalf("take 60: %d, %v", got, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.take(short, 50); err == nil {
		t.Fatal("took 50 more of 100 with 60 held")
	}
	b.give(60)
	if got, err := b.take(ctx, 1000); err != nil || got != 100 {
		t.Fatalf("a part larger than the budget: took %d, %v; want all of it", got, err)
	}
}

// TestThrottle holds rows to their rate: 500 rows at 1000 a second are
// not due before half a second (a lower bound: waits never end early).
func TestThrottle(t *testing.T) {
	th := &throttle{rate: 1000}
	began := time.Now()
	for range 5 {
		if err := th.wait(context.Background(), 100); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(began); d < 450*time.Millisecond {
		t.Errorf("500 rows at 1000/s took %v", d)
	}
	var none *throttle
	if err := none.wait(context.Background(), 1<<30); err != nil {
		t.Errorf("no throttle: %v", err)
	}
}

// TestFields writes LOAD DATA's fields: NULL apart from the text \N, the
// bytes that end fields and lines escaped.
func TestFields(t *testing.T) {
	tr := &tableRun{cols: []column{{}, {}, {}}, load: " INTO TABLE t"}
	got := string(tr.appendRow(nil, []sql.RawBytes{nil, []byte(`\N`), []byte("a\tb\nc\x00'\r")}))
	if want := "\\N\t\\\\N\ta\\tb\\nc\\0'\r\n"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
}
