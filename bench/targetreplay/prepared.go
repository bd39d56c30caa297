package main

import (
	"bytes"
	"strconv"
	"strings"
)

// The -prepared replay asks what paraply's statements would cost the target
// as server-side prepared statements: each statement inside a compound
// statement (BEGIN NOT ATOMIC ... END) is sent alone, its literals made
// placeholders, through a statement prepared once per distinct text. The
// compound's row-count checks are left out (a client would check the OK
// packet's count instead).

// compoundStatements returns the statements of a compound statement as
// paraply writes it, in order and without its row-count checks; ok is false
// for any other text.
func compoundStatements(text string) (stmts []string, ok bool) {
	body, ok := strings.CutPrefix(text, "BEGIN NOT ATOMIC ")
	if !ok {
		return nil, false
	}
	body, ok = strings.CutSuffix(body, "END")
	if !ok {
		return nil, false
	}
	for _, s := range splitTopLevel(body) {
		switch {
		case s == "", s == "END IF", strings.HasPrefix(s, "IF ROW_COUNT()"), strings.HasPrefix(s, "SIGNAL SQLSTATE"):
			continue
		}
		stmts = append(stmts, s)
	}
	return stmts, true
}

// splitTopLevel cuts text at the semicolons outside quoted strings and
// identifiers.
func splitTopLevel(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\'', '`':
			i = skipQuoted(text, i)
		case ';':
			out = append(out, text[start:i])
			start = i + 1
		}
	}
	return append(out, text[start:])
}

// skipQuoted returns the index of the quote that closes the string or
// identifier opening at i (a backslash escapes inside a string, a doubled
// quote stands for itself), or the last index if none does.
func skipQuoted(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch {
		case text[j] == '\\' && q == '\'':
			j++
		case text[j] == q && j+1 < len(text) && text[j+1] == q:
			j++
		case text[j] == q:
			return j
		}
	}
	return len(text) - 1
}

// parameterize replaces the string and integer literals of a statement by
// placeholders and returns their values: strings as string, _binary
// strings as []byte, integers as int64 (others as their text). NULL and
// identifiers stay as they are.
func parameterize(stmt string) (shape string, args []any) {
	b := make([]byte, 0, len(stmt))
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case c == '`':
			j := skipQuoted(stmt, i)
			b = append(b, stmt[i:j+1]...)
			i = j
		case c == '\'':
			j := skipQuoted(stmt, i)
			v := unescape(stmt[i+1 : j])
			if bytes.HasSuffix(b, []byte("_binary")) {
				b = b[:len(b)-len("_binary")]
				args = append(args, []byte(v))
			} else {
				args = append(args, v)
			}
			b = append(b, '?')
			i = j
		case isDigit(c) && (i == 0 || !isWord(stmt[i-1])):
			j := i
			for j < len(stmt) && (isDigit(stmt[j]) || stmt[j] == '.') {
				j++
			}
			if n, err := strconv.ParseInt(stmt[i:j], 10, 64); err == nil {
				args = append(args, n)
			} else {
				args = append(args, stmt[i:j])
			}
			b = append(b, '?')
			i = j - 1
		default:
			b = append(b, c)
		}
	}
	return string(b), args
}

// unescape undoes go-sql-driver's backslash escaping of a string literal's
// body (and a doubled quote).
func unescape(s string) string {
	if !strings.ContainsAny(s, `\'`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' && i+1 < len(s) && s[i+1] == '\'' {
			i++
		} else if c == '\\' && i+1 < len(s) {
			i++
			c = unescaped(s[i])
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unescaped is the byte a backslash followed by c stands for.
func unescaped(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'Z':
		return 26
	}
	return c
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWord(c byte) bool {
	return isDigit(c) || c == '_' || c == '$' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z')
}
