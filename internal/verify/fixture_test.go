package verify

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The fixture: the same schemas and rows on both servers, covering the
// kinds of keys, types, character sets and names verify must handle.
const (
	bigRows    = 3000
	weirdTable = "we`ird tåble"
	weirdKey   = "k`ey ü"
	weirdValue = "va lue"
	oddSchema  = "vt 2`ü"
)

var fixtureDDL = []string{
	"CREATE DATABASE vt",
	// Most column types, and a PK that is an integer.
	"CREATE TABLE vt.big (" +
		"id INT PRIMARY KEY, " +
		"ci VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, " +
		"uni TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci, " +
		"l1 VARCHAR(20) CHARACTER SET latin1, " +
		"n VARCHAR(10) NULL, n2 VARCHAR(10) NULL, " +
		"bl BLOB, " +
		"f FLOAT, d DOUBLE, amount DECIMAL(20, 6), " +
		"dt DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, " +
		"b BIT(10), e ENUM('a', 'b', 'c'), s SET('x', 'y', 'z'), " +
		"j JSON, " +
		"g INT AS (id * 2) VIRTUAL, " +
		"gs VARCHAR(50) AS (UPPER(ci)) STORED)",
	// A composite key: a case-insensitive string, an unsigned BIGINT above
	// 2^53 (where a double cannot tell neighbours apart), and a DATE.
	"CREATE TABLE vt.comp (region VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, " +
		"seq BIGINT UNSIGNED NOT NULL, day DATE NOT NULL, payload VARCHAR(20), PRIMARY KEY (region, seq, day))",
	// No key at all, and every row twice.
	"CREATE TABLE vt.nokey (a INT, b VARCHAR(10))",
	// No primary key: a nullable unique key (unusable) and a NOT NULL one.
	"CREATE TABLE vt.uniq (id INT NULL, code VARCHAR(20) CHARACTER SET latin1 NOT NULL, val INT, " +
		"UNIQUE KEY maybe (id), UNIQUE KEY code (code))",
	// Odd identifiers, and a binary key.
	"CREATE TABLE vt." + quoteIdent(weirdTable) + " (" + quoteIdent(weirdKey) + " VARBINARY(16) PRIMARY KEY, " +
		quoteIdent(weirdValue) + " INT)",
	// An ENUM key (ordered by index, not by label) and a TIMESTAMP key.
	"CREATE TABLE vt.events (kind ENUM('z', 'a', 'm') NOT NULL, at TIMESTAMP(6) NOT NULL, note VARCHAR(20), PRIMARY KEY (kind, at))",
	"CREATE TABLE vt.empty (id INT PRIMARY KEY)",
	"CREATE DATABASE " + quoteIdent(oddSchema),
	"CREATE TABLE " + quoteIdent(oddSchema) + ".t (id INT PRIMARY KEY, v VARCHAR(10))",
	"INSERT INTO " + quoteIdent(oddSchema) + ".t VALUES (1, 'one'), (2, 'two')",
}

// sourceOnlyDDL is paraply's bookkeeping, which verify must skip.
var sourceOnlyDDL = []string{
	"CREATE DATABASE paraply",
	"CREATE TABLE paraply.checkpoint (id INT PRIMARY KEY, gtid VARCHAR(100))",
	"INSERT INTO paraply.checkpoint VALUES (1, '0-1-42')",
}

var fixtureDrop = []string{
	"DROP DATABASE IF EXISTS vt",
	"DROP DATABASE IF EXISTS " + quoteIdent(oddSchema),
}

var unicodeWords = []string{"Grüße", "日本語", "😀 emoji", "ǅ title", "İstanbul", "straße"}

// bigRow returns the values of row id of vt.big.
func bigRow(id int) []any {
	ci := fmt.Sprintf("name-%d", id)
	if id%3 == 0 {
		ci = fmt.Sprintf("Name-%d", id)
	}
	// n is NULL, '' or text; n2 next to it is NULL where n is ''.
	var n, n2 any = fmt.Sprintf("v%d", id), fmt.Sprintf("w%d", id)
	switch id % 3 {
	case 0:
		n = nil
	case 1:
		n, n2 = "", nil
	}
	if id == 2 { // a separator inside values: see the "separator" case
		n, n2 = "a#b", "c"
	}
	var ts any = time.Date(2024, 3, 31, 0, 0, 0, 0, time.UTC).Add(time.Duration(id) * 17 * time.Minute).Format("2006-01-02 15:04:05.000000")
	if id%5 == 0 {
		ts = nil
	}
	return []any{
		id, ci, fmt.Sprintf("%s %d", unicodeWords[id%len(unicodeWords)], id), fmt.Sprintf("café %d", id), n, n2,
		[]byte{0, 0xff, byte(id), '#', 0x80, byte(id >> 8)},
		float32(id) / 7, float64(id) / 3, fmt.Sprintf("%d.%06d", id, id*37%1000000),
		time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id)*time.Second + time.Duration(id)*time.Microsecond).Format("2006-01-02 15:04:05.000000"),
		ts, id % 1024, []string{"a", "b", "c"}[id%3], []string{"", "x", "y,z", "x,y,z"}[id%4],
		fmt.Sprintf(`{"id": %d, "tags": ["a", "b"], "s": "ü"}`, id),
	}
}

var uniqLetters = []string{"a", "Ä", "b", "z", "Å", "o", "ö", "O"}

// compRegions mix case and accents under utf8mb4_general_ci.
// 東京 cannot be read over a latin1 connection.
var compRegions = []string{"eu", "Asia", "us-east", "ÅLAND", "東京"}

const compSeqBase = uint64(1) << 53

// loadFixture creates the fixture on db; sourceOnly adds what only the
// source has.
func loadFixture(t *testing.T, db *sql.DB, sourceOnly bool) {
	t.Helper()
	ctx := context.Background() // also runs in Cleanup, after t.Context ends
	exec(t, db, fixtureDrop...)
	exec(t, db, fixtureDDL...)
	if sourceOnly {
		exec(t, db, "DROP DATABASE IF EXISTS paraply")
		exec(t, db, sourceOnlyDDL...)
	}
	var rows [][]any
	for id := 1; id <= bigRows; id++ {
		rows = append(rows, bigRow(id))
	}
	insert(ctx, t, db, "vt.big (id, ci, uni, l1, n, n2, bl, f, d, amount, dt, ts, b, e, s, j)", rows)

	rows = nil
	for _, r := range compRegions {
		for k := range 50 {
			for d := range 3 {
				rows = append(rows, []any{r, compSeqBase + uint64(k), fmt.Sprintf("2024-03-%02d", 1+d), fmt.Sprintf("p%d", k*d)})
			}
		}
	}
	insert(ctx, t, db, "vt.comp", rows)

	rows = nil
	for i := range 40 {
		rows = append(rows, []any{i % 20, "x"})
	}
	insert(ctx, t, db, "vt.nokey", rows)

	rows = nil
	for i := range 300 {
		var id any = i
		if i%10 == 0 {
			id = nil
		}
		// latin1_swedish_ci sorts å, ä and ö after z, unlike utf8mb4_general_ci.
		rows = append(rows, []any{id, fmt.Sprintf("%s-%03d", uniqLetters[i%len(uniqLetters)], i), i})
	}
	insert(ctx, t, db, "vt.uniq", rows)

	rows = nil
	for i := range 200 {
		rows = append(rows, []any{[]byte{byte(i / 7), 0, byte(i * 37), 0xff}, i})
	}
	insert(ctx, t, db, "vt."+quoteIdent(weirdTable), rows)

	rows = nil
	for i := range 300 {
		at := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*37*time.Second + time.Duration(i)*time.Millisecond)
		rows = append(rows, []any{[]string{"z", "a", "m"}[i%3], at.Format("2006-01-02 15:04:05.000000"), fmt.Sprintf("n%d", i)})
	}
	insert(ctx, t, db, "vt.events", rows)
}

// insert adds rows to into ("table" or "table (columns)") in batches.
func insert(ctx context.Context, t *testing.T, db *sql.DB, into string, rows [][]any) {
	t.Helper()
	const batch = 500
	for len(rows) > 0 {
		n := min(batch, len(rows))
		tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(rows[0])), ", ") + ")"
		q := "INSERT INTO " + into + " VALUES " + strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ")
		var args []any
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("insert into %s: %v", into, err)
		}
		rows = rows[n:]
	}
}

func exec(t *testing.T, db *sql.DB, queries ...string) {
	t.Helper()
	for _, q := range queries {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
