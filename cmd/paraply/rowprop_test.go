package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// propColumn is a column of the property test's tables and how to make
// random values for it, as SQL literals.
type propColumn struct {
	name, def string
	// gen returns a literal for a random value, "NULL" included where the
	// column takes it; nil for a generated column, which is never set.
	gen func(r *rand.Rand) string
}

// propColumns are columns of every type MariaDB has, with values at their
// edges: zero and invalid dates (sql_mode ALLOW_INVALID_DATES), negative
// times, extreme numbers, text in several character sets, NULLs, generated
// and ON UPDATE columns.
func propColumns() []propColumn {
	null := func(r *rand.Rand, v string) string {
		if r.Intn(8) == 0 {
			return "NULL"
		}
		return v
	}
	pick := func(vs ...string) func(*rand.Rand) string {
		return func(r *rand.Rand) string { return null(r, vs[r.Intn(len(vs))]) }
	}
	ints := func(lo, hi int64) func(*rand.Rand) string {
		return func(r *rand.Rand) string {
			switch r.Intn(4) {
			case 0:
				return null(r, strconv.FormatInt(lo, 10))
			case 1:
				return null(r, strconv.FormatInt(hi, 10))
			}
			v := r.Int63n(hi/2 + 1)
			if lo < 0 && r.Intn(2) == 0 {
				v = -r.Int63n(-(lo / 2) + 1)
			}
			return null(r, strconv.FormatInt(v, 10))
		}
	}
	text := func(cs string, alphabet []string, max int) func(*rand.Rand) string {
		return func(r *rand.Rand) string {
			var b strings.Builder
			for n := r.Intn(max + 1); n > 0; n-- {
				b.WriteString(alphabet[r.Intn(len(alphabet))])
			}
			return null(r, "_"+cs+" X'"+hex.EncodeToString([]byte(convert(b.String(), cs)))+"'")
		}
	}
	bytesOf := func(max int) func(*rand.Rand) string {
		return func(r *rand.Rand) string {
			b := make([]byte, r.Intn(max+1))
			r.Read(b)
			return null(r, "X'"+hex.EncodeToString(b)+"'")
		}
	}
	utf8 := []string{"a", "Z", " ", "'", "\\", "\"", "é", "ß", "ü", "€", "日", "本", "😀", "\t", "\n", "0"}
	latin := []string{"a", "Z", " ", "'", "\\", "é", "ß", "ü", "ñ", "0"}
	temporal := func(kind string, prec int) func(*rand.Rand) string {
		return func(r *rand.Rand) string {
			frac := ""
			if prec > 0 {
				frac = fmt.Sprintf(".%0*d", prec, r.Intn(pow10(prec)))
			}
			switch kind {
			case "date":
				return pick("'0000-00-00'", "'1000-01-01'", "'9999-12-31'", "'2004-02-30'", "'2024-02-29'",
					fmt.Sprintf("'%04d-%02d-%02d'", 1000+r.Intn(9000), 1+r.Intn(12), 1+r.Intn(28)))(r)
			case "time":
				return null(r, fmt.Sprintf("'%s%02d:%02d:%02d%s'", []string{"", "-"}[r.Intn(2)], r.Intn(839), r.Intn(60), r.Intn(60), frac))
			case "datetime":
				if r.Intn(10) == 0 {
					return "'0000-00-00 00:00:00'"
				}
				return null(r, fmt.Sprintf("'%04d-%02d-%02d %02d:%02d:%02d%s'", 1000+r.Intn(9000), 1+r.Intn(12), 1+r.Intn(31), r.Intn(24), r.Intn(60), r.Intn(60), frac))
			}
			// TIMESTAMP: 1970-01-01 00:00:01 to 2038-01-19 03:14:07 UTC.
			if r.Intn(10) == 0 {
				return "'0000-00-00 00:00:00'"
			}
			return fmt.Sprintf("FROM_UNIXTIME(%d%s)", 1+r.Int63n(2147483646), frac)
		}
	}
	cols := []propColumn{
		{"ti", "TINYINT", ints(-128, 127)}, {"tiu", "TINYINT UNSIGNED", ints(0, 255)},
		{"si", "SMALLINT", ints(-32768, 32767)}, {"siu", "SMALLINT UNSIGNED", ints(0, 65535)},
		{"mi", "MEDIUMINT", ints(-8388608, 8388607)}, {"miu", "MEDIUMINT UNSIGNED", ints(0, 16777215)},
		{"i", "INT", ints(-2147483648, 2147483647)}, {"iu", "INT UNSIGNED", ints(0, 4294967295)},
		{"bi", "BIGINT", ints(-9223372036854775808, 9223372036854775807)},
		{"biu", "BIGINT UNSIGNED", pick("0", "18446744073709551615", "9223372036854775808", "12345678901234567890")},
		{"dc", "DECIMAL(65,30)", pick("0", "-0.000000000000000000000000000001", "99999999999999999999999999999999999.999999999999999999999999999999", "-1.5", "123.456")},
		{"dc2", "DECIMAL(5,2) UNSIGNED", pick("0.00", "999.99", "1.01")},
		{"f", "FLOAT", pick("0", "-1.5", "3.4028234e38", "1.17549435e-38", "0.1", "-123456.789")},
		{"d", "DOUBLE", pick("0", "-1.7976931348623157e308", "2.2250738585072014e-308", "0.1", "1e100")},
		{"b1", "BIT(1)", pick("b'0'", "b'1'")}, {"b64", "BIT(64)", pick("b'0'", "0xFFFFFFFFFFFFFFFF", "0x8000000000000001", "b'101'")},
		{"y", "YEAR", pick("0", "1901", "2155", "2024")},
		{"dt0", "DATE", temporal("date", 0)},
		{"tm0", "TIME", temporal("time", 0)}, {"tm3", "TIME(3)", temporal("time", 3)}, {"tm6", "TIME(6)", temporal("time", 6)},
		{"dtm0", "DATETIME", temporal("datetime", 0)}, {"dtm1", "DATETIME(1)", temporal("datetime", 1)}, {"dtm6", "DATETIME(6)", temporal("datetime", 6)},
		{"ts0", "TIMESTAMP NULL", temporal("timestamp", 0)}, {"ts4", "TIMESTAMP(4) NULL", temporal("timestamp", 4)},
		{"c", "CHAR(10) CHARACTER SET utf8mb4", text("utf8mb4", utf8, 10)},
		{"vc", "VARCHAR(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", text("utf8mb4", utf8, 300)},
		{"vl", "VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_german2_ci", text("latin1", latin, 20)},
		{"cu", "CHAR(5) CHARACTER SET ucs2", text("ucs2", latin, 5)},
		{"bn", "BINARY(8)", bytesOf(8)}, {"vb", "VARBINARY(300)", bytesOf(300)},
		{"tt", "TINYTEXT CHARACTER SET utf8mb4", text("utf8mb4", utf8, 60)},
		{"tx", "TEXT CHARACTER SET utf8mb4", text("utf8mb4", utf8, 2000)},
		{"mt", "MEDIUMTEXT CHARACTER SET latin1", text("latin1", latin, 3000)},
		{"tb", "TINYBLOB", bytesOf(255)}, {"bl", "BLOB", bytesOf(3000)},
		{"e", "ENUM('a','b','c d','é')", pick("'a'", "'b'", "'c d'", "'é'", "''")},
		{"st", "SET('x','y','z')", pick("''", "'x'", "'x,z'", "'x,y,z'")},
		{"j", "JSON", pick(`'{"a": [1, 2.5, "x"], "b": null}'`, `'[]'`, `'"s"'`, `'{"k": {"n": -1e10}}'`)},
		{"g", "POINT", pick("ST_GeomFromText('POINT(1 2)')", "ST_GeomFromText('POINT(-1.5 1e10)')")},
		{"gg", "GEOMETRY", pick("ST_GeomFromText('LINESTRING(0 0,1 1,2 5)')", "ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))')")},
		{"i4", "INET4", pick("'0.0.0.0'", "'255.255.255.255'", "'10.1.2.3'")},
		{"i6", "INET6", pick("'::'", "'::1'", "'2001:db8::ff00:42:8329'", "'::ffff:1.2.3.4'")},
		{"uu", "UUID", pick("'00000000-0000-0000-0000-000000000000'", "'123e4567-e89b-12d3-a456-426614174000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'")},
		{"gv", "INT AS (i + 1) VIRTUAL", nil}, {"gs", "VARCHAR(400) AS (CONCAT(vc, '!')) STORED", nil},
		{"inv", "INT INVISIBLE DEFAULT 7", ints(-5, 5)},
		{"upd", "TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP", nil},
		{"upd6", "DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)", nil},
	}
	return cols
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

// convert encodes s, UTF-8, in character set cs (latin1 and ucs2 hold
// the property test's alphabets).
func convert(s, cs string) string {
	switch cs {
	case "latin1":
		b := make([]byte, 0, len(s))
		for _, r := range s {
			b = append(b, byte(r))
		}
		return string(b)
	case "ucs2":
		b := make([]byte, 0, 2*len(s))
		for _, r := range s {
			b = append(b, byte(r>>8), byte(r))
		}
		return string(b)
	}
	return s
}

// TestRowPropertyAgainstNativeReplica writes random rows over every
// column type (see propColumns; an InnoDB, a MyISAM and a table with
// MariaDB 5.3's temporal formats), updates of random columns, deletes, a
// 30 MB BLOB and rows updated under a still clock, on a source replicated
// by MariaDB's own replica and by paraply (each apply path), and requires
// every table of paraply's target to equal the source's wherever the
// native replica's does (see diffTable). The seed
// is logged; PARAPLY_PROP_SEED repeats a run.
func TestRowPropertyAgainstNativeReplica(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("PARAPLY_PROP_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (PARAPLY_PROP_SEED repeats it)", seed)
	// The targets' max_allowed_packet (64 MiB, the sandbox's) takes the
	// 30 MB value, as a row, not as a statement's text.
	r := newFidelityRigWith(t, "prop")
	cols := propColumns()
	ctx := context.Background()
	conn, err := r.sdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.300s: %v", q, err)
		}
	}
	var defs []string
	for _, c := range cols {
		defs = append(defs, "`"+c.name+"` "+c.def)
	}
	exec("SET NAMES utf8mb4")
	exec("SET sql_mode = 'ALLOW_INVALID_DATES', time_zone = '+05:30'")
	exec("CREATE DATABASE prop")
	tables := []string{"t_InnoDB", "t_MyISAM", "t_old"}
	for _, engine := range []string{"InnoDB", "MyISAM"} {
		exec(fmt.Sprintf("CREATE TABLE prop.t_%s (id INT PRIMARY KEY, %s) ENGINE=%s", engine, strings.Join(defs, ", "), engine))
	}
	// Temporal columns in MariaDB 5.3's formats, as servers upgraded from
	// 5.3-10.0 keep them (the targets create theirs in today's).
	exec("SET GLOBAL mysql56_temporal_format = OFF")
	exec(fmt.Sprintf("CREATE TABLE prop.t_old (id INT PRIMARY KEY, %s)", strings.Join(defs, ", ")))
	exec("SET GLOBAL mysql56_temporal_format = ON")
	exec("CREATE TABLE prop.big (id INT PRIMARY KEY, b LONGBLOB, n INT)")
	rnd := rand.New(rand.NewSource(seed))
	writes := propWrites(rnd, cols, 120)
	for _, q := range writes {
		for _, table := range tables {
			exec(strings.ReplaceAll(q, "{t}", "prop."+table))
		}
	}
	exec("INSERT INTO prop.big VALUES (1, REPEAT(_binary X'00ff7f', 10 << 20), 0), (2, NULL, 0)")
	exec("UPDATE prop.big SET n = 1, b = CONCAT(b, 'x') WHERE id = 1")
	exec("UPDATE prop.big SET b = REPEAT('q', 5 << 20) WHERE id = 2")
	end := r.sourcePos(t)
	r.waitNative(t, end)
	for _, apply := range []string{"auto", "sql", "binlog"} {
		t.Run(apply, func(t *testing.T) {
			execAll(t, r.tdb, "DROP DATABASE IF EXISTS prop", "DROP DATABASE IF EXISTS paraply")
			if code, out := runParaply(t, nil, "replicate", "--apply", apply, "--source", r.src.URL(), "--target", r.tgt.URL(),
				"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", r.start, "--until-caught-up",
				"--log-level", "warn", "--http", ""); code != 0 {
				t.Fatalf("paraply: exit %d\n%s", code, out)
			}
			for _, table := range append(tables, "big") {
				if d := diffTable(t, r.sdb, r.ndb, r.tdb, "prop", table); d != "" {
					t.Errorf("prop.%s: %s", table, d)
				}
			}
		})
	}
}

// propWrites returns n random statements on table {t}: inserts of new
// rows, updates of random columns of existing ones, deletes, some in
// transactions, some under a still clock (SET timestamp).
func propWrites(r *rand.Rand, cols []propColumn, n int) []string {
	var out []string
	ids := map[int]bool{}
	next := 1
	someID := func() int {
		for id := range ids {
			return id
		}
		return 0
	}
	for range n {
		if r.Intn(6) == 0 {
			out = append(out, fmt.Sprintf("SET timestamp = %d.%06d", 1000000000+r.Intn(1000000000), r.Intn(1000000)))
		}
		switch k := r.Intn(10); {
		case k < 5 || len(ids) == 0:
			var names, vals []string
			for _, c := range cols {
				if c.gen != nil && r.Intn(5) != 0 {
					names, vals = append(names, "`"+c.name+"`"), append(vals, c.gen(r))
				}
			}
			out = append(out, fmt.Sprintf("INSERT INTO {t} (id, %s) VALUES (%d, %s)", strings.Join(names, ", "), next, strings.Join(vals, ", ")))
			ids[next] = true
			next++
		case k < 9:
			var set []string
			for _, c := range cols {
				if c.gen != nil && r.Intn(6) == 0 {
					set = append(set, "`"+c.name+"` = "+c.gen(r))
				}
			}
			if len(set) == 0 {
				set = append(set, "`i` = `i`") // matches, changes nothing: not logged
			}
			out = append(out, fmt.Sprintf("UPDATE {t} SET %s WHERE id = %d", strings.Join(set, ", "), someID()))
		default:
			id := someID()
			delete(ids, id)
			out = append(out, fmt.Sprintf("DELETE FROM {t} WHERE id = %d", id))
		}
		if r.Intn(6) == 0 {
			out = append(out, "SET timestamp = DEFAULT")
		}
	}
	return out
}

// diffTable compares a table on the source, MariaDB's replica and
// paraply's target, row by row (by primary key id, each column's value
// hashed), and describes the first value where paraply's target differs
// from the source while the native replica's does not ("" when there is
// none). Where the native replica differs from the source too (it turns
// an invalid date in a 5.3-format column into zeros when it converts the
// row to its own column), paraply may hold the source's value or the
// native replica's.
func diffTable(t *testing.T, src, native, ours *sql.DB, db, table string) string {
	t.Helper()
	rs, rn, ro := tableHashes(t, src, db, table), tableHashes(t, native, db, table), tableHashes(t, ours, db, table)
	if len(ro) != len(rs) {
		return fmt.Sprintf("paraply's target has %d rows, the source %d", len(ro), len(rs))
	}
	for id, hs := range rs {
		ho, ok := ro[id]
		if !ok {
			return "row id=" + id + " missing on paraply's target"
		}
		for col, v := range hs {
			if ho[col] == v {
				continue
			}
			if n := rn[id][col]; n != v && ho[col] == n {
				t.Logf("%s.%s row id=%s column %s: the native replica and paraply hold %s, the source %s", db, table, id, col, n, v)
				continue
			}
			return fmt.Sprintf("row id=%s column %s: the source holds %s, MariaDB's replica %s, paraply's target %s", id, col, v, rn[id][col], ho[col])
		}
	}
	return ""
}

// tableHashes returns, by id, each column's value of every row (history
// and invisible columns included), long values as their MD5.
func tableHashes(t *testing.T, db *sql.DB, schema, table string) map[string]map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", schema, table)
	if err != nil {
		t.Fatal(err)
	}
	var names, exprs []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
		// The value's bytes as text (numbers in full, dates as shown,
		// geometries as WKB); MD5 keeps long ones short.
		exprs = append(exprs, fmt.Sprintf("IF(LENGTH(`%[1]s`) > 200, MD5(`%[1]s`), HEX(CAST(`%[1]s` AS BINARY)))", n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	out := map[string]map[string]string{}
	q := fmt.Sprintf("SELECT id, %s FROM `%s`.`%s`", strings.Join(exprs, ", "), schema, table)
	rs, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	vals := make([]sql.NullString, len(names)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := map[string]string{}
		for i, n := range names {
			v := vals[i+1]
			row[n] = "NULL"
			if v.Valid {
				row[n] = v.String
			}
		}
		out[vals[0].String] = row
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
