package schema

import (
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// shapeTemplates are statements with holes that shapeGen fills: {int} an
// integer literal (now and then with leading zeros or beyond int64),
// {big} one beyond int64, {str} a '...' string, {dq} a "..." string,
// {hexd} hex digits, {tbl} a table name, {cmt} a comment whose text
// varies, {in} an IN list of varying length.
var shapeTemplates = []string{
	// sysbench
	"UPDATE {tbl} SET k=k+{int} WHERE id={int}",
	"UPDATE {tbl} SET c={str} WHERE id={int}",
	"DELETE FROM {tbl} WHERE id={int}",
	"INSERT INTO {tbl} (id, k, c, pad) VALUES ({int}, {int}, {str}, {str})",
	// INSERT and REPLACE
	"INSERT INTO {tbl} VALUES ({int}, {int}, {str})",
	"insert {tbl} (id, k) values ({int}, {int}), ({int}, {int}), ({int}, -{int})",
	"REPLACE INTO {tbl} (id, k) VALUES ({int}, {int}), ({int}, {int})",
	"REPLACE {tbl} VALUES ({int})",
	"INSERT INTO {tbl} (id, n) VALUES ({int}, {int}) ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
	"INSERT INTO {tbl} (id, n) VALUES ({int}, {int}) ON DUPLICATE KEY UPDATE n = {int}, m = {str}",
	"INSERT INTO {tbl} (id, c) VALUES ({int}, CONCAT({str}, {str}))",
	"INSERT INTO {tbl} SET id = {int}, c = {str}",
	"INSERT INTO {tbl} (id) SELECT id + {int} FROM u WHERE k = {int}",
	"INSERT INTO {tbl} (id, c) VALUES ({int}, {str}) RETURNING id",
	"INSERT IGNORE INTO {tbl} (`id`, `k`) VALUES ({int}, {int})",
	"INSERT INTO {tbl} (id, k) VALUES ({int}, {int}) /* {cmt} */",
	"INSERT INTO {tbl} (id, k) VALUES (TRUE, {int}), (FALSE, {int})",
	"INSERT INTO {tbl} (id, k, c) VALUES (NULL, {int}, {str}), ({int}, NULL, {str}), (NULL, NULL, NULL)",
	"INSERT INTO {tbl} (k, c) VALUES ({int}, {str})",
	// UPDATE and DELETE
	"UPDATE {tbl} SET v = {int} WHERE id IN ({int}, {int}, {int})",
	"UPDATE {tbl} SET v = {int} WHERE id IN ({in})",
	"DELETE FROM {tbl} WHERE id = {int} AND k = {int}",
	"DELETE FROM {tbl} WHERE id = {int} OR k = {int}",
	"DELETE FROM {tbl} WHERE id = {int} AND (k = {int} OR k = {int})",
	"DELETE FROM {tbl} WHERE id = {int} AND id = {int}",
	"UPDATE {tbl} SET v = -{int} WHERE id = -{int}",
	"UPDATE {tbl} SET v = - {int} WHERE id = - {int} AND k = -(-{int})",
	"UPDATE {tbl} SET v = +{int} WHERE id = - -{int}",
	"DELETE FROM {tbl} WHERE {int} = id",
	"DELETE FROM {tbl} WHERE id = -9223372036854775808",
	"DELETE FROM {tbl} WHERE id = {big}",
	"DELETE FROM {tbl} WHERE id = 9223372036854775807 AND k = {int}",
	"UPDATE {tbl} SET c = {str} WHERE id = {int} LIMIT {int}",
	"UPDATE {tbl} SET c = {str} WHERE id = {int} ORDER BY id LIMIT {int}",
	"DELETE FROM {tbl} WHERE id = {int} ORDER BY k DESC LIMIT {int}",
	"DELETE FROM {tbl} WHERE id = (SELECT MAX(id) FROM u WHERE k = {int})",
	"UPDATE {tbl} SET v = (SELECT {int}) WHERE id = {int}",
	"UPDATE {tbl} SET v = {int} WHERE id IN (SELECT id FROM u WHERE k = {int})",
	"UPDATE {tbl} SET `k` = `k` + {int} WHERE `id` = {int}",
	"UPDATE {tbl} AS x SET x.k = {int} WHERE x.id = {int}",
	"UPDATE {tbl} x SET k = {int} WHERE y.id = {int}",
	"UPDATE sbtest1, sbtest2 SET sbtest1.v = {int} WHERE sbtest1.id = sbtest2.id AND sbtest1.id = {int}",
	"DELETE sbtest1 FROM sbtest1 JOIN sbtest2 ON sbtest1.id = sbtest2.id WHERE sbtest1.id = {int}",
	"DELETE FROM {tbl} WHERE id = {int}; DELETE FROM {tbl} WHERE id = {int}",
	"UPDATE {tbl} SET v = TRUE WHERE id = TRUE AND k = {int}",
	"UPDATE {tbl} SET k = @a:={int} WHERE id = {int}",
	"DELETE FROM {tbl} WHERE id = {int} AND c = {str} AND d = @x",
	"UPDATE {tbl} SET k = CASE WHEN id = {int} THEN {int} ELSE {str} END WHERE id = {int}",
	"UPDATE {tbl} SET d = DATE_ADD(d, INTERVAL {int} DAY) WHERE id = {int}",
	"UPDATE {tbl} SET d = DATE_ADD(d, INTERVAL {str} DAY) WHERE id = {int}",
	"UPDATE {tbl} SET c = CAST({int} AS CHAR) WHERE id = {int}",
	"UPDATE {tbl} SET v = CAST(v AS FLOAT({int})) WHERE id = {int}",
	"UPDATE {tbl} SET v = f({int}) WHERE id = {int}",
	"UPDATE {tbl} SET v = db.f({int}) WHERE id = {int}",
	"UPDATE {tbl} SET v = v WHERE id > {int}",
	"UPDATE {tbl} SET v = {int}",
	// Other numbers: decimals, floats, hex and bit literals.
	"DELETE FROM {tbl} WHERE id = {int}.{int}",
	"DELETE FROM {tbl} WHERE id = .{int}",
	"DELETE FROM {tbl} WHERE id = {int}.",
	"UPDATE {tbl} SET k = 1e-{int} WHERE id = {int}",
	"UPDATE {tbl} SET k = 1.e+{int} WHERE id = {int}",
	"UPDATE {tbl} SET k = {int}e{int} WHERE id = {int}",
	"UPDATE {tbl} SET e = e-{int} WHERE id = {int}",
	"UPDATE {tbl} SET k = k-{int} WHERE id = {int}",
	"DELETE FROM {tbl} WHERE id = 0x{hexd}",
	"DELETE FROM {tbl} WHERE id = x'{hexd}' OR id = {int}",
	"DELETE FROM {tbl} WHERE id = b'{int}' OR id = {int}",
	"DELETE FROM {tbl} WHERE id = 0b1{int}",
	"DELETE FROM {tbl} WHERE {tbl}.{int} = {int}",
	"DELETE FROM {tbl} WHERE id = 0{int}",
	"DELETE FROM {tbl} WHERE id = {int}abc",
	// Strings: quotes, escapes, introducers, collations, concatenation.
	"UPDATE {tbl} SET c = {dq} WHERE id = {int}",
	"UPDATE {tbl} SET c = {str} {str} WHERE id = {int}",
	"UPDATE {tbl} SET c = _utf8mb4{str} WHERE id = {int}",
	"UPDATE {tbl} SET c = _latin1 {str} WHERE id = {int}",
	"UPDATE {tbl} SET c = N{str} WHERE id = {int}",
	"UPDATE {tbl} SET c = {str} COLLATE utf8mb4_bin WHERE id = {int}",
	"UPDATE {tbl} SET c = {str} WHERE c LIKE {str} AND id = {int}",
	"UPDATE {tbl} SET c = {str} WHERE id = {int} AND c LIKE {str} ESCAPE {str}",
	"UPDATE {tbl} SET c = CONVERT({str} USING utf8mb4) WHERE id = {int}",
	"UPDATE {tbl} SET c = CAST({str} AS CHAR CHARACTER SET {str}) WHERE id = {int}",
	"UPDATE {tbl} SET c = {str} WHERE id = {int} AND {str} = {str}",
	"UPDATE {tbl} SET c = @{str} WHERE id = {int}",
	// String keys, plain or not (see plain).
	"UPDATE {tbl} SET k = {int} WHERE id = {str}",
	"UPDATE {tbl} SET c = {str} WHERE id = {dq} AND k = {int}",
	"DELETE FROM {tbl} WHERE id IN ({str}, {str}, {dq})",
	"DELETE FROM {tbl} WHERE id IN ({str}, {int})",
	"DELETE FROM {tbl} WHERE id = {str} AND id = {str}",
	"INSERT INTO {tbl} (id, k, c) VALUES ({str}, {int}, {str}), ({dq}, {int}, _utf8mb4{str})",
	"INSERT INTO {tbl} (id, c) VALUES ({str}, {str}) ON DUPLICATE KEY UPDATE c = {str}",
	// Comments and versioned comments.
	"UPDATE {tbl} SET c = {str} WHERE id = {int} -- {cmt}\n",
	"UPDATE {tbl} SET c = {str} WHERE id = {int} # {cmt}\n;",
	"/* {cmt} */ UPDATE {tbl} SET k = {int} WHERE id = {int};",
	"/*!40000 UPDATE {tbl} SET k = {int} WHERE id = {int} */",
	"UPDATE {tbl} SET k = {int} /*!50000 , v = {int} */ WHERE id = {int}",
	"UPDATE {tbl} SET k = {int} /*M!100000 , v = {int} */ WHERE id = {int}",
	"UPDATE {tbl} SET k = {int} /*M!999999 , v = {int} */ WHERE id = {int}",
	"UPDATE {tbl} SET k = {int} /*!5000012 , v = {int} */ WHERE id = {int}",
	"UPDATE {tbl} SET k = {int}/*{cmt}*/WHERE id = {int}",
	"DELETE FROM {tbl} WHERE id = {int}--{int}",
	"DELETE FROM {tbl} WHERE id = {int}/**/--/**/ {int}",
	"DELETE FROM {tbl} WHERE id = {int} /*!50000 -- x */ AND k = {int}",
	"DELETE FROM {tbl} WHERE id = {int} /*!50000 /* {cmt} */ AND k = {int} */",
	"  \n\tDELETE FROM {tbl} WHERE id = {int} ; ;  \n",
	"DELETE FROM {tbl} WHERE id = {int}\u00a0",
	"\u00a0DELETE FROM {tbl} WHERE id = {int}",
	"DELETE FROM {tbl} WHERE id = {int}\f;",
	"UPDATE {tbl} SET c = {str} WHERE id = {int",
	"UPDATE {tbl} SET c = '{cmt} WHERE id = {int}",
	// Unicode names.
	"UPDATE `tä` SET c = {str} WHERE id = {int}",
	"UPDATE {tbl} SET ç = {int} WHERE id = {int}",
	"UPDATE 日本 SET k = {int} WHERE id = {int}",
	// Not shaped: read whole each time.
	"SET STATEMENT max_statement_time={int} FOR UPDATE {tbl} SET k={int} WHERE id={int}",
	"ALTER TABLE {tbl} ADD COLUMN c{int} INT DEFAULT {int}",
	"CREATE TABLE t{int} (a INT, b VARCHAR({int}) DEFAULT {str})",
	"DROP TABLE {tbl}",
	"CALL p({int})",
	"SELECT {int}",
	"WITH x AS (SELECT {int}) UPDATE {tbl} SET k = {int} WHERE id = {int}",
}

// shapeTables are the names {tbl} takes: unqualified, qualified, quoted.
var shapeTables = []string{"sbtest1", "`sbtest2`", "db2.sbtest3", "`db 2`.`t``x`", "`a.b`", "sbtest1 AS s"}

// shapeSchemas are the current databases statements run in.
var shapeSchemas = []string{"sbtest", "db2", ""}

// shapeStrings are the pieces string contents are made of: quotes,
// escapes, semicolons, comment markers, unicode, invalid UTF-8, marks.
var shapeStrings = []string{
	"abc", "68487932199-96439406143", "Q", `\\`, `\n`, `\Q`, ";", "--", "-- ", "/*", "*/", "#", "\n", "ä", "日本",
	"\xff\xfe", "%", "_", "\x00", "\x01", "\x02", "0", "utf8mb4", "latin1", " ", "/*!50000 x */",
}

// shapeGen makes statements from shapeTemplates.
type shapeGen struct{ r *rand.Rand }

// fill fills the holes of tpl; {tbl} is tbl.
func (g shapeGen) fill(tpl, tbl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tpl, '{')
		j := strings.IndexByte(tpl[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		j += i
		b.WriteString(tpl[:i])
		switch hole := tpl[i+1 : j]; hole {
		case "int":
			b.WriteString(g.integer())
		case "big":
			b.WriteString("9223372036854775808" + strconv.Itoa(g.r.Intn(100)))
		case "str":
			b.WriteString(g.str('\''))
		case "dq":
			b.WriteString(g.str('"'))
		case "hexd":
			b.WriteString(strconv.FormatInt(g.r.Int63n(1<<40), 16))
		case "tbl":
			b.WriteString(tbl)
		case "cmt":
			b.WriteString(strconv.Itoa(g.r.Intn(1000)) + " x")
		case "in":
			for k := range 1 + g.r.Intn(4) {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(g.integer())
			}
		default:
			b.WriteString(tpl[i : j+1])
		}
		tpl = tpl[j+1:]
	}
}

func (g shapeGen) integer() string {
	switch g.r.Intn(20) {
	case 0:
		return "00" + strconv.Itoa(g.r.Intn(100))
	case 1:
		return strconv.FormatUint(uint64(1)<<63+uint64(g.r.Intn(5)), 10)
	case 2:
		return "9223372036854775807"
	case 3:
		return "0"
	case 4:
		return "99999999999999999999999"
	}
	return strconv.Itoa(g.r.Intn(100000))
}

// str is a string literal quoted with q.
func (g shapeGen) str(q byte) string {
	var b strings.Builder
	b.WriteByte(q)
	for range g.r.Intn(4) {
		switch p := shapeStrings[g.r.Intn(len(shapeStrings))]; p {
		case "Q":
			if g.r.Intn(2) == 0 {
				b.WriteString(string(q) + string(q))
			} else {
				b.WriteString(`\` + string(q))
			}
		default:
			b.WriteString(p)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// shapeFamily is statements of one template, table and current database.
type shapeFamily struct {
	schema string
	stmts  []string
}

// shapeCorpus is n statements of each template, table and database
// (tables and databases sampled).
func shapeCorpus(seed int64, n int) []shapeFamily {
	g := shapeGen{rand.New(rand.NewSource(seed))}
	var out []shapeFamily
	for _, tpl := range shapeTemplates {
		for range 2 {
			f := shapeFamily{schema: shapeSchemas[g.r.Intn(len(shapeSchemas))]}
			tbl := shapeTables[g.r.Intn(len(shapeTables))]
			for range n {
				f.stmts = append(f.stmts, g.fill(tpl, tbl))
			}
			out = append(out, f)
		}
	}
	return out
}

// checkShapeRead reads query through c and whole, and fails unless both
// say the same.
func checkShapeRead(t *testing.T, c *shapeCache, currentSchema, query string) {
	t.Helper()
	got := c.read(currentSchema, query)
	want := readFull(currentSchema, query)
	if !reflect.DeepEqual(got.subjects, want.subjects) || fmt.Sprint(got.subjectsErr) != fmt.Sprint(want.subjectsErr) {
		t.Fatalf("in %q, %q: subjects %+v, %v; parsed: %+v, %v", currentSchema, query, got.subjects, got.subjectsErr, want.subjects, want.subjectsErr)
	}
	if !reflect.DeepEqual(got.writes, want.writes) || got.writesOK != want.writesOK {
		t.Fatalf("in %q, %q: writes %#v, %v; parsed: %#v, %v", currentSchema, query, got.writes, got.writesOK, want.writes, want.writesOK)
	}
	if got.query != query || got.schema != currentSchema {
		t.Fatalf("read of %q in %q says it is of %q in %q", query, currentSchema, got.query, got.schema)
	}
	checkCleaned(t, query)
}

// checkCleaned fails unless the shape scan and cleanQuery clean query as
// the splitter does.
func checkCleaned(t *testing.T, query string) {
	t.Helper()
	want, _ := cleanQueryMapped(query)
	if got := cleanQuery(query); got != want {
		t.Fatalf("%q: cleanQuery %q, the splitter %q", query, got, want)
	}
	raw := appendCleaned(nil, query, nil)
	if got := strings.TrimRight(strings.TrimSpace(string(raw)), "; \t\r\n"); got != want {
		t.Fatalf("%q cleaned: %q, the splitter: %q", query, got, want)
	}
	if text, ok := trimCleaned(raw); ok && string(text) != want {
		t.Fatalf("%q trimmed: %q, the splitter: %q", query, text, want)
	}
}

// TestShapesReadAsParsed: every statement of the corpus, the first of its
// shape and the later ones, reads through the shape cache exactly as
// parsed whole; and most shapes are served from their template.
func TestShapesReadAsParsed(t *testing.T) {
	c := newShapeCache(maxShapes, maxShapeBytes)
	families := shapeCorpus(1, 6)
	for _, f := range families {
		for _, q := range f.stmts {
			checkShapeRead(t, c, f.schema, q)
		}
	}
	t.Logf("%d families: %d shapes learnt, %d cacheable, %d statements read from a template", len(families), c.learnt, c.cacheable, c.hits)
	if c.cacheable < len(families)/2 || c.hits < len(families) {
		t.Fatalf("%d of %d shapes cacheable, %d statements read from a template: the cache hardly serves", c.cacheable, c.learnt, c.hits)
	}
}

// TestSysbenchShapesCached: the four statements of sysbench's write_only
// are each parsed once, the later ones read from their shape.
func TestSysbenchShapesCached(t *testing.T) {
	c := newShapeCache(maxShapes, maxShapeBytes)
	for _, variants := range sysbenchVariants(10) {
		for _, q := range variants {
			checkShapeRead(t, c, "sbtest", q)
		}
	}
	if c.learnt != 4 || c.cacheable != 4 || c.hits != 4*9 {
		t.Fatalf("%d shapes learnt, %d cacheable, %d hits; want 4, 4, 36", c.learnt, c.cacheable, c.hits)
	}
}

// sysbenchVariants are n statements of each of sysbenchStatements' shapes,
// with other ids, values and strings.
func sysbenchVariants(n int) [][]string {
	out := make([][]string, len(sysbenchStatements))
	for i, q := range sysbenchStatements {
		for k := range n {
			v := strings.NewReplacer("5034", strconv.Itoa(5034+k), "4953", strconv.Itoa(k*7), "5019", strconv.Itoa(100000+k),
				"4988", strconv.Itoa(k), "83868641912", strconv.Itoa(k*13), "68487932199", strconv.Itoa(k*17)).Replace(q)
			out[i] = append(out[i], v)
		}
	}
	return out
}

// TestShapeCacheBounded: shapes that never repeat (IN lists of every
// length) keep the cache within its limits of shapes and bytes, and a
// shape in use all along stays in it.
func TestShapeCacheBounded(t *testing.T) {
	c := newShapeCache(16, 64<<10)
	var in []string
	for n := range 400 {
		in = append(in, strconv.Itoa(n))
		checkShapeRead(t, c, "db", "DELETE FROM t WHERE id IN ("+strings.Join(in, ",")+")")
		checkShapeRead(t, c, "db", "UPDATE t SET k=k+1 WHERE id="+strconv.Itoa(n))
		if len(c.byKey) > 16 || c.bytes > 64<<10 {
			t.Fatalf("after %d shapes: %d in the cache, %d bytes", n+1, len(c.byKey), c.bytes)
		}
	}
	if c.hits != 399 {
		t.Fatalf("the UPDATE's shape was read from the cache %d times of 399", c.hits)
	}
	long := "DELETE FROM t WHERE id IN (" + strings.Repeat("1,", maxShapeQuery/2) + "1)"
	learnt := c.learnt
	checkShapeRead(t, c, "db", long)
	if c.learnt != learnt {
		t.Fatal("a statement longer than maxShapeQuery was learnt")
	}
}

// TestShapeReadsConcurrent: readers on several goroutines share shapes
// (run with -race).
func TestShapeReadsConcurrent(t *testing.T) {
	c := newShapeCache(maxShapes, maxShapeBytes)
	variants := sysbenchVariants(20)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 20 {
				for _, vs := range variants {
					q := vs[(k+g*5)%len(vs)]
					got, want := c.read("sbtest", q), readFull("sbtest", q)
					if !reflect.DeepEqual(got.writes, want.writes) || !reflect.DeepEqual(got.subjects, want.subjects) {
						t.Errorf("%q: %+v, parsed %+v", q, got.writes, want.writes)
					}
				}
			}
		})
	}
	wg.Wait()
	if c.hits == 0 {
		t.Fatal("no statement was read from its shape")
	}
}

// sibling is a statement of the shape sc scanned (in currentSchema), with
// other literals.
func sibling(r *rand.Rand, currentSchema string, key []byte) string {
	var b strings.Builder
	for i := len(currentSchema) + 1; i < len(key); i++ {
		switch c := key[i]; c {
		case intMark:
			switch r.Intn(4) {
			case 0:
				b.WriteString("9223372036854775807")
			case 1:
				b.WriteString("0")
			default:
				b.WriteString(strconv.FormatInt(r.Int63n(1<<40), 10))
			}
		case strMark:
			i++
			q := key[i]
			g := shapeGen{r}
			b.WriteString(g.str(q))
		default:
			b.WriteByte(c)
		}
	}
	// A shape may end in a blank a semicolon kept from the trimming.
	b.WriteByte(';')
	return b.String()
}

// FuzzStatementShapes: any statement, and another of its shape, reads
// through the shape cache as parsed whole; the other scans to the same
// shape.
func FuzzStatementShapes(f *testing.F) {
	for _, fam := range shapeCorpus(2, 1) {
		f.Add(fam.schema, fam.stmts[0], int64(len(fam.stmts[0])))
	}
	f.Fuzz(func(t *testing.T, currentSchema, query string, seed int64) {
		c := newShapeCache(8, 1<<20)
		checkShapeRead(t, c, currentSchema, query)
		var sc shapeScan
		if !sc.scan(currentSchema, query) {
			return
		}
		other := sibling(rand.New(rand.NewSource(seed)), currentSchema, sc.key)
		var sc2 shapeScan
		if !sc2.scan(currentSchema, other) || string(sc2.key) != string(sc.key) {
			t.Fatalf("%q, of the shape of %q, scans to %q, not %q", other, query, sc2.key, sc.key)
		}
		checkShapeRead(t, c, currentSchema, other)
		checkShapeRead(t, c, currentSchema, query)
	})
}

// TestShapeLiteralsThatMatter: literals whose content or form changes how
// a statement parses are part of its shape, so that a statement is never
// read from the template of one that differs from it there.
func TestShapeLiteralsThatMatter(t *testing.T) {
	for _, c := range []struct{ first, later string }{
		// The parser checks a character set's name and an ESCAPE character.
		{"UPDATE t SET c = CAST(c AS CHAR CHARACTER SET 'utf8mb4') WHERE id = 1", "UPDATE t SET c = CAST(c AS CHAR CHARACTER SET 'nope') WHERE id = 2"},
		{"UPDATE t SET c = 'a' WHERE id = 1 AND c LIKE 'a' ESCAPE '!'", "UPDATE t SET c = 'a' WHERE id = 1 AND c LIKE 'a' ESCAPE '!!'"},
		// A hex string's digits.
		{"UPDATE t SET c = x'0F' WHERE id = 1", "UPDATE t SET c = x'ZZ' WHERE id = 1"},
		// "--" left by the cleaning: the parser reads a comment to the
		// end of the line, a newline in a string ends it.
		{"DELETE FROM t WHERE id = 1/**/--/**/ 'x'", "DELETE FROM t WHERE id = 1/**/--/**/ '\nAND k = 7 -- '"},
		// Integers beyond int64 are not pinned.
		{"DELETE FROM t WHERE id = 5", "DELETE FROM t WHERE id = 9223372036854775808"},
		{"DELETE FROM t WHERE id = -5", "DELETE FROM t WHERE id = -9223372036854775808"},
		{"DELETE FROM t WHERE id = 5", "DELETE FROM t WHERE id = 18446744073709551616"},
		// Digits after "t." name a column.
		{"DELETE FROM t WHERE t.5 = 1", "DELETE FROM t WHERE t.6 = 1"},
		// Exponents and fractions.
		{"UPDATE t SET k = 1e-5 WHERE id = 1", "UPDATE t SET k = 1e-400 WHERE id = 1"},
		{"UPDATE t SET k = 1e+5 WHERE id = 1", "UPDATE t SET k = 1e+400 WHERE id = 1"},
		{"DELETE FROM t WHERE id = 1.0", "DELETE FROM t WHERE id = 1.5"},
		// An unterminated string.
		{"UPDATE t SET c = 'a' WHERE id = 1", "UPDATE t SET c = 'a WHERE id = 1"},
		{"UPDATE t SET k = 1 WHERE id = 1 AND c = 'x'", "UPDATE t SET k = 1 WHERE id = 1 AND c = 'x"},
	} {
		sc := newShapeCache(8, 1<<20)
		checkShapeRead(t, sc, "db", c.first)
		checkShapeRead(t, sc, "db", c.later)
	}
}

// TestLearnShapeRefuses: a shape is not cacheable when the statement it
// is learnt from does not read as its template says (here the scan of one
// statement beside the read of another) or does not parse.
func TestLearnShapeRefuses(t *testing.T) {
	for _, c := range []struct{ scanned, read string }{
		{"DELETE FROM t WHERE id = 1", "DELETE FROM t WHERE id = 2"},
		{"INSERT INTO t (id, k) VALUES (1, 2)", "INSERT INTO t (id, k) VALUES (1, 3)"},
		{"UPDATE t SET v = 1 WHERE id = 1", "UPDATE u SET v = 1 WHERE id = 1"},
		{"DELETE FROM t WHERE id = 1", "DELETE FROM t WHERE id = 1 RETURNING id"},
		{"UPDATE t, u SET t.v = 1 WHERE t.id = 1", "UPDATE t, w SET t.v = 1 WHERE t.id = 1"},
		{"UPDATE t SET v = 1 WHERE id > 1", "UPDATE t SET v = 1 WHERE id > 1 RETURNING id"},
	} {
		var sc shapeScan
		if !sc.scan("db", c.scanned) {
			t.Fatalf("%q: not scanned", c.scanned)
		}
		p := parseText(cleanQuery(c.read))
		if sh := learnShape("db", &sc, readParsed("db", c.read, p), p.err); sh.cacheable {
			t.Errorf("the shape of %q learnt from %q is cacheable", c.scanned, c.read)
		}
	}
}
