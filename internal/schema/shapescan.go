package schema

import (
	"strings"
	"unsafe"
)

// The shape scanner reads a statement as cleanQuery and tokenize do, in
// one pass over its bytes and without allocating, to find its shape: the
// cleaned text with each integer literal replaced by intMark and each
// string literal whose content cannot change how the statement parses by
// strMark and its quote. Two statements of one shape in one current
// database are the same statement but for those literals (see
// shapeCache).

const (
	intMark = 0x01
	strMark = 0x02
)

// shapeScan is the scratch a shape scan fills: buffers reused from one
// statement to the next (see scans).
type shapeScan struct {
	buf    []byte    // the cleaned text before trimming
	clean  []byte    // the cleaned text, as cleanQuery gives it (in buf)
	key    []byte    // current database, 0, the shape
	ints   []int64   // the integer literals' values, in order
	quotes []int     // where each quoted token of buf starts in the query
	strs   []strSpan // the strings marked strMark, in order
}

// literals are the literals of query, which s scanned.
func (s *shapeScan) literals(query string) literals {
	return literals{ints: s.ints, strs: s.strs, query: query}
}

// strSpan is a string literal of the query: its content's offset and
// length, and its quote. Its value is read when a shape's writes need it
// (strValue), which most strings (the values an UPDATE assigns) are not.
type strSpan struct {
	at, n int32
	quote byte
}

// strValue is the value of the string literal sp of query, and whether it
// is plain (see plain): false where the parser (and the server, without
// NO_BACKSLASH_ESCAPES) reads it as anything else. An escape of n, 0, b,
// Z, r or t is a control character, of % or _ keeps its backslash, of a
// backslash or a quote is one, as is a doubled quote; any other escaped
// character is itself.
func (sp strSpan) strValue(query string) (string, bool) {
	raw := query[sp.at : sp.at+sp.n]
	if strings.IndexByte(raw, '\\') < 0 && strings.IndexByte(raw, sp.quote) < 0 {
		return raw, plain(raw)
	}
	dec := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == sp.quote || c == '\\' && (i+1 == len(raw) || strings.IndexByte("n0bZrt%_\\'\"", raw[i+1]) >= 0) {
			return "", false
		}
		if c == '\\' {
			i++
			c = raw[i]
		}
		dec = append(dec, c)
	}
	v := string(dec)
	return v, plain(v)
}

// scan reads query, run in currentSchema, into s. It returns false for a
// statement a shape does not serve: one that is not INSERT, REPLACE,
// UPDATE or DELETE, or whose text it cannot be sure to read as the parser
// does (an unterminated quote, a "--" the parser would take for a
// comment, a byte equal to a mark).
func (s *shapeScan) scan(currentSchema, query string) bool {
	s.quotes = s.quotes[:0]
	s.buf = appendCleaned(s.buf[:0], query, &s.quotes)
	text, ok := trimCleaned(s.buf)
	if !ok || !dmlVerb(text) {
		return false
	}
	s.clean = text
	s.key = append(s.key[:0], currentSchema...)
	for i := 0; i < len(currentSchema); i++ {
		if currentSchema[i] == 0 {
			return false
		}
	}
	s.key = append(s.key, 0)
	s.ints, s.strs = s.ints[:0], s.strs[:0]
	return s.appendShape(text, query)
}

// appendCleaned appends q as splitter.next reads one query (split off):
// comments dropped (a blank, or a newline for a line comment, in their
// place), versioned comments opened when their version applies, quoted
// strings and identifiers copied whole. It is cleanQuery before trimming,
// byte for byte. Where quotes is not nil, it gets the offset in q of
// each quoted token copied, in order.
func appendCleaned(dst []byte, q string, quotes *[]int) []byte {
	versioned := false
	n := len(q)
	for i := 0; i < n; {
		c := q[i]
		i++
		switch {
		case versioned && c == '*' && i < n && q[i] == '/':
			i++
			versioned = false
			dst = append(dst, ' ')
		case c == '\'' || c == '"' || c == '`':
			if quotes != nil {
				*quotes = append(*quotes, i-1)
			}
			dst = append(dst, c)
			dst, i = appendQuoted(dst, q, i, c)
		case c == '#':
			i = lineEnd(q, i)
			dst = append(dst, '\n')
		case c == '-' && i < n && q[i] == '-' && (i+1 >= n || q[i+1] <= ' '):
			i = lineEnd(q, i)
			dst = append(dst, '\n')
		case c == '/' && i < n && q[i] == '*':
			i++
			if m, ok := versionedMarker(q[i:min(i+8, n)]); ok {
				i, versioned = i+m, true
			} else {
				i = commentEnd(q, i)
			}
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendQuoted is splitter.copyQuoted: it copies q from i, just after the
// opening quote, through the closing quote, and returns where it stopped.
func appendQuoted(dst []byte, q string, i int, quote byte) ([]byte, int) {
	for i < len(q) {
		// Copy up to the next quote or backslash at once: most of a
		// string is neither.
		k := quotedStop(q[i:], quote)
		if k < 0 {
			return append(dst, q[i:]...), len(q)
		}
		dst = append(dst, q[i:i+k+1]...)
		i += k + 1
		if q[i-1] == quote {
			if i >= len(q) || q[i] != quote {
				return dst, i
			}
			dst = append(dst, quote)
			i++
		} else if i < len(q) { // a backslash, which escapes the next byte
			dst = append(dst, q[i])
			i++
		}
	}
	return dst, i
}

// quotedStop is the offset in s of the first byte that ends or escapes
// in a string quoted with quote (a backslash does not in an identifier),
// -1 if there is none.
func quotedStop(s string, quote byte) int {
	k := strings.IndexByte(s, quote)
	if quote == '`' {
		return k
	}
	end := len(s)
	if k >= 0 {
		end = k
	}
	if b := strings.IndexByte(s[:end], '\\'); b >= 0 {
		return b
	}
	return k
}

// lineEnd is where the text after the line holding q[i] starts.
func lineEnd(q string, i int) int {
	for i < len(q) {
		i++
		if q[i-1] == '\n' {
			break
		}
	}
	return i
}

// commentEnd is where the text after a /* ... */ comment whose body starts
// at q[i] starts.
func commentEnd(q string, i int) int {
	for i < len(q) {
		i++
		if q[i-1] == '*' && i < len(q) && q[i] == '/' {
			return i + 1
		}
	}
	return i
}

// trimCleaned trims the cleaned text as cleanQueryMapped does
// (strings.TrimSpace, then the trailing semicolons and blanks); false
// where a byte of a multi-byte character is at either end, which might be
// a Unicode space that TrimSpace would take off.
func trimCleaned(b []byte) ([]byte, bool) {
	asciiSpace := func(c byte) bool { return isSpace(c) }
	for len(b) > 0 && asciiSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && asciiSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && (b[0] >= 0x80 || b[len(b)-1] >= 0x80) {
		return nil, false
	}
	for len(b) > 0 && (b[len(b)-1] == ';' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t' ||
		b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b, true
}

// dmlVerb reports whether text starts with INSERT, REPLACE, UPDATE or
// DELETE: the statements a stream repeats. Other statements are read
// whole each time (DDL is rare, and parsing it may depend on what its
// literals say: a type's length, a charset's name).
func dmlVerb(text []byte) bool {
	j := 0
	for j < len(text) && isWordByte(text[j]) {
		j++
	}
	w := text[:j]
	for _, v := range [...]string{"INSERT", "REPLACE", "UPDATE", "DELETE"} {
		if equalFoldASCII(w, v) {
			return true
		}
	}
	return false
}

// equalFoldASCII reports whether b is upper (an upper-case ASCII word) in
// any case.
func equalFoldASCII(b []byte, upper string) bool {
	if len(b) != len(upper) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != upper[i] {
			return false
		}
	}
	return true
}

// appendShape appends the shape of t, query cleaned, to s.key, as
// tokenize splits it, the integer literals' values to s.ints and the
// marked strings to s.strs.
func (s *shapeScan) appendShape(t []byte, query string) bool {
	key, ints := s.key, s.ints
	defer func() { s.key, s.ints = key, ints }()
	quoted := 0 // quoted tokens of t met so far
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == intMark || c == strMark || c == '#':
			return false
		case i+1 < len(t) && (c == '-' && t[i+1] == '-' || c == '/' && t[i+1] == '*'):
			// "--" or "/*" the cleaning left (around a comment it
			// dropped): the parser may read a comment there, and
			// literals inside it as text.
			return false
		case c == '\'' || c == '"' || c == '`':
			end, ok := quotedEnd(t, i)
			if !ok || quoted >= len(s.quotes) {
				return false
			}
			at := s.quotes[quoted] + 1
			quoted++
			if c != '`' && valueContext(t, i) {
				key = append(key, strMark, c)
				s.strs = append(s.strs, strSpan{at: int32(at), n: int32(end - i - 2), quote: c})
			} else {
				if hasMark(t[i:end]) {
					return false
				}
				key = append(key, t[i:end]...)
			}
			i = end
		case isWordByte(c) || c == '@':
			j := i + 1
			for j < len(t) && (isWordByte(t[j]) || (c == '@' && t[j] == '@')) {
				j++
			}
			if v, ok := integerAt(t, i, j); ok {
				key = append(key, intMark)
				ints = append(ints, v)
			} else {
				key = append(key, t[i:j]...)
			}
			i = j
		default:
			key = append(key, c)
			i++
		}
	}
	return true
}

// quotedEnd is unquote's end of the quoted token at t[i]; false if it is
// not closed.
func quotedEnd(t []byte, i int) (int, bool) {
	q := t[i]
	for j := i + 1; j < len(t); {
		k := quotedStop(unsafeString(t[j:]), q)
		if k < 0 {
			return 0, false
		}
		j += k
		switch {
		case t[j] == '\\' && j+1 < len(t):
			j += 2
		case t[j] == '\\':
			return 0, false // escapes nothing: unterminated
		case j+1 < len(t) && t[j+1] == q:
			j += 2
		default:
			return j + 1, true
		}
	}
	return 0, false
}

func hasMark(b []byte) bool {
	for _, c := range b {
		if c == intMark || c == strMark {
			return true
		}
	}
	return false
}

// valueContext reports whether a string at t[i] is a value whose content
// the parser does not look at: it follows an operator, an opening
// parenthesis or a comma. After a word it may be a character set or
// collation name the parser checks (CHARACTER SET 'x', COLLATE 'x'), an
// ESCAPE character, or the body of a x'..', b'..', N'..' or _cs'..'
// literal, and stays in the shape.
func valueContext(t []byte, i int) bool {
	k := i - 1
	for k >= 0 && isSpace(t[k]) {
		k--
	}
	if k < 0 {
		return false
	}
	switch t[k] {
	case '=', '(', ',', '<', '>', '+', '-', '*', '/', '%', '|', '&', '^', '~', '!':
		return true
	}
	return false
}

// integerAt reads the word t[i:j] as an integer literal the parser reads
// as a number of that value and nothing else: digits only, within int64
// (larger ones the parser reads as other types), not beside a dot (a
// decimal, or a column name after "t."), not the exponent of a float
// (1e-5, 1.e+5).
func integerAt(t []byte, i, j int) (int64, bool) {
	var v int64
	for _, c := range t[i:j] {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if v > (1<<63-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	k := i - 1
	for k >= 0 && isSpace(t[k]) {
		k--
	}
	if k >= 0 && t[k] == '.' {
		return 0, false
	}
	k = j
	for k < len(t) && isSpace(t[k]) {
		k++
	}
	if k < len(t) && t[k] == '.' {
		return 0, false
	}
	if i >= 2 && (t[i-1] == '-' || t[i-1] == '+') && (t[i-2] == 'e' || t[i-2] == 'E') {
		w := i - 2
		for w > 0 && isWordByte(t[w-1]) {
			w--
		}
		if t[w] >= '0' && t[w] <= '9' || w > 0 && t[w-1] == '.' {
			return 0, false
		}
	}
	return v, true
}

// unsafeString is b as a string without copying it, for a search that
// does not outlive b.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
