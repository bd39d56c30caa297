package stmtmerge

import (
	"math"
	"strconv"
	"strings"
)

type tokenKind uint8

const (
	tokWord   tokenKind = iota // keyword, unquoted identifier or number
	tokIdent                   // `quoted identifier`
	tokString                  // 'string'
	tokPunct                   // any other character
)

// token is a run of the query's bytes, start to end. It holds no
// pointer (reader.str gives its text): a statement's tokens are appended
// to a reused slice without the garbage collector's write barriers.
type token struct {
	kind       tokenKind
	start, end int32 // byte offsets in the query
}

// unsafeInQuotes are the bytes Recognize refuses inside a quoted string
// or identifier (see scan).
var unsafeInQuotes = func() (t [256]bool) {
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['\\'], t[0] = true, true
	return t
}()

// plain reports whether s holds none of unsafeInQuotes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if unsafeInQuotes[s[i]] {
			return false
		}
	}
	return true
}

// scan appends query's tokens to toks, or says it cannot read it with
// certainty (see the package comment).
func scan(toks []token, q string) ([]token, bool) {
	if len(q) > math.MaxInt32 {
		return nil, false // beyond a token's offsets (and any max_allowed_packet)
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c >= 0x80, c == '"', c == '\\', c == '#', c == ';', c == '@', c == '?', c == 0:
			return nil, false
		case c == '-' && i+1 < len(q) && q[i+1] == '-', c == '/' && i+1 < len(q) && q[i+1] == '*':
			return nil, false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`' || c == '\'':
			// The closing quote is the next one not doubled; what lies
			// between must be plain.
			j := i + 1
			for {
				k := strings.IndexByte(q[j:], c)
				if k < 0 || !plain(q[j:j+k]) {
					return nil, false
				}
				j += k
				if j+1 < len(q) && q[j+1] == c {
					j += 2
					continue
				}
				break
			}
			kind := tokString
			if c == '`' {
				kind = tokIdent
			}
			toks = append(toks, token{kind: kind, start: int32(i), end: int32(j + 1)})
			i = j + 1
		case isWordByte(c):
			j := i + 1
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			// A decimal literal (12.5) is one token.
			if j+1 < len(q) && q[j] == '.' && isDigit(q[j+1]) && strings.Trim(q[i:j], "0123456789") == "" {
				j++
				for j < len(q) && isDigit(q[j]) {
					j++
				}
			}
			toks = append(toks, token{kind: tokWord, start: int32(i), end: int32(j)})
			i = j
		default:
			toks = append(toks, token{kind: tokPunct, start: int32(i), end: int32(i + 1)})
			i++
		}
	}
	return toks, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// reader walks the tokens of one statement, query.
type reader struct {
	query string
	toks  []token
	i     int
}

// str is t's text.
func (r *reader) str(t token) string { return r.query[t.start:t.end] }

func (r *reader) peek() (token, bool) {
	if r.i >= len(r.toks) {
		return token{}, false
	}
	return r.toks[r.i], true
}

// word consumes the keyword kw.
func (r *reader) word(kw string) bool {
	if t, ok := r.peek(); ok && t.kind == tokWord && strings.EqualFold(r.str(t), kw) {
		r.i++
		return true
	}
	return false
}

// punct consumes the character c.
func (r *reader) punct(c byte) bool {
	if t, ok := r.peek(); ok && t.kind == tokPunct && r.query[t.start] == c {
		r.i++
		return true
	}
	return false
}

// reserved are the words a name may not be here: they end or start the
// clauses the reader looks for.
var reserved = map[string]bool{"SET": true, "WHERE": true, "VALUES": true, "VALUE": true, "SELECT": true,
	"LOW_PRIORITY": true, "DELAYED": true, "HIGH_PRIORITY": true, "IGNORE": true, "QUICK": true, "DEFAULT": true,
	"INTO": true, "FROM": true, "ON": true, "ORDER": true, "LIMIT": true, "RETURNING": true, "PARTITION": true}

// isReserved reports whether word is one of reserved, in any case,
// without allocating.
func isReserved(word string) bool {
	var buf [16]byte
	if len(word) > len(buf) {
		return false
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return reserved[string(buf[:len(word)])]
}

// name consumes an identifier and returns it as written.
func (r *reader) name() (string, bool) {
	t, ok := r.peek()
	if !ok || t.kind == tokWord && (isReserved(r.str(t)) || isDigit(r.query[t.start])) ||
		t.kind != tokWord && t.kind != tokIdent {
		return "", false
	}
	r.i++
	return r.str(t), true
}

// table consumes name or name.name and returns it as written.
func (r *reader) table() (string, bool) {
	first := r.i
	if _, ok := r.name(); !ok {
		return "", false
	}
	if r.punct('.') {
		if _, ok := r.name(); !ok {
			return "", false
		}
	}
	return r.text(first, r.i), true
}

// text is the query's text of tokens from..to-1, as written.
func (r *reader) text(from, to int) string {
	return r.query[r.toks[from].start:r.toks[to-1].end]
}

// positive consumes a positive integer literal.
func (r *reader) positive() (int64, bool) {
	t, ok := r.peek()
	if !ok || t.kind != tokWord {
		return 0, false
	}
	v, err := strconv.ParseInt(r.str(t), 10, 64)
	if err != nil || v <= 0 || r.query[t.start] == '0' {
		return 0, false
	}
	r.i++
	return v, true
}

// keyString consumes a string literal that can be a key's: not empty,
// no quote or trailing blank inside (scan already refused a backslash),
// as deptrack keys a statement by.
func (r *reader) keyString() (string, bool) {
	t, ok := r.peek()
	if !ok || t.kind != tokString || !keyText(r.str(t)) {
		return "", false
	}
	r.i++
	return r.str(t), true
}

// keyText reports whether lit, a quoted string, is one keyString takes.
func keyText(lit string) bool {
	content := lit[1 : len(lit)-1]
	return content != "" && !strings.ContainsRune(content, '\'') && content[len(content)-1] != ' '
}

// expr consumes an expression: tokens up to a top-level comma, closing
// parenthesis or WHERE. It returns its text and whether it is one
// integer, decimal or string literal ('i', 'd', 's', or 0).
func (r *reader) expr() (string, byte, bool) {
	first, depth := r.i, 0
	for ; r.i < len(r.toks); r.i++ {
		t := r.toks[r.i]
		text := r.str(t)
		if t.kind == tokWord && (strings.EqualFold(text, "DEFAULT") || strings.EqualFold(text, "SELECT")) {
			return "", 0, false
		}
		if depth == 0 && (t.kind == tokPunct && (text == "," || text == ")") || t.kind == tokWord && strings.EqualFold(text, "WHERE")) {
			break
		}
		switch {
		case t.kind == tokPunct && text == "(":
			depth++
		case t.kind == tokPunct && text == ")":
			depth--
		}
	}
	if r.i == first || depth != 0 {
		return "", 0, false
	}
	var lit byte
	if r.i == first+1 {
		switch t, text := r.toks[first], r.str(r.toks[first]); {
		case t.kind == tokString:
			lit = 's'
		case t.kind == tokWord && strings.Trim(text, "0123456789") == "":
			lit = 'i'
		case t.kind == tokWord && strings.Trim(text, "0123456789.") == "" && isDigit(text[0]):
			lit = 'd'
		}
	}
	return r.text(first, r.i), lit, true
}

// assignments consumes col=expr [, col=expr]... into f.
func (r *reader) assignments(f *Form) bool {
	for {
		col, ok := r.name()
		if !ok || !r.punct('=') {
			return false
		}
		e, lit, ok := r.expr()
		if !ok {
			return false
		}
		f.Columns, f.Exprs, f.literal = append(f.Columns, col), append(f.Exprs, e), append(f.literal, lit)
		if !r.punct(',') {
			return true
		}
	}
}

// insert consumes (cols) VALUES (exprs) into f, the key's value from the
// column named key.
func (r *reader) insert(f *Form, key string) bool {
	if !r.punct('(') {
		return false
	}
	for {
		col, ok := r.name()
		if !ok {
			return false
		}
		f.Columns = append(f.Columns, col)
		if r.punct(')') {
			break
		}
		if !r.punct(',') {
			return false
		}
	}
	if !r.word("VALUES") || !r.punct('(') {
		return false
	}
	for {
		e, lit, ok := r.expr()
		if !ok {
			return false
		}
		f.Exprs, f.literal = append(f.Exprs, e), append(f.literal, lit)
		if r.punct(')') {
			break
		}
		if !r.punct(',') {
			return false
		}
	}
	if len(f.Exprs) != len(f.Columns) {
		return false
	}
	k := -1
	for i, c := range f.Columns {
		if strings.EqualFold(unquoted(c), key) {
			if k >= 0 {
				return false
			}
			k = i
		}
	}
	switch {
	case k < 0:
		return false
	case f.literal[k] == 's' && keyText(f.Exprs[k]):
		f.Key, f.KeyText = f.Columns[k], f.Exprs[k]
		return true
	case f.literal[k] != 'i':
		return false
	}
	v, err := strconv.ParseInt(f.Exprs[k], 10, 64)
	if err != nil || v <= 0 || f.Exprs[k][0] == '0' {
		return false
	}
	f.Key, f.KeyValue = f.Columns[k], v
	return true
}

// done reports whether every token was read.
func (r *reader) done() bool { return r.i == len(r.toks) }
