package binlog

import "strings"

// statementBody returns the statement a query event's text runs, for
// classifying it by its first keyword: a leading versioned comment
// (/*!80013 ... */, /*M!100100 ... */) is opened, as the server reads its
// body, and MariaDB's "SET STATEMENT var=value[, ...] FOR" prefix, which
// runs the statement after it with session variables set, is dropped.
func statementBody(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\n\r")
		switch {
		case strings.HasPrefix(q, "/*!"):
			q = strings.TrimLeft(q[3:], "0123456789")
		case len(q) >= 4 && q[0] == '/' && q[1] == '*' && (q[2] == 'M' || q[2] == 'm') && q[3] == '!':
			q = strings.TrimLeft(q[4:], "0123456789")
		case strings.HasPrefix(q, "/*"):
			end := strings.Index(q[2:], "*/")
			if end < 0 {
				return q
			}
			q = q[end+4:]
		case isKeyword(q, "SET") && isKeyword(q[3:], "STATEMENT"):
			i := forKeyword(q)
			if i < 0 {
				return q
			}
			q = q[i+len("FOR"):]
		default:
			return q
		}
	}
}

// forKeyword returns the offset of the first FOR keyword of q outside
// quotes and parentheses, or -1.
func forKeyword(q string) int {
	depth := 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '\'', '"', '`':
			for i++; i < len(q) && q[i] != c; i++ {
				if q[i] == '\\' && c != '`' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
		case 'f', 'F':
			if depth == 0 && i > 0 && isSpaceByte(q[i-1]) && isKeyword(q[i:], "FOR") {
				return i
			}
		}
	}
	return -1
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// StatementBody returns the statement a query event's text runs (see
// statementBody): a suffix of q.
func StatementBody(q string) string { return statementBody(q) }

// DDLVerb returns the verb of a DDL statement and the kind of object it
// acts on, upper case, with SCHEMA read as DATABASE and the modifiers
// between them (OR REPLACE, TEMPORARY) skipped: "DROP", "TABLE" for
// "DROP TEMPORARY TABLE IF EXISTS t". object is "" when the word after the
// verb is not a plain word.
func DDLVerb(q string) (verb, object string) {
	body := statementBody(q)
	verb, body = nextWord(body)
	for {
		var w string
		w, body = nextWord(body)
		switch w {
		case "OR", "REPLACE", "TEMPORARY":
			continue
		case "SCHEMA":
			w = "DATABASE"
		}
		return verb, w
	}
}

// nextWord returns the leading word of s (letters and underscores), upper
// case, and what follows it.
func nextWord(s string) (string, string) {
	s = strings.TrimLeft(s, " \t\n\r")
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] == '_') {
		i++
	}
	return strings.ToUpper(s[:i]), s[i:]
}
