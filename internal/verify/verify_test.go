package verify

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestMain stops the sandboxes on SIGINT/SIGTERM, and fails the run if a
// goroutine a test started (a chunk comparison's) is still running.
func TestMain(m *testing.M) {
	uninstall := sandbox.HandleSignals()
	code := m.Run()
	uninstall()
	if err := sandbox.StopAll(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if err := goleak.Find(sandboxtest.IgnoreForkThread()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// chunkSizes are one row per chunk, a size that does not divide the
// tables, and one larger than most tables. Every difference is looked for
// with the last two over all tables; a difference about keys and chunk
// bounds also with chunk size 1, over its table alone (each chunk costs a
// few round trips, and the whole fixture has 4300 rows).
var chunkSizes = []int{1, 7, 1000}

// keySQL says, for each keyed table of the fixture, how the test reads its
// keys in index order, shown as verify shows them. It is written out by
// hand rather than taken from the package, so that a wrong key order or
// bound in the package shows up as a wrong chunk.
var keySQL = map[string]struct{ sel, order string }{
	"big":      {"id", "id"},
	"comp":     {"region, seq, day", "region, seq, day"},
	"uniq":     {"code", "code"},
	weirdTable: {"CONCAT('0x', HEX(" + quoteIdent(weirdKey) + "))", quoteIdent(weirdKey)},
	"events":   {"kind, at", "kind, at"},
	"empty":    {"id", "id"},
}

// diffCase is one difference made on the target, and what verify must say.
type diffCase struct {
	name   string
	mutate []string // run on the target
	table  string   // in schema vt
	// Either a problem with the whole table, or one differing row.
	problem string
	rows    []wantRow
	// bounds marks a case about keys and chunk bounds, also run with chunk
	// size 1; the others are about the row hash.
	bounds bool
}

// wantRow is a differing row: its kind, its key values (Value.Text) or a
// keyless row's values, and for a keyless table the number of rows.
type wantRow struct {
	kind  RowKind
	key   []string
	count int
}

func row(kind RowKind, key ...string) []wantRow { return []wantRow{{kind, key, 1}} }

func diffCases() []diffCase {
	nextFloat := math.Nextafter32(float32(500)/7, math.MaxFloat32)
	return []diffCase{
		{name: "changed decimal", table: "big", rows: row(RowChanged, "1234"),
			mutate: []string{"UPDATE vt.big SET amount = amount + 0.000001 WHERE id = 1234"}},
		{name: "case only in a case-insensitive column", table: "big", rows: row(RowChanged, "77"),
			mutate: []string{"UPDATE vt.big SET ci = UPPER(ci) WHERE id = 77"}},
		{name: "NULL to empty string", table: "big", rows: row(RowChanged, "999"),
			mutate: []string{"UPDATE vt.big SET n = '' WHERE id = 999"}},
		{name: "empty string to NULL", table: "big", rows: row(RowChanged, "1000"),
			mutate: []string{"UPDATE vt.big SET n = NULL WHERE id = 1000"}},
		// Without the ISNULL flags both rows would hash "...#v#" alike.
		{name: "NULL and empty string swapped", table: "big", rows: row(RowChanged, "1003"),
			mutate: []string{"UPDATE vt.big SET n = NULL, n2 = '' WHERE id = 1003"}},
		// CONCAT_WS of the raw values would be "a#b#c" both times.
		{name: "separator moved between columns", table: "big", rows: row(RowChanged, "2"),
			mutate: []string{"UPDATE vt.big SET n = 'a', n2 = 'b#c' WHERE id = 2"}},
		{name: "latin1 accent", table: "big", rows: row(RowChanged, "1500"),
			mutate: []string{"UPDATE vt.big SET l1 = 'cafe 1500' WHERE id = 1500"}},
		{name: "unicode normalization", table: "big", rows: row(RowChanged, "6"),
			mutate: []string{"UPDATE vt.big SET uni = 'Gru\u0308ße 6' WHERE id = 6"}}, // decomposed ü, equal under unicode_ci
		{name: "one blob byte", table: "big", rows: row(RowChanged, "2000"),
			mutate: []string{"UPDATE vt.big SET bl = CONCAT(LEFT(bl, 5), X'00') WHERE id = 2000"}},
		{name: "float by one ulp", table: "big", rows: row(RowChanged, "500"),
			mutate: []string{fmt.Sprintf("UPDATE vt.big SET f = %s WHERE id = 500", fmt.Sprint(float64(nextFloat)))}},
		{name: "datetime by a microsecond", table: "big", rows: row(RowChanged, "2999"),
			mutate: []string{"UPDATE vt.big SET dt = dt + INTERVAL 1 MICROSECOND WHERE id = 2999"}},
		{name: "bit", table: "big", rows: row(RowChanged, "3"),
			mutate: []string{"UPDATE vt.big SET b = b ^ 512 WHERE id = 3"}},
		{name: "json", table: "big", rows: row(RowChanged, "42"),
			mutate: []string{`UPDATE vt.big SET j = JSON_SET(j, '$.id', 43) WHERE id = 42`}},
		{name: "extra row after the last", bounds: true, table: "big", rows: row(RowExtra, "5000"),
			mutate: []string{"INSERT INTO vt.big (id, ci) VALUES (5000, 'late')"}},
		{name: "extra row before the first", bounds: true, table: "big", rows: row(RowExtra, "0"),
			mutate: []string{"INSERT INTO vt.big (id, ci) VALUES (0, 'early')"}},
		{name: "missing row, composite key", bounds: true, table: "comp", rows: row(RowMissing, "Asia", fmt.Sprint(compSeqBase+1), "2024-03-02"),
			mutate: []string{fmt.Sprintf("DELETE FROM vt.comp WHERE region = 'Asia' AND seq = %d AND day = '2024-03-02'", compSeqBase+1)}},
		{name: "changed row, composite key", bounds: true, table: "comp", rows: row(RowChanged, "ÅLAND", fmt.Sprint(compSeqBase+49), "2024-03-03"),
			mutate: []string{fmt.Sprintf("UPDATE vt.comp SET payload = 'changed' WHERE region = 'ÅLAND' AND seq = %d AND day = '2024-03-03'", compSeqBase+49)}},
		{name: "extra row, weird table", bounds: true, table: weirdTable, rows: row(RowExtra, "0xFFFF00AA"),
			mutate: []string{"INSERT INTO vt." + quoteIdent(weirdTable) + " VALUES (0xFFFF00AA, 7)"}},
		{name: "changed row, weird table", bounds: true, table: weirdTable, rows: row(RowChanged, "0x0000B9FF"),
			mutate: []string{"UPDATE vt." + quoteIdent(weirdTable) + " SET " + quoteIdent(weirdValue) + " = -1 WHERE " + quoteIdent(weirdKey) + " = 0x0000B9FF"}},
		{name: "missing row, enum and timestamp key", bounds: true, table: "events", rows: row(RowMissing, "a", "2024-06-01 00:00:37.001000"),
			mutate: []string{"DELETE FROM vt.events WHERE kind = 'a' AND at = '2024-06-01 00:00:37.001000'"}},
		{name: "changed row, unique key only", bounds: true, table: "uniq", rows: row(RowChanged, "ö-150"),
			mutate: []string{"UPDATE vt.uniq SET val = val + 1 WHERE code = 'ö-150'"}},
		{name: "extra row, empty table", bounds: true, table: "empty", rows: row(RowExtra, "1"),
			mutate: []string{"INSERT INTO vt.empty VALUES (1)"}},
		{name: "extra row, keyless table", table: "nokey", rows: []wantRow{{RowExtra, []string{"3", "x"}, 1}},
			mutate: []string{"INSERT INTO vt.nokey VALUES (3, 'x')"}},
		{name: "missing duplicate, keyless table", table: "nokey", rows: []wantRow{{RowMissing, []string{"4", "x"}, 1}},
			mutate: []string{"DELETE FROM vt.nokey WHERE a = 4 LIMIT 1"}},
		// Both copies of a row replaced by two copies of another: the count
		// and a BIT_XOR alone would not change.
		{name: "duplicate pair replaced, keyless table", table: "nokey", rows: []wantRow{{RowMissing, []string{"1", "x"}, 2}, {RowExtra, []string{"99", "q"}, 2}},
			mutate: []string{"UPDATE vt.nokey SET a = 99, b = 'q' WHERE a = 1"}},
		{name: "missing table", table: "uniq", problem: ProblemMissingOnTarget,
			mutate: []string{"DROP TABLE vt.uniq"}},
		{name: "column type", table: "big", problem: ProblemColumns,
			mutate: []string{"ALTER TABLE vt.big MODIFY n VARCHAR(11) NULL"}},
		{name: "column collation", table: "comp", problem: ProblemColumns,
			mutate: []string{"ALTER TABLE vt.comp MODIFY payload VARCHAR(20) COLLATE utf8mb4_bin"}},
	}
}

func TestVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("needs MariaDB servers (-short)")
	}
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "verify-source"})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "verify-target"})
	srcDB, tgtDB := openDB(t, src, nil), openDB(t, tgt, nil)
	loadFixture(t, srcDB, true)
	loadFixture(t, tgtDB, false)

	t.Run("equal", func(t *testing.T) {
		for _, size := range chunkSizes {
			rep := run(t, Options{Source: srcDB, Target: tgtDB, ChunkSize: size})
			if !rep.Equal() {
				t.Fatalf("chunk size %d: not equal:\n%s", size, text(rep))
			}
			checkCoverage(t, rep, srcDB, size)
		}
	})

	t.Run("target session in another time zone", func(t *testing.T) {
		tz := openDB(t, tgt, func(c *mysql.Config) { c.Params = map[string]string{"time_zone": "'+05:00'"} })
		rep := run(t, Options{Source: srcDB, Target: tz, ChunkSize: 7})
		if !rep.Equal() {
			t.Fatalf("not equal:\n%s", text(rep))
		}
	})

	// Key values cross the client as hex, so a connection character set
	// that cannot hold them (東京 in latin1) does not break the walk.
	t.Run("latin1 sessions", func(t *testing.T) {
		latin1 := func(c *mysql.Config) { c.Collation = "latin1_swedish_ci" }
		srcL1, tgtL1 := openDB(t, src, latin1), openDB(t, tgt, latin1)
		rep := run(t, Options{Source: srcL1, Target: tgtL1, ChunkSize: 7})
		if !rep.Equal() {
			t.Fatalf("not equal:\n%s", text(rep))
		}
		checkCoverage(t, rep, srcL1, 7)
	})

	for _, c := range diffCases() {
		t.Run(c.name, func(t *testing.T) {
			exec(t, tgtDB, c.mutate...)
			t.Cleanup(func() { loadFixture(t, tgtDB, false) })
			sizes := chunkSizes[1:]
			if c.problem != "" {
				sizes = chunkSizes[2:] // the rows are not compared
			}
			for _, size := range sizes {
				rep := run(t, Options{Source: srcDB, Target: tgtDB, ChunkSize: size})
				checkDiff(t, rep, c, size, srcDB, tgtDB)
			}
			if c.bounds {
				rep := run(t, Options{Source: srcDB, Target: tgtDB, ChunkSize: 1, Tables: []TableName{{"vt", c.table}}})
				checkDiff(t, rep, c, 1, srcDB, tgtDB)
			}
		})
	}

	t.Run("selected tables", func(t *testing.T) {
		exec(t, tgtDB, "DELETE FROM vt.comp LIMIT 1")
		t.Cleanup(func() { loadFixture(t, tgtDB, false) })
		rep := run(t, Options{Source: srcDB, Target: tgtDB, Tables: []TableName{{"vt", "big"}, {"vt", weirdTable}}})
		if !rep.Equal() || len(rep.Tables) != 2 {
			t.Fatalf("want 2 equal tables:\n%s", text(rep))
		}
		rep = run(t, Options{Source: srcDB, Target: tgtDB, Schemas: []string{oddSchema}})
		if !rep.Equal() || len(rep.Tables) != 1 || rep.Tables[0].Schema != oddSchema {
			t.Fatalf("want the one table of %q:\n%s", oddSchema, text(rep))
		}
		rep = run(t, Options{Source: srcDB, Target: tgtDB, Tables: []TableName{{"vt", "comp"}, {"vt", "nope"}}})
		if rep.Equal() || rep.Summary.Different != 1 || rep.Summary.Errors != 1 {
			t.Fatalf("want comp different and nope an error:\n%s", text(rep))
		}
	})

	t.Run("extra table on target", func(t *testing.T) {
		exec(t, tgtDB, "CREATE TABLE vt.stray (id INT PRIMARY KEY)")
		t.Cleanup(func() { loadFixture(t, tgtDB, false) })
		rep := run(t, Options{Source: srcDB, Target: tgtDB})
		tr := onlyDifferent(t, rep, "stray")
		if tr.Problem != ProblemMissingOnSource {
			t.Errorf("problem = %q, want %q", tr.Problem, ProblemMissingOnSource)
		}
	})

	t.Run("filters", func(t *testing.T) { testFilters(t, srcDB, tgtDB) })

	t.Run("streams", func(t *testing.T) { testStreams(t, srcDB, tgtDB) })

	t.Run("report", func(t *testing.T) {
		exec(t, tgtDB, "DELETE FROM vt.big WHERE id BETWEEN 1 AND 12",
			"UPDATE vt.comp SET payload = NULL WHERE seq = "+fmt.Sprint(compSeqBase+2))
		t.Cleanup(func() { loadFixture(t, tgtDB, false) })
		rep := run(t, Options{Source: srcDB, Target: tgtDB, ChunkSize: 5, SourceName: "mysql://root@src:1", TargetName: "mysql://root@tgt:2"})
		big := rep.Tables[slices.IndexFunc(rep.Tables, func(tr TableReport) bool { return tr.Name == "big" })]
		listed, missing := 0, 0
		for _, d := range big.Diffs {
			listed += len(d.Rows)
			missing += d.Missing
		}
		if listed != DefaultMaxRows || missing < DefaultMaxRows || big.SourceRows-big.TargetRows != 12 {
			t.Errorf("big: %d rows listed, %d counted missing, %d-%d rows; want %d listed of 12\n%s",
				listed, missing, big.SourceRows, big.TargetRows, DefaultMaxRows, text(rep))
		}
		out := text(rep)
		for _, want := range []string{
			"verify mysql://root@tgt:2 against mysql://root@src:1, 5 rows per chunk",
			"DIFFERENT  vt.big", "chunk 1, `id` <= 5: 5 rows on source, 0 on target (5 missing on target, 0 extra, 0 changed)",
			"chunk 2, `id` in (5, 10]: 5 rows on source, 0 on target (5 missing on target, 0 extra, 0 changed)",
			"chunk 3, `id` in (10, 15]: 5 rows on source, 3 on target\n",
			"missing on target: `id`=1\n", "missing on target: `id`=10\n",
			"DIFFERENT  vt.comp", "changed: `region`='eu', `seq`=9007199254740994, `day`='2024-03-01'",
			"ok         " + quoteIdent(oddSchema) + ".t",
			"ok         vt." + quoteIdent(weirdTable),
			"target DIFFERS from source",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("text report lacks %q:\n%s", want, out)
			}
		}
		var back Report
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Summary != rep.Summary || back.Summary.Equal || len(back.Tables) != len(rep.Tables) {
			t.Errorf("JSON round trip: summary %+v, want %+v", back.Summary, rep.Summary)
		}
		if !bytes.Contains(b, []byte(`"key_columns":["region","seq","day"]`)) || !bytes.Contains(b, []byte(`"lower":null`)) {
			t.Errorf("JSON lacks key columns or an open bound:\n%s", b)
		}
	})
}

// openDB opens a pool on s; change, if not nil, adjusts its settings.
func openDB(t *testing.T, s *sandbox.Server, change func(*mysql.Config)) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(s.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(cfg)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

func run(t *testing.T, opts Options) *Report {
	t.Helper()
	rep, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func text(rep *Report) string {
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		return err.Error()
	}
	return b.String()
}

// checkCoverage checks that the chunks of every table of an equal report
// held each source row once, in the number of chunks the walk must take.
func checkCoverage(t *testing.T, rep *Report, db *sql.DB, size int) {
	t.Helper()
	if len(rep.Tables) != 8 {
		t.Errorf("chunk size %d: %d tables, want 8 (paraply's skipped):\n%s", size, len(rep.Tables), text(rep))
	}
	for _, tr := range rep.Tables {
		var n int64
		if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+tr.quoted()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		wantChunks := int(n)/size + 1
		if tr.KeyName == "" {
			wantChunks = 1
		}
		if tr.SourceRows != n || tr.TargetRows != n || tr.Chunks != wantChunks {
			t.Errorf("chunk size %d: %s: %d/%d rows in %d chunks, want %d rows in %d chunks", size, tr.TableName, tr.SourceRows, tr.TargetRows, tr.Chunks, n, wantChunks)
		}
	}
	if tr := rep.Tables[slices.IndexFunc(rep.Tables, func(tr TableReport) bool { return tr.Name == "uniq" })]; tr.KeyName != "code" {
		t.Errorf("uniq walked by key %q, want code", tr.KeyName)
	}
}

// onlyDifferent returns the report of vt.name, failing unless it is the
// only table that is not ok.
func onlyDifferent(t *testing.T, rep *Report, name string) *TableReport {
	t.Helper()
	var found *TableReport
	for i := range rep.Tables {
		tr := &rep.Tables[i]
		switch {
		case tr.Schema == "vt" && tr.Name == name:
			found = tr
		case tr.Status != StatusOK:
			t.Errorf("%s is %s, want ok", tr.TableName, tr.Status)
		}
	}
	if found == nil {
		t.Fatalf("vt.%s not in the report:\n%s", name, text(rep))
	}
	if found.Status != StatusDifferent || rep.Equal() || rep.Summary.Different != 1 {
		t.Fatalf("vt.%s is %s (error %q), want the one different table:\n%s", name, found.Status, found.Error, text(rep))
	}
	return found
}

// checkDiff checks that rep reports exactly c's difference, in the right
// chunk for the chunk size.
func checkDiff(t *testing.T, rep *Report, c diffCase, size int, srcDB, tgtDB *sql.DB) {
	t.Helper()
	tr := onlyDifferent(t, rep, c.table)
	if c.problem != "" {
		if tr.Problem != c.problem {
			t.Errorf("problem = %q, want %q\n%s", tr.Problem, c.problem, text(rep))
		}
		return
	}
	if len(tr.Diffs) != 1 || len(tr.Diffs[0].Rows) != len(c.rows) {
		t.Fatalf("chunk size %d: want one differing chunk with %d rows:\n%s", size, len(c.rows), text(rep))
	}
	d := tr.Diffs[0]
	for _, w := range c.rows {
		if !slices.ContainsFunc(d.Rows, func(r RowDiff) bool {
			return r.Kind == w.kind && slices.Equal(texts(r.Key), w.key) && r.Count == w.count
		}) {
			t.Errorf("chunk size %d: no row %s %q ×%d\n%s", size, w.kind, w.key, w.count, text(rep))
		}
	}
	want := c.rows[0]
	if tr.KeyName == "" {
		if d.Chunk != 1 || d.Lower != nil || d.Upper != nil {
			t.Errorf("keyless chunk %d (%v, %v], want the whole table", d.Chunk, d.Lower, d.Upper)
		}
		return
	}
	// Where the row sits in index order: on the source, or for an extra
	// row on the target, where the rows before it are the source's.
	q := keySQL[c.table]
	keysOn := func(db *sql.DB) [][]string {
		return orderedKeys(t, db, "SELECT "+q.sel+" FROM vt."+quoteIdent(c.table)+" ORDER BY "+q.order)
	}
	srcKeys, pos := keysOn(srcDB), -1
	findIn := srcKeys
	if want.kind == RowExtra {
		findIn = keysOn(tgtDB)
	}
	for i, k := range findIn {
		if slices.Equal(k, want.key) {
			pos = i
		}
	}
	if pos < 0 {
		t.Fatalf("test bug: key %q not found", want.key)
	}
	chunk := pos/size + 1
	var lower, upper []string
	if chunk > 1 {
		lower = srcKeys[(chunk-1)*size-1]
	}
	if chunk*size-1 < len(srcKeys) {
		upper = srcKeys[chunk*size-1]
	}
	if d.Chunk != chunk || !slices.Equal(texts(d.Lower), lower) || !slices.Equal(texts(d.Upper), upper) {
		t.Errorf("chunk size %d: chunk %d (%q, %q], want chunk %d (%q, %q]\n%s", size, d.Chunk, texts(d.Lower), texts(d.Upper), chunk, lower, upper, text(rep))
	}
	if wantChunks := len(srcKeys)/size + 1; tr.Chunks != wantChunks {
		t.Errorf("chunk size %d: %d chunks, want %d", size, tr.Chunks, wantChunks)
	}
}

func orderedKeys(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var keys [][]string
	for rows.Next() {
		k := make([]string, len(cols))
		dest := make([]any, len(cols))
		for i := range k {
			dest[i] = &k[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

func texts(vs []Value) []string {
	if vs == nil {
		return nil
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.Text
		if v.Null {
			s[i] = "NULL"
		}
	}
	return s
}

func TestParseTableNames(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []TableName
	}{
		{"shop.orders", []TableName{{"shop", "orders"}}},
		{"a.b, c.d", []TableName{{"a", "b"}, {"c", "d"}}},
		{"`my db`.`we``ird, tåble.x`,s.t", []TableName{{"my db", "we`ird, tåble.x"}, {"s", "t"}}},
	} {
		got, err := ParseTableNames(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseTableNames(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "orders", "a.b.c", "a.b,", "`a.b", "a`x`.b", "a.``"} {
		if got, err := ParseTableNames(bad); err == nil {
			t.Errorf("ParseTableNames(%q) = %q, want an error", bad, got)
		}
	}
}

func TestWhere(t *testing.T) {
	p := &plan{key: []keyCol{{name: "a", param: "CAST(? AS SIGNED)"}, {name: "b`", param: "?"}}}
	where, args := p.where([]string{"1", "x"}, []string{"2", "y"})
	want := " WHERE ((`a` > CAST(? AS SIGNED) OR (`a` = CAST(? AS SIGNED) AND `b``` > ?))) AND ((`a` < CAST(? AS SIGNED) OR (`a` = CAST(? AS SIGNED) AND `b``` <= ?)))"
	if where != want || fmt.Sprint(args) != "[1 1 x 2 2 y]" {
		t.Errorf("where =\n%s %v\nwant\n%s [1 1 x 2 2 y]", where, args, want)
	}
}
