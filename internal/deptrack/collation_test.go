package deptrack

import (
	"math"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// collSchema has one unique string key per collation the tests weigh.
const collSchema = `
CREATE DATABASE d;
USE d;
CREATE TABLE sw (id INT PRIMARY KEY, s VARCHAR(20) NOT NULL, UNIQUE KEY s (s)) DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci;
CREATE TABLE gen (id INT PRIMARY KEY, s VARCHAR(20) NOT NULL, UNIQUE KEY s (s)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
CREATE TABLE uni (id INT PRIMARY KEY, s VARCHAR(20) NOT NULL, UNIQUE KEY s (s)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE u09 (id INT PRIMARY KEY, s VARCHAR(20) NOT NULL, UNIQUE KEY s (s)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;
CREATE TABLE ger (id INT PRIMARY KEY, s VARCHAR(20) NOT NULL, UNIQUE KEY s (s)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_german2_ci;
CREATE TABLE f (id INT PRIMARY KEY, x DOUBLE NOT NULL, UNIQUE KEY x (x));
`

// TestCollationKeys checks that values the server calls equal share a key
// (the server's own weights: latin1_swedish_ci's sort order, general_ci's
// single weight for supplementary characters, UCA 9.0.0 for 0900_ai_ci)
// and that *_unicode_ci keys are not one constant.
func TestCollationKeys(t *testing.T) {
	cat, warnings, err := schema.Parse(strings.NewReader(collSchema), "coll.sql")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("schema: %v %v", err, warnings)
	}
	x := NewExtractor(cat)
	for _, c := range []struct {
		table string
		a, b  any
		same  bool
	}{
		// latin1_swedish_ci sorts Ü and Ý as Y, Æ as Ä, Ð as D.
		{"sw", []byte("\xdc"), []byte("Y"), true},
		{"sw", []byte("\xdd"), []byte("y"), true},
		{"sw", []byte("\xc6"), []byte("\xc4"), true},
		{"sw", []byte("\xd0"), []byte("d"), true},
		{"sw", []byte("\xc5"), []byte("A"), false},
		// general_ci gives every supplementary character one weight.
		{"gen", "\U0001F600", "\U0001F601", true},
		{"gen", "josé@x", "JOSE@X", true},
		// 0900_ai_ci: U+00AD is ignorable; kana are equal at primary strength.
		{"u09", "a\u00adb", "ab", true},
		{"u09", "あ", "ア", true},
		{"u09", "Straße", "STRASSE", true},
		{"u09", "\U0001F600", "\U0001F601", false},
		{"u09", "a", "a ", false}, // NO PAD
		// unicode_ci weighs values: distinct ones differ.
		{"uni", "alice@example.com", "bob@example.com", false},
		{"uni", "Straße", "strasse", true},
		{"uni", "ab  ", "AB", true}, // PAD SPACE
		// A tailoring paraply does not weigh keys every value alike.
		{"ger", "alice", "bob", true},
		// FLOAT and DOUBLE compare -0 and 0 equal.
		{"f", math.Copysign(0, -1), 0.0, true},
	} {
		ua, ub := uniqueKey(t, x, cat, c.table, c.a), uniqueKey(t, x, cat, c.table, c.b)
		if (ua == ub) != c.same {
			t.Errorf("%s: %q vs %q: same key = %v, want %v", c.table, c.a, c.b, ua == ub, c.same)
		}
	}
}

// uniqueKey is the key of the unique index alone: the writeset of a row
// whose primary key differs per call, minus the primary key's.
func uniqueKey(t *testing.T, x *Extractor, cat *schema.Catalog, table string, v any) uint64 {
	t.Helper()
	one := extract(x, rows(cat, table, binlog.Delete, []any{int32(1), v}))
	two := extract(x, rows(cat, table, binlog.Delete, []any{int32(2), v}))
	if one.Barrier != CauseNone {
		t.Fatalf("%s: barrier %s", table, one.Barrier)
	}
	for _, k := range one.Keys {
		for _, k2 := range two.Keys {
			if k == k2 {
				return k
			}
		}
	}
	t.Fatalf("%s: no key shared by two rows with value %q", table, v)
	return 0
}

// TestStreamDatabaseCollation: a database a MySQL 8 source creates without
// a character set gets the session's collation_server (here
// utf8mb4_0900_ai_ci, as the query event says), so its UTF-8 keys are
// weighed as UTF-8 under that collation, not decoded as cp1252.
func TestStreamDatabaseCollation(t *testing.T) {
	cat := schema.NewCatalog()
	cat.SetFlavor(schema.MySQL)
	s := schema.Session{CollationServer: 255, DefaultUTF8MB4: 255}
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE u (id INT PRIMARY KEY, email VARCHAR(50) NOT NULL UNIQUE)"} {
		if _, err := cat.ApplyDDLIn(s, "d", q); err != nil {
			t.Fatal(err)
		}
	}
	x := NewExtractor(cat)
	if a, b := uniqueKey(t, x, cat, "u", "josé@x"), uniqueKey(t, x, cat, "u", "JOSÉ@x"); a != b {
		t.Error("'josé@x' and 'JOSÉ@x' hash apart under utf8mb4_0900_ai_ci")
	}
}
