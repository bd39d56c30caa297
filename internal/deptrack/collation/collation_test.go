package collation

import (
	"bytes"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		charset, collation string
		exact              bool
	}{
		{"latin1", "latin1_swedish_ci", true},
		{"latin1", "latin1_german2_ci", true},
		{"latin2", "latin2_czech_cs", false}, // context-dependent: not in the tables
		{"utf8mb3", "utf8_general_ci", true},
		{"utf8mb4", "utf8mb4_unicode_ci", true},
		{"utf8mb4", "utf8mb4_unicode_520_nopad_ci", true},
		{"utf8mb4", "utf8mb4_uca1400_as_cs", true},
		{"utf8mb4", "utf8mb4_0900_as_cs", true},
		{"utf8mb4", "utf8mb4_0900_bin", true},
		{"utf16", "utf16_general_ci", true},
		{"utf8mb4", "utf8mb4_german2_ci", false},
		{"utf8mb4", "utf8mb4_de_pb_0900_ai_ci", false},
		{"utf8mb4", "utf8mb4_general_mysql500_ci", false},
		{"sjis", "sjis_japanese_ci", false},
		{"utf8mb4", "", false},
		{"binary", "binary", true},
	} {
		if got := Lookup(c.charset, c.collation).Exact(); got != c.exact {
			t.Errorf("%s/%s: exact = %v, want %v", c.charset, c.collation, got, c.exact)
		}
	}
}

func TestKeys(t *testing.T) {
	key := func(cs, co, v string, prefix int) []byte {
		return Lookup(cs, co).Append(nil, []byte(v), prefix)
	}
	for _, c := range []struct {
		cs, co string
		a, b   string
		prefix int
		same   bool
	}{
		{"utf8mb4", "utf8mb4_general_ci", "Ab ", "aB", 0, true},
		{"utf8mb4", "utf8mb4_general_nopad_ci", "Ab ", "aB", 0, false},
		{"utf8mb4", "utf8mb4_bin", "a ", "a", 0, true},
		{"utf8mb4", "utf8mb4_bin", "a", "A", 0, false},
		{"utf8mb4", "utf8mb4_0900_bin", "a ", "a", 0, false},
		{"utf8mb4", "utf8mb4_unicode_ci", "abcdef", "ABCxyz", 3, true},
		{"utf8mb4", "utf8mb4_unicode_ci", "\U0001F600", "\U0001F601", 0, true},      // UCA 4.0.0: one weight
		{"utf8mb4", "utf8mb4_unicode_520_ci", "\U0001F600", "\U0001F601", 0, false}, // UCA 5.2.0: implicit weights
		{"utf8mb4", "utf8mb4_uca1400_ai_ci", "и\u0306", "й", 0, true},               // a DUCET contraction
		{"utf8mb4", "utf8mb4_0900_ai_ci", "\u0e40\u0e01", "\u0e01\u0e40", 0, true},  // Thai prevowel either way
		{"utf8mb4", "utf8mb4_0900_ai_ci", "가", "\u1100\u1161", 0, true},             // Hangul as its jamo
		{"utf8mb4", "utf8mb4_0900_ai_ci", "\u4e00", "\u4e01", 0, false},             // implicit weights
		{"utf16", "utf16_general_ci", "\x00a\x00B", "\x00A\x00b", 0, true},
		{"utf16", "utf16_general_ci", "\xd8\x3d\xde\x00", "\x00a", 0, false},
		{"latin1", "latin1_german2_ci", "\xc4", "AE", 0, true},
		{"latin1", "latin1_bin", "a", "A", 0, false},
		{"binary", "binary", "a\x00", "a", 0, true},
	} {
		ka, kb := key(c.cs, c.co, c.a, c.prefix), key(c.cs, c.co, c.b, c.prefix)
		if bytes.Equal(ka, kb) != c.same {
			t.Errorf("%s: %q (%x) vs %q (%x): same = %v, want %v", c.co, c.a, ka, c.b, kb, !c.same, c.same)
		}
	}
}
