package schema

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/charset"
)

// charsets maps each MariaDB 10.11 character set to its default collation and
// its longest character in bytes (information_schema.CHARACTER_SETS).
var charsets = map[string]struct {
	collation string
	maxLen    int
}{
	"armscii8": {"armscii8_general_ci", 1},
	"ascii":    {"ascii_general_ci", 1},
	"big5":     {"big5_chinese_ci", 2},
	"binary":   {"binary", 1},
	"cp1250":   {"cp1250_general_ci", 1},
	"cp1251":   {"cp1251_general_ci", 1},
	"cp1256":   {"cp1256_general_ci", 1},
	"cp1257":   {"cp1257_general_ci", 1},
	"cp850":    {"cp850_general_ci", 1},
	"cp852":    {"cp852_general_ci", 1},
	"cp866":    {"cp866_general_ci", 1},
	"cp932":    {"cp932_japanese_ci", 2},
	"dec8":     {"dec8_swedish_ci", 1},
	"eucjpms":  {"eucjpms_japanese_ci", 3},
	"euckr":    {"euckr_korean_ci", 2},
	"gb2312":   {"gb2312_chinese_ci", 2},
	"gbk":      {"gbk_chinese_ci", 2},
	"geostd8":  {"geostd8_general_ci", 1},
	"greek":    {"greek_general_ci", 1},
	"hebrew":   {"hebrew_general_ci", 1},
	"hp8":      {"hp8_english_ci", 1},
	"keybcs2":  {"keybcs2_general_ci", 1},
	"koi8r":    {"koi8r_general_ci", 1},
	"koi8u":    {"koi8u_general_ci", 1},
	"latin1":   {"latin1_swedish_ci", 1},
	"latin2":   {"latin2_general_ci", 1},
	"latin5":   {"latin5_turkish_ci", 1},
	"latin7":   {"latin7_general_ci", 1},
	"macce":    {"macce_general_ci", 1},
	"macroman": {"macroman_general_ci", 1},
	"sjis":     {"sjis_japanese_ci", 2},
	"swe7":     {"swe7_swedish_ci", 1},
	"tis620":   {"tis620_thai_ci", 1},
	"ucs2":     {"ucs2_general_ci", 2},
	"ujis":     {"ujis_japanese_ci", 3},
	"utf16":    {"utf16_general_ci", 4},
	"utf16le":  {"utf16le_general_ci", 4},
	"utf32":    {"utf32_general_ci", 4},
	"utf8mb3":  {"utf8mb3_general_ci", 3},
	"utf8mb4":  {"utf8mb4_general_ci", 4},
}

// mariadbCollations lists the collations of MariaDB 10.11 that carry their
// character set in their name (information_schema.COLLATIONS, without the
// uca1400 family, which ucaCollations generates).
const mariadbCollations = `
big5_chinese_ci latin2_czech_cs dec8_swedish_ci cp850_general_ci latin1_german1_ci hp8_english_ci
koi8r_general_ci latin1_swedish_ci latin2_general_ci swe7_swedish_ci ascii_general_ci
ujis_japanese_ci sjis_japanese_ci cp1251_bulgarian_ci latin1_danish_ci hebrew_general_ci
tis620_thai_ci euckr_korean_ci latin7_estonian_cs latin2_hungarian_ci koi8u_general_ci
cp1251_ukrainian_ci gb2312_chinese_ci greek_general_ci cp1250_general_ci latin2_croatian_ci
gbk_chinese_ci cp1257_lithuanian_ci latin5_turkish_ci latin1_german2_ci armscii8_general_ci
utf8mb3_general_ci cp1250_czech_cs ucs2_general_ci cp866_general_ci keybcs2_general_ci
macce_general_ci macroman_general_ci cp852_general_ci latin7_general_ci latin7_general_cs macce_bin
cp1250_croatian_ci utf8mb4_general_ci utf8mb4_bin latin1_bin latin1_general_ci latin1_general_cs
cp1251_bin cp1251_general_ci cp1251_general_cs macroman_bin utf16_general_ci utf16_bin
utf16le_general_ci cp1256_general_ci cp1257_bin cp1257_general_ci utf32_general_ci utf32_bin
utf16le_bin binary armscii8_bin ascii_bin cp1250_bin cp1256_bin cp866_bin dec8_bin greek_bin
hebrew_bin hp8_bin keybcs2_bin koi8r_bin koi8u_bin latin2_bin latin5_bin latin7_bin cp850_bin
cp852_bin swe7_bin utf8mb3_bin big5_bin euckr_bin gb2312_bin gbk_bin sjis_bin tis620_bin ucs2_bin
ujis_bin geostd8_general_ci geostd8_bin latin1_spanish_ci cp932_japanese_ci cp932_bin
eucjpms_japanese_ci eucjpms_bin cp1250_polish_ci utf16_unicode_ci utf16_icelandic_ci
utf16_latvian_ci utf16_romanian_ci utf16_slovenian_ci utf16_polish_ci utf16_estonian_ci
utf16_spanish_ci utf16_swedish_ci utf16_turkish_ci utf16_czech_ci utf16_danish_ci
utf16_lithuanian_ci utf16_slovak_ci utf16_spanish2_ci utf16_roman_ci utf16_persian_ci
utf16_esperanto_ci utf16_hungarian_ci utf16_sinhala_ci utf16_german2_ci utf16_croatian_mysql561_ci
utf16_unicode_520_ci utf16_vietnamese_ci ucs2_unicode_ci ucs2_icelandic_ci ucs2_latvian_ci
ucs2_romanian_ci ucs2_slovenian_ci ucs2_polish_ci ucs2_estonian_ci ucs2_spanish_ci ucs2_swedish_ci
ucs2_turkish_ci ucs2_czech_ci ucs2_danish_ci ucs2_lithuanian_ci ucs2_slovak_ci ucs2_spanish2_ci
ucs2_roman_ci ucs2_persian_ci ucs2_esperanto_ci ucs2_hungarian_ci ucs2_sinhala_ci ucs2_german2_ci
ucs2_croatian_mysql561_ci ucs2_unicode_520_ci ucs2_vietnamese_ci ucs2_general_mysql500_ci
utf32_unicode_ci utf32_icelandic_ci utf32_latvian_ci utf32_romanian_ci utf32_slovenian_ci
utf32_polish_ci utf32_estonian_ci utf32_spanish_ci utf32_swedish_ci utf32_turkish_ci utf32_czech_ci
utf32_danish_ci utf32_lithuanian_ci utf32_slovak_ci utf32_spanish2_ci utf32_roman_ci
utf32_persian_ci utf32_esperanto_ci utf32_hungarian_ci utf32_sinhala_ci utf32_german2_ci
utf32_croatian_mysql561_ci utf32_unicode_520_ci utf32_vietnamese_ci utf8mb3_unicode_ci
utf8mb3_icelandic_ci utf8mb3_latvian_ci utf8mb3_romanian_ci utf8mb3_slovenian_ci utf8mb3_polish_ci
utf8mb3_estonian_ci utf8mb3_spanish_ci utf8mb3_swedish_ci utf8mb3_turkish_ci utf8mb3_czech_ci
utf8mb3_danish_ci utf8mb3_lithuanian_ci utf8mb3_slovak_ci utf8mb3_spanish2_ci utf8mb3_roman_ci
utf8mb3_persian_ci utf8mb3_esperanto_ci utf8mb3_hungarian_ci utf8mb3_sinhala_ci utf8mb3_german2_ci
utf8mb3_croatian_mysql561_ci utf8mb3_unicode_520_ci utf8mb3_vietnamese_ci
utf8mb3_general_mysql500_ci utf8mb4_unicode_ci utf8mb4_icelandic_ci utf8mb4_latvian_ci
utf8mb4_romanian_ci utf8mb4_slovenian_ci utf8mb4_polish_ci utf8mb4_estonian_ci utf8mb4_spanish_ci
utf8mb4_swedish_ci utf8mb4_turkish_ci utf8mb4_czech_ci utf8mb4_danish_ci utf8mb4_lithuanian_ci
utf8mb4_slovak_ci utf8mb4_spanish2_ci utf8mb4_roman_ci utf8mb4_persian_ci utf8mb4_esperanto_ci
utf8mb4_hungarian_ci utf8mb4_sinhala_ci utf8mb4_german2_ci utf8mb4_croatian_mysql561_ci
utf8mb4_unicode_520_ci utf8mb4_vietnamese_ci utf8mb3_croatian_ci utf8mb3_myanmar_ci
utf8mb3_thai_520_w2 utf8mb4_croatian_ci utf8mb4_myanmar_ci utf8mb4_thai_520_w2 ucs2_croatian_ci
ucs2_myanmar_ci ucs2_thai_520_w2 utf16_croatian_ci utf16_myanmar_ci utf16_thai_520_w2
utf32_croatian_ci utf32_myanmar_ci utf32_thai_520_w2 big5_chinese_nopad_ci dec8_swedish_nopad_ci
cp850_general_nopad_ci hp8_english_nopad_ci koi8r_general_nopad_ci latin1_swedish_nopad_ci
latin2_general_nopad_ci swe7_swedish_nopad_ci ascii_general_nopad_ci ujis_japanese_nopad_ci
sjis_japanese_nopad_ci hebrew_general_nopad_ci tis620_thai_nopad_ci euckr_korean_nopad_ci
koi8u_general_nopad_ci gb2312_chinese_nopad_ci greek_general_nopad_ci cp1250_general_nopad_ci
gbk_chinese_nopad_ci latin5_turkish_nopad_ci armscii8_general_nopad_ci utf8mb3_general_nopad_ci
ucs2_general_nopad_ci cp866_general_nopad_ci keybcs2_general_nopad_ci macce_general_nopad_ci
macroman_general_nopad_ci cp852_general_nopad_ci latin7_general_nopad_ci macce_nopad_bin
utf8mb4_general_nopad_ci utf8mb4_nopad_bin latin1_nopad_bin cp1251_nopad_bin
cp1251_general_nopad_ci macroman_nopad_bin utf16_general_nopad_ci utf16_nopad_bin
utf16le_general_nopad_ci cp1256_general_nopad_ci cp1257_nopad_bin cp1257_general_nopad_ci
utf32_general_nopad_ci utf32_nopad_bin utf16le_nopad_bin armscii8_nopad_bin ascii_nopad_bin
cp1250_nopad_bin cp1256_nopad_bin cp866_nopad_bin dec8_nopad_bin greek_nopad_bin hebrew_nopad_bin
hp8_nopad_bin keybcs2_nopad_bin koi8r_nopad_bin koi8u_nopad_bin latin2_nopad_bin latin5_nopad_bin
latin7_nopad_bin cp850_nopad_bin cp852_nopad_bin swe7_nopad_bin utf8mb3_nopad_bin big5_nopad_bin
euckr_nopad_bin gb2312_nopad_bin gbk_nopad_bin sjis_nopad_bin tis620_nopad_bin ucs2_nopad_bin
ujis_nopad_bin geostd8_general_nopad_ci geostd8_nopad_bin cp932_japanese_nopad_ci cp932_nopad_bin
eucjpms_japanese_nopad_ci eucjpms_nopad_bin utf16_unicode_nopad_ci utf16_unicode_520_nopad_ci
ucs2_unicode_nopad_ci ucs2_unicode_520_nopad_ci utf32_unicode_nopad_ci utf32_unicode_520_nopad_ci
utf8mb3_unicode_nopad_ci utf8mb3_unicode_520_nopad_ci utf8mb4_unicode_nopad_ci
utf8mb4_unicode_520_nopad_ci`

// ucaLanguages are the tailorings of MariaDB's UCA 14.0.0 collations.
var ucaLanguages = []string{"", "icelandic", "latvian", "romanian", "slovenian", "polish", "estonian",
	"spanish", "swedish", "turkish", "czech", "danish", "lithuanian", "slovak", "spanish2", "roman",
	"persian", "esperanto", "hungarian", "sinhala", "german2", "croatian", "vietnamese"}

// ucaCharsets are the character sets the uca1400 collations apply to.
var ucaCharsets = []string{"utf8mb3", "utf8mb4", "ucs2", "utf16", "utf32"}

// ucaCollations returns the charset-independent uca1400 collation names
// ("uca1400_ai_ci", ...). MariaDB resolves such a name against the column's
// character set: utf8mb4 + uca1400_ai_ci = utf8mb4_uca1400_ai_ci.
func ucaCollations() []string {
	var out []string
	for _, lang := range ucaLanguages {
		base := "uca1400"
		if lang != "" {
			base += "_" + lang
		}
		for _, pad := range []string{"", "_nopad"} {
			for _, sens := range []string{"_ai_ci", "_ai_cs", "_as_ci", "_as_cs"} {
				out = append(out, base+pad+sens)
			}
		}
	}
	return out
}

// normCharset lower-cases a character set name and spells utf8 as MariaDB
// 10.6+ and MySQL 8.0.30+ report it: utf8mb3.
func normCharset(cs string) string {
	cs = strings.ToLower(cs)
	if cs == "utf8" {
		return "utf8mb3"
	}
	return cs
}

// normCollation lower-cases a collation name and spells utf8_* as utf8mb3_*.
func normCollation(co string) string {
	co = strings.ToLower(co)
	if strings.HasPrefix(co, "utf8_") {
		return "utf8mb3_" + co[len("utf8_"):]
	}
	return co
}

// defaultCollation returns MariaDB's default collation of character set cs,
// or "" if cs is unknown.
func defaultCollation(cs string) string {
	cs = normCharset(cs)
	if c, ok := charsets[cs]; ok {
		return c.collation
	}
	switch cs {
	case "gb18030": // MySQL 8 only
		return "gb18030_chinese_ci"
	}
	return ""
}

// binCollation returns the binary collation of character set cs (what the
// BINARY column attribute selects).
func binCollation(cs string) string {
	if cs == "binary" {
		return "binary"
	}
	return cs + "_bin"
}

// charsetOf returns the character set of a collation, or "" if the
// collation is unknown or charset-independent (uca1400_ai_ci).
func charsetOf(co string) string {
	co = normCollation(co)
	if co == "binary" {
		return "binary"
	}
	cs, _, ok := strings.Cut(co, "_")
	if !ok || cs == "uca1400" {
		return ""
	}
	if _, known := charsets[cs]; known || cs == "gb18030" {
		return cs
	}
	return ""
}

// fullCollation resolves a collation named for a column or table whose
// character set is cs: a charset-independent name (uca1400_ai_ci) becomes
// cs_uca1400_ai_ci; any other name is returned normalized.
func fullCollation(co, cs string) string {
	co = normCollation(co)
	if strings.HasPrefix(co, "uca1400") && cs != "" {
		return cs + "_" + co
	}
	return co
}

// The TiDB parser rejects character sets and collations that TiDB does not
// implement (latin2, cp1251, utf8mb4_unicode_520_ci, uca1400_ai_ci, ...),
// which MariaDB dumps and DDL use all the time. Its charset package has
// AddCharset and AddCollation for "adding a custom charset to the parser";
// register MariaDB's there once, at init, before any parse can run, so that
// the parser's tables are never written while another goroutine reads them.
// Only names the parser does not know are added, under IDs far above any
// real collation ID, so nothing the parser already knows changes.
func init() {
	for name, cs := range charsets {
		if _, err := charset.GetCharsetInfo(name); err == nil {
			continue
		}
		charset.AddCharset(&charset.Charset{
			Name:             name,
			DefaultCollation: cs.collation,
			Collations:       map[string]*charset.Collation{},
			Desc:             name,
			Maxlen:           cs.maxLen,
		})
	}
	id := 1 << 20
	add := func(name, cs string) {
		if _, err := charset.GetCollationByName(name); err == nil {
			return
		}
		if cs == "utf8mb3" {
			cs = charset.CharsetUTF8 // the parser's name for utf8mb3
		}
		charset.AddCollation(&charset.Collation{ID: id, CharsetName: cs, Name: name, Sortlen: 1, PadAttribute: charset.PadSpace})
		id++
	}
	for _, name := range strings.Fields(mariadbCollations) {
		add(name, charsetOf(name))
	}
	for _, name := range ucaCollations() {
		add(name, "utf8mb4")
		for _, cs := range ucaCharsets {
			add(cs+"_"+name, cs)
		}
	}
}
