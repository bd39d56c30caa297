package collation

import (
	"unicode/utf8"
)

// encoding decodes the Unicode character sets.
type encoding uint8

const (
	utf8Enc encoding = iota
	ucs2Enc
	utf16Enc
	utf16leEnc
	utf32Enc
)

var unicodeEncodings = map[string]encoding{
	"utf8mb3": utf8Enc, "utf8mb4": utf8Enc, "ucs2": ucs2Enc,
	"utf16": utf16Enc, "utf16le": utf16leEnc, "utf32": utf32Enc,
}

// badRune stands for bytes that do not decode: each such byte gets a code
// point of its own above the Unicode range, so that it never merges with
// a character.
const badRune = 0x110000

// decode returns the first character of b and its length in bytes.
func (e encoding) decode(b []byte) (rune, int) {
	switch e {
	case utf8Enc:
		if b[0] < utf8.RuneSelf {
			return rune(b[0]), 1
		}
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			return badRune + rune(b[0]), 1
		}
		return r, n
	case ucs2Enc, utf16Enc, utf16leEnc:
		if len(b) < 2 {
			return badRune + rune(b[0]), 1
		}
		u := rune(b[0])<<8 | rune(b[1])
		if e == utf16leEnc {
			u = rune(b[1])<<8 | rune(b[0])
		}
		if e == ucs2Enc || u < 0xD800 || u > 0xDBFF || len(b) < 4 {
			return u, 2
		}
		l := rune(b[2])<<8 | rune(b[3])
		if e == utf16leEnc {
			l = rune(b[3])<<8 | rune(b[2])
		}
		if l < 0xDC00 || l > 0xDFFF {
			return u, 2
		}
		return 0x10000 + (u-0xD800)<<10 + (l - 0xDC00), 4
	case utf32Enc:
		if len(b) < 4 {
			return badRune + rune(b[0]), 1
		}
		return rune(b[0])<<24 | rune(b[1])<<16 | rune(b[2])<<8 | rune(b[3]), 4
	}
	return badRune + rune(b[0]), 1
}
