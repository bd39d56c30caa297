package schema

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode"
)

// maxVersion is the version this package claims to be when it meets a
// versioned comment: every /*!NNNNN ... */ and /*M!NNNNNN ... */ body below
// it is read as SQL, as a current server does. MariaDB dumps open with
// /*M!999999\- enable the sandbox mode */, a command for the mariadb client
// that a server skips; so do we.
const maxVersion = 999999

// statement is one SQL statement of a script, cleaned: comments removed,
// the bodies of versioned comments kept, the delimiter dropped.
type statement struct {
	text string
	line int // 1-based line of the statement's first character in the script
}

// splitter cuts a script (a dump, or what the mariadb client reads) into
// statements the way the mariadb client does: it honours quotes, comments,
// versioned comments and DELIMITER commands.
type splitter struct {
	r     *bufio.Reader
	line  int
	delim string
	// split is false to read the whole input as one statement (a query from
	// the binary log, where a procedure body may hold semicolons).
	split bool
	err   error
	// With track set, offsets holds, for each byte of the statement being
	// built, the offset in the input of the byte it came from (see
	// cleanQueryMapped); pos counts the bytes read.
	track   bool
	pos     int
	offsets []int
}

func newSplitter(r io.Reader, split bool) *splitter {
	return newSplitterSize(r, split, 64<<10)
}

// newSplitterSize is newSplitter with a read buffer of size bytes: one
// query's length is enough for one query (a buffer of 64 KiB for each
// statement of a statement-format binlog was most of what reading it
// cost).
func newSplitterSize(r io.Reader, split bool, size int) *splitter {
	return &splitter{r: bufio.NewReaderSize(r, size), line: 1, delim: ";", split: split}
}

// cleanQuery returns one query with comments removed and versioned comments
// opened, and without a trailing semicolon. It reads q in one pass without
// the splitter (appendCleaned): the splitter's byte-at-a-time copy and
// offsets were a third of what analyze spent on a binlog of bulk INSERTs.
// The splitter reads the few queries whose ends trimCleaned cannot trim
// as it does (a non-ASCII byte there).
func cleanQuery(q string) string {
	if text, ok := trimCleaned(appendCleaned(make([]byte, 0, len(q)), q, nil)); ok {
		return string(text)
	}
	text, _ := cleanQueryMapped(q)
	return text
}

// cleanQueryMapped is cleanQuery, and where each byte of the cleaned text
// comes from in q: the byte at offset i of the text is q[at[i]], so that
// a token found in the text can be replaced in q itself.
func cleanQueryMapped(q string) (text string, at []int) {
	s := newSplitterSize(strings.NewReader(q), false, max(len(q), 16))
	s.track = true
	st, err := s.next()
	if err != nil {
		return "", nil
	}
	text = strings.TrimRight(st.text, "; \t\r\n")
	return text, s.offsets[:len(text)]
}

func (s *splitter) peek(n int) []byte {
	b, _ := s.r.Peek(n)
	return b
}

func (s *splitter) readByte() (byte, bool) {
	c, err := s.r.ReadByte()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			s.err = err
		}
		return 0, false
	}
	s.pos++
	if c == '\n' {
		s.line++
	}
	return c, true
}

func (s *splitter) discard(n int) {
	for range n {
		s.readByte()
	}
}

// next returns the next statement, or io.EOF after the last one.
func (s *splitter) next() (statement, error) {
	var buf bytes.Buffer
	start := 0
	versioned := false // inside the body of a versioned comment
	atLineStart := true
	emit := func(c byte) {
		if start == 0 && !isSpace(c) {
			start = s.line
		}
		buf.WriteByte(c)
		if s.track {
			s.offsets = append(s.offsets, s.pos-1)
		}
	}
	for {
		if s.split && atLineStart && start == 0 && s.delimiterCommand() {
			continue
		}
		c, ok := s.readByte()
		if !ok {
			break
		}
		atLineStart = c == '\n'
		switch {
		case versioned && c == '*' && s.peekIs("/"):
			s.discard(1)
			versioned = false
			emit(' ')
		case s.split && !versioned && c == s.delim[0] && s.peekIs(s.delim[1:]):
			s.discard(len(s.delim) - 1)
			if text := strings.TrimSpace(buf.String()); text != "" {
				return statement{text: text, line: start}, nil
			}
			buf.Reset()
			start = 0
		case c == '\'' || c == '"' || c == '`':
			emit(c)
			s.copyQuoted(c, emit)
		case c == '#':
			s.skipLine()
			atLineStart = true
			emit('\n')
		case c == '-' && s.peekIs("-") && isCommentDash(s.peek(2)):
			s.skipLine()
			atLineStart = true
			emit('\n')
		case c == '/' && s.peekIs("*"):
			s.discard(1)
			if s.openVersioned() {
				versioned = true
			} else {
				s.skipComment()
			}
			emit(' ')
		default:
			emit(c)
		}
	}
	if s.err != nil {
		return statement{}, s.err
	}
	if s.track {
		raw := buf.String()
		s.offsets = s.offsets[len(raw)-len(strings.TrimLeftFunc(raw, unicode.IsSpace)):]
	}
	if text := strings.TrimSpace(buf.String()); text != "" {
		return statement{text: text, line: start}, nil
	}
	return statement{}, io.EOF
}

// delimiterCommand consumes a "DELIMITER xx" line of the mariadb client, if
// one starts here (after blanks), and reports whether it did.
func (s *splitter) delimiterCommand() bool {
	b := s.peek(256)
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	const kw = "delimiter"
	if len(b) < i+len(kw)+2 || !strings.EqualFold(string(b[i:i+len(kw)]), kw) ||
		(b[i+len(kw)] != ' ' && b[i+len(kw)] != '\t') {
		return false
	}
	rest := b[i+len(kw):]
	end := bytes.IndexByte(rest, '\n')
	if end < 0 {
		end = len(rest)
	}
	fields := strings.Fields(string(rest[:end]))
	if len(fields) == 0 {
		return false
	}
	s.delim = fields[0]
	s.skipLine()
	return true
}

func (s *splitter) peekIs(str string) bool {
	if str == "" {
		return true
	}
	return string(s.peek(len(str))) == str
}

// isCommentDash reports whether the bytes after "--" make it a comment:
// "-- " needs a blank or control character (or the end) after the dashes.
func isCommentDash(b []byte) bool {
	return len(b) < 2 || b[1] <= ' '
}

func (s *splitter) skipLine() {
	for {
		c, ok := s.readByte()
		if !ok || c == '\n' {
			return
		}
	}
}

// skipComment skips the rest of a /* ... */ comment.
func (s *splitter) skipComment() {
	for {
		c, ok := s.readByte()
		if !ok {
			return
		}
		if c == '*' && s.peekIs("/") {
			s.discard(1)
			return
		}
	}
}

// openVersioned is called after "/*". If a versioned comment starts here
// (/*!, /*!NNNNN, /*M!, /*M!NNNNNN) whose version applies, it consumes the
// marker and returns true; the caller then reads the body as SQL. A comment
// whose version is too high is left for skipComment.
func (s *splitter) openVersioned() bool {
	n, ok := versionedMarker(s.peek(8))
	if ok {
		s.discard(n)
	}
	return ok
}

// versionedMarker reads b, what follows "/*", as the marker of a versioned
// comment (!, !NNNNN, M!, M!NNNNNN): its length, and false if there is
// none or its version is too high.
func versionedMarker[T ~string | ~[]byte](b T) (int, bool) {
	n, digits := 0, 5
	switch {
	case len(b) >= 1 && b[0] == '!':
		n = 1
	case len(b) >= 2 && (b[0] == 'M' || b[0] == 'm') && b[1] == '!':
		n, digits = 2, 6
	default:
		return 0, false
	}
	version := 0
	d := 0
	for d < digits && n+d < len(b) && b[n+d] >= '0' && b[n+d] <= '9' {
		version = version*10 + int(b[n+d]-'0')
		d++
	}
	if version >= maxVersion {
		return 0, false
	}
	return n + d, true
}

// copyQuoted copies a quoted string or identifier whose opening quote q was
// just read, through its closing quote.
func (s *splitter) copyQuoted(q byte, emit func(byte)) {
	for {
		c, ok := s.readByte()
		if !ok {
			return
		}
		emit(c)
		switch {
		case c == '\\' && q != '`':
			if c, ok := s.readByte(); ok {
				emit(c)
			}
		case c == q:
			if !s.peekIs(string(q)) {
				return
			}
			c, _ = s.readByte()
			emit(c)
		}
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// tokenKind classifies a token.
type tokenKind uint8

const (
	tokWord   tokenKind = iota // unquoted word: keyword, identifier or number
	tokIdent                   // `quoted identifier`
	tokString                  // 'string' or "string"
	tokPunct                   // any other single character
)

// token is a lexical token of a cleaned statement.
type token struct {
	kind tokenKind
	// val is the word as written, the identifier or string unquoted, or the
	// punctuation character.
	val        string
	start, end int // byte offsets in the statement text
}

// is reports whether t is the unquoted keyword kw (case-insensitive).
func (t token) is(kw string) bool {
	return t.kind == tokWord && strings.EqualFold(t.val, kw)
}

// isPunct reports whether t is the punctuation character p.
func (t token) isPunct(p string) bool {
	return t.kind == tokPunct && t.val == p
}

// isName reports whether t can be an identifier.
func (t token) isName() bool {
	return t.kind == tokIdent || (t.kind == tokWord && t.val[0] != '@')
}

// tokenize splits a cleaned statement (no comments) into tokens.
func tokenize(s string) []token {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case isSpace(c):
			i++
		case c == '`' || c == '\'' || c == '"':
			val, end := unquote(s, i)
			kind := tokString
			if c == '`' {
				kind = tokIdent
			}
			toks = append(toks, token{kind: kind, val: val, start: i, end: end})
			i = end
		case isWordByte(c) || c == '@':
			j := i + 1
			for j < len(s) && (isWordByte(s[j]) || (c == '@' && s[j] == '@')) {
				j++
			}
			toks = append(toks, token{kind: tokWord, val: s[i:j], start: i, end: j})
			i = j
		default:
			toks = append(toks, token{kind: tokPunct, val: s[i : i+1], start: i, end: i + 1})
			i++
		}
	}
	return toks
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// unquote reads the quoted token starting at s[i] and returns its value and
// the offset after its closing quote.
func unquote(s string, i int) (string, int) {
	q := s[i]
	var b strings.Builder
	j := i + 1
	for j < len(s) {
		c := s[j]
		switch {
		case c == '\\' && q != '`' && j+1 < len(s):
			b.WriteByte(s[j+1])
			j += 2
		case c == q && j+1 < len(s) && s[j+1] == q:
			b.WriteByte(q)
			j += 2
		case c == q:
			return b.String(), j + 1
		default:
			b.WriteByte(c)
			j++
		}
	}
	return b.String(), j
}
