package collation

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestServerEquality is the property that makes keys safe: no two strings
// that the server calls equal (SELECT a = b COLLATE c on a sandboxed MariaDB)
// get different keys. For every collation the server has and paraply
// weighs exactly, it compares every pair of a pool of characters and short
// sequences chosen to provoke equalities (case, accents, ligatures,
// ignorables, kana, Hangul, contractions, supplementary characters,
// trailing spaces; all 256 bytes for single-byte character sets), plus
// random strings and variants of them (case, normal forms, marks stripped,
// ignorables inserted, spaces appended).
//
// utf8mb4_0900_ai_ci (MySQL 8 only) is not here; TestKeys and deptrack's
// TestCollationKeys check it against DUCET 9.0.0, which its table is.
func TestServerEquality(t *testing.T) {
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "collation"})
	ctx := context.Background()
	db, err := srv.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE DATABASE coll", "USE coll",
		"CREATE TABLE pool (id INT PRIMARY KEY, s VARBINARY(64) NOT NULL)",
		"CREATE TABLE pairs (id INT PRIMARY KEY, a VARBINARY(128) NOT NULL, b VARBINARY(128) NOT NULL)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	rng := rand.New(rand.NewPCG(18, 2026))
	byCharset := serverCollations(t, db)
	checked, equal := 0, 0
	for _, cs := range sortedKeys(byCharset) {
		pool, pairs := samples(cs, rng)
		fill(t, db, "pool", pool, nil)
		fill(t, db, "pairs", pairs[0], pairs[1])
		for _, co := range byCharset[cs] {
			c := Lookup(cs, co)
			if !c.Exact() {
				continue
			}
			checked++
			key := func(b []byte) []byte { return c.Append(nil, b, 0) }
			conv := fmt.Sprintf("CONVERT(%%s USING %s) COLLATE %s", cs, co)
			eq := fmt.Sprintf(conv, "x.s") + " = " + fmt.Sprintf(conv, "y.s")
			equal += check(t, db, co, key, "SELECT x.s, y.s FROM pool x JOIN pool y ON x.id < y.id WHERE "+eq)
			eq = fmt.Sprintf(conv, "a") + " = " + fmt.Sprintf(conv, "b")
			equal += check(t, db, co, key, "SELECT a, b FROM pairs WHERE "+eq)
		}
	}
	if checked < 50 {
		t.Errorf("only %d collations checked", checked)
	}
	t.Logf("%d collations, %d pairs the server calls equal, checked in %v", checked, equal, time.Since(began).Round(time.Millisecond))
}

// serverCollations lists the server's collations by character set, for the
// character sets whose strings the test can write.
func serverCollations(t *testing.T, db *sql.DB) map[string][]string {
	rows, err := db.Query(`SELECT c.CHARACTER_SET_NAME, c.COLLATION_NAME FROM information_schema.COLLATIONS c
		JOIN information_schema.CHARACTER_SETS s USING (CHARACTER_SET_NAME)
		WHERE s.MAXLEN = 1 OR c.CHARACTER_SET_NAME IN ('utf8mb3', 'utf8mb4', 'ucs2', 'utf16', 'utf16le', 'utf32')
		ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var cs, co string
		if err := rows.Scan(&cs, &co); err != nil {
			t.Fatal(err)
		}
		if cs != "binary" {
			out[cs] = append(out[cs], co)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// check runs a query returning pairs the server calls equal and fails the
// test for each pair whose keys differ. It returns the number of pairs.
func check(t *testing.T, db *sql.DB, co string, key func([]byte) []byte, q string) int {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", co, err)
	}
	defer rows.Close()
	bad, n := 0, 0
	for rows.Next() {
		n++
		var a, b []byte
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		if ka, kb := key(a), key(b); !bytes.Equal(ka, kb) {
			if bad++; bad <= 5 {
				t.Errorf("%s: the server calls %q and %q equal; keys %x and %x", co, a, b, ka, kb)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// fill replaces the rows of table: (id, a) or (id, a, b).
func fill(t *testing.T, db *sql.DB, table string, a, b [][]byte) {
	t.Helper()
	if _, err := db.Exec("TRUNCATE TABLE " + table); err != nil {
		t.Fatal(err)
	}
	const batch = 400
	for lo := 0; lo < len(a); lo += batch {
		hi := min(lo+batch, len(a))
		var q strings.Builder
		var args []any
		q.WriteString("INSERT INTO " + table + " VALUES ")
		for i := lo; i < hi; i++ {
			if i > lo {
				q.WriteString(",")
			}
			if b == nil {
				q.WriteString("(?, ?)")
				args = append(args, i, a[i])
			} else {
				q.WriteString("(?, ?, ?)")
				args = append(args, i, a[i], b[i])
			}
		}
		if _, err := db.Exec(q.String(), args...); err != nil {
			t.Fatal(err)
		}
	}
}

// unicodePool are characters and sequences likely to meet an equality.
var unicodePool = []string{
	"a", "A", "á", "Á", "à", "ä", "Ä", "å", "Å", "æ", "Æ", "ae", "AE", "b", "d", "D", "ð", "Ð", "đ", "e", "é",
	"E", "i", "I", "ı", "İ", "l", "L", "ł", "l·", "L·", "ŀ", "n", "ñ", "o", "ö", "Ö", "ø", "Ø", "oe", "œ", "Œ",
	"s", "S", "ss", "SS", "ß", "ẞ", "t", "u", "ü", "Ü", "y", "Y", "ý", "Ý", "ÿ", "z", "ž", "th", "þ", "Þ",
	"ﬁ", "fi", "ǆ", "dž", "Ǆ", "²", "2", "½", "1/2", "Ⅻ", "XII", "ⓐ", "Ａ", "ａ", "ｶ", "カ", "か", "ガ",
	"が", "か\u3099", "ア", "あ", "ぁ", "ァ", "ー", "々", "가", "\u1100\u1161", "각", "\u1100\u1161\u11a8",
	"\u4e00", "\u4e01", "\uf900", "\u8c48", "\u2f00", "\u2e8b", "\u2f19", "\u5369", "и", "й", "и\u0306",
	"И", "Й", "е", "ё", "е\u0308", "Ё", "α", "Α", "ά", "ω", "Ω", "Ω", "ς", "σ", "Σ", "\u0627", "\u0622",
	"\u0627\u0653", "\u0623", "\u0627\u0654", "\u09c7\u09be", "\u09cb", "\u0e40\u0e01", "\u0e01\u0e40",
	"\u0e01", "\u0e40", "\u0e33", "\u0e4d\u0e32", "\u0ec0\u0e81", "a\u0301", "a\u0300", "e\u0301", "\u0301",
	"\u00ad", "a\u00ad", "\u200b", "\ufeff", "\u0001", "\u034f", " ", "  ", "a ", "a  ", "A ", "\u00a0",
	"a\u00a0", "\u3000", "\t", "-", "‐", "–", "_", ".", "·", "'", "’", "\"", "0", "٠", "০", "𝟎", "𝐀",
	"\U0001F600", "\U0001F601", "\U00020000", "\U00020001", "\U0002F800", "\U00010400", "\U00010428",
	"\U0001D400", "\uffff", "\ufffd", "\U0010FFFF", "\U000E0001", "\U000E0041", "\u2126", "K", "\u212a",
	"Å", "\u212b", "ǅ", "ǰ", "ǰ", "ǰ", "ﬀ", "ff", "ﬃ", "ffi", "ŉ", "ʼn", "\u1e9e", "\u00b5", "\u03bc",
}

// samples returns the pool of short strings and the random pairs for a
// character set, encoded in it.
func samples(cs string, rng *rand.Rand) (pool [][]byte, pairs [2][][]byte) {
	if enc, ok := unicodeEncodings[cs]; ok {
		for _, s := range unicodePool {
			if b, ok := encode(s, cs, enc); ok {
				pool = append(pool, b)
			}
		}
		for len(pairs[0]) < 2000 {
			a := randomString(rng)
			b := variant(a, rng)
			ea, ok1 := encode(a, cs, enc)
			eb, ok2 := encode(b, cs, enc)
			if ok1 && ok2 && len(ea) <= 128 && len(eb) <= 128 {
				pairs[0], pairs[1] = append(pairs[0], ea), append(pairs[1], eb)
			}
		}
		return pool, pairs
	}
	for c := range 256 {
		pool = append(pool, []byte{byte(c)})
	}
	for _, s := range []string{"ae", "AE", "ss", "SS", "oe", "th", "a ", "a  ", "A ", "ue", "aa", "ch", "ll", "ij"} {
		pool = append(pool, []byte(s))
	}
	for range 2000 {
		a := make([]byte, 1+rng.IntN(5))
		for i := range a {
			a[i] = byte(rng.IntN(256))
		}
		b := bytes.Clone(a)
		switch rng.IntN(4) {
		case 0:
			b = bytes.ToUpper(b)
		case 1:
			b[rng.IntN(len(b))] = byte(0x80 + rng.IntN(128))
		case 2:
			b = append(b, ' ')
		default:
			b[rng.IntN(len(b))] ^= 0x20 // the case bit of ASCII and Latin-1 letters
		}
		pairs[0], pairs[1] = append(pairs[0], a), append(pairs[1], b)
	}
	return pool, pairs
}

func randomString(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(4) {
		b.WriteString(unicodePool[rng.IntN(len(unicodePool))])
	}
	return b.String()
}

// ignorables are characters collations commonly weigh as nothing.
var ignorables = []string{"\u00ad", "\u200b", "\ufeff", "\u0001", "\u034f", "\u0300"}

// variant changes a string in a way that often keeps it equal under some
// collation.
func variant(s string, rng *rand.Rand) string {
	switch rng.IntN(9) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToLower(s)
	case 2:
		return norm.NFD.String(s)
	case 3:
		return norm.NFKC.String(s)
	case 4:
		var b strings.Builder
		for _, r := range norm.NFKD.String(s) {
			if !unicode.Is(unicode.Mn, r) {
				b.WriteRune(r)
			}
		}
		return b.String()
	case 5:
		i := rng.IntN(len(s) + 1)
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		return s[:i] + ignorables[rng.IntN(len(ignorables))] + s[i:]
	case 6:
		return s + strings.Repeat(" ", 1+rng.IntN(2))
	case 7:
		return strings.ToUpper(s) + " "
	}
	return randomString(rng)
}

// encode writes s in a Unicode character set; false if it cannot hold s.
func encode(s, cs string, enc encoding) ([]byte, bool) {
	out := []byte{} // not nil: NULL is no string
	for _, r := range s {
		switch {
		case enc == utf8Enc && cs == "utf8mb3" && r > 0xFFFF:
			return nil, false
		case enc == utf8Enc:
			out = utf8.AppendRune(out, r)
		case enc == ucs2Enc && r > 0xFFFF:
			return nil, false
		case enc == ucs2Enc || enc == utf16Enc || enc == utf16leEnc:
			units := []uint16{uint16(r)}
			if r > 0xFFFF {
				r1, r2 := utf16.EncodeRune(r)
				units = []uint16{uint16(r1), uint16(r2)}
			}
			for _, u := range units {
				if enc == utf16leEnc {
					out = append(out, byte(u), byte(u>>8))
				} else {
					out = append(out, byte(u>>8), byte(u))
				}
			}
		case enc == utf32Enc:
			out = append(out, byte(r>>24), byte(r>>16), byte(r>>8), byte(r))
		}
	}
	return out, true
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
