package deptrack

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

// A key value must hash equal for every pair of values the column's
// collation calls equal, or two conflicting transactions could run at once.
// The reverse is harmless: values that hash equal but differ only cost a
// needless wait. So folding errs on the side of merging: case, accents,
// trailing spaces and a few ligatures all fold away, and collations whose
// rules are not modelled here fold every value to one key.

// foldClass is how a string column's values are folded before hashing.
type foldClass uint8

const (
	foldBinary   foldClass = iota // binary charset: bytes compare as they are
	foldBin                       // a _bin collation: exact, but trailing spaces pad
	foldCI                        // case/accent-insensitive (general, unicode, 0900_ai ...)
	foldConstant                  // rules not modelled: every value is the same key
)

// classify picks the fold class for a column's charset and collation.
func classify(charset, collation string) foldClass {
	cs := strings.ToLower(charset)
	co := strings.ToLower(collation)
	if cs == "binary" || co == "binary" {
		return foldBinary
	}
	switch cs {
	case "utf8mb4", "utf8mb3", "utf8", "latin1", "ascii", "":
	default:
		return foldConstant
	}
	switch {
	case strings.HasSuffix(co, "_bin"), strings.HasSuffix(co, "_nopad_bin"):
		return foldBin
	case co == "",
		strings.Contains(co, "_general_"), strings.Contains(co, "_unicode_"),
		strings.Contains(co, "_uca1400_ai_"), strings.Contains(co, "_0900_ai_"),
		strings.Contains(co, "_swedish_"), co == "ascii_general_ci",
		strings.HasSuffix(co, "_general_ci"), strings.HasSuffix(co, "_unicode_ci"),
		strings.HasSuffix(co, "_0900_as_cs"), strings.HasSuffix(co, "_0900_as_ci"):
		// Language tailorings (danish, spanish2, german2, ...) treat some
		// letter sequences as one letter; those are folded to a constant.
		if isTailored(co) {
			return foldConstant
		}
		return foldCI
	}
	return foldConstant
}

func isTailored(co string) bool {
	for _, lang := range []string{"danish", "german2", "spanish", "swedish_", "icelandic", "latvian", "romanian",
		"slovenian", "polish", "estonian", "turkish", "czech", "lithuanian", "slovak", "roman", "persian",
		"esperanto", "hungarian", "sinhala", "croatian", "vietnamese", "myanmar", "thai", "ja_", "zh_", "ru_",
		"cs_", "da_", "de_", "es_", "et_", "hr_", "hu_", "is_", "la_", "lt_", "lv_", "pl_", "ro_", "sk_",
		"sl_", "sv_", "tr_", "vi_", "eo_", "nb_", "nn_", "bs_", "mn_", "sr_"} {
		if strings.Contains(co, lang) {
			// latin1_swedish_ci is MariaDB's latin1 default; its rules are
			// case-insensitive Latin-1 and fold like general_ci.
			if co == "latin1_swedish_ci" {
				return false
			}
			return true
		}
	}
	return false
}

// appendFolded appends the folded form of the string value b (encoded in
// charset) to dst. prefix > 0 keeps only that many characters, as a prefix
// index does.
func appendFolded(dst, b []byte, charset string, class foldClass, prefix int) []byte {
	switch class {
	case foldConstant:
		return dst
	case foldBinary:
		if prefix > 0 && len(b) > prefix {
			b = b[:prefix]
		}
		// BINARY(n) pads with zero bytes; trimming merges at worst.
		for len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		return append(dst, b...)
	}
	s := decode(b, charset)
	if prefix > 0 && utf8.RuneCountInString(s) > prefix {
		n := 0
		for i := range s {
			if n == prefix {
				s = s[:i]
				break
			}
			n++
		}
	}
	s = strings.TrimRight(s, " ")
	if class == foldBin {
		return append(dst, s...)
	}
	return appendCI(dst, s)
}

// decode returns b as UTF-8. latin1 in MySQL is Windows-1252.
func decode(b []byte, charset string) string {
	switch strings.ToLower(charset) {
	case "latin1":
		out, err := charmap.Windows1252.NewDecoder().Bytes(b)
		if err == nil {
			return string(out)
		}
	}
	return string(b)
}

// appendCI folds case, accents and common ligatures: "Straße", "STRASSE"
// and "strasse" all become "STRASE".
func appendCI(dst []byte, s string) []byte {
	var prev rune
	for _, r := range norm.NFKD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		var rs []rune
		switch r {
		case 'ß', 'ẞ':
			rs = []rune{'S'}
		case 'æ', 'Æ':
			rs = []rune{'A', 'E'}
		case 'œ', 'Œ':
			rs = []rune{'O', 'E'}
		case 'ø', 'Ø':
			rs = []rune{'O'}
		case 'đ', 'Đ':
			rs = []rune{'D'}
		case 'ł', 'Ł':
			rs = []rune{'L'}
		case 'ı':
			rs = []rune{'I'}
		default:
			rs = []rune{unicode.ToUpper(r)}
		}
		for _, x := range rs {
			// "SS" folds to "S" so that ß (one letter in general_ci,
			// two in unicode_ci) meets both spellings.
			if x == 'S' && prev == 'S' {
				continue
			}
			dst = utf8.AppendRune(dst, x)
			prev = x
		}
	}
	return dst
}
