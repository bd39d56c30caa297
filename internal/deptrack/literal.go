package deptrack

import (
	"strconv"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// literal is a key column's value as a statement's text gives it: an
// integer, or where str a plain string (see schema.Writes).
type literal struct {
	i   int64
	s   string
	str bool
}

// String is the literal as --explain shows a key.
func (l literal) String() string {
	if l.str {
		return strconv.Quote(l.s)
	}
	return strconv.FormatInt(l.i, 10)
}

// The literals a key column takes (literalKind).
const (
	kindInteger = 1 + iota
	kindString
)

// literalKind is the kind of literal that keys column c as its row images
// do, 0 for none. Integers key integer columns. A plain string (printable
// ASCII, see schema.Writes) keys a CHAR or VARCHAR column whose character
// set writes ASCII as itself, and a VARBINARY one, folded by the column's
// collation as the row's value is: not BINARY(n), which pads the value
// with NULs, nor a type the server converts a string into (UUID, INET6,
// numbers, dates).
func literalKind(c *schema.Column) int {
	switch {
	case integerBits(c.Type) > 0:
		return kindInteger
	case c.Type == "varbinary":
		return kindString
	case c.Type != "char" && c.Type != "varchar":
		return 0
	}
	switch c.Charset {
	case "utf8mb4", "utf8mb3", "latin1", "ascii":
		return kindString
	}
	return 0
}

// mergeableKey reports whether stmtmerge may merge the statements of a
// table whose primary key is column c alone: an integer key, or a string
// whose collation tells two plain strings apart unless they are equal but
// for letter case (stmtmerge.Merger tells rows apart by the key's lower
// case): a binary one, the general, unicode, 0900 and uca1400 ones, and
// latin1's default.
func mergeableKey(c *schema.Column) bool {
	switch literalKind(c) {
	case kindInteger:
		return true
	case kindString:
		if c.Collation == "binary" || c.Collation == "" && c.Type == "varbinary" {
			return true
		}
		for _, suffix := range []string{"_bin", "_general_ci", "_general_nopad_ci", "_unicode_ci", "_unicode_nopad_ci",
			"_unicode_520_ci", "_unicode_520_nopad_ci", "_0900_ai_ci", "_uca1400_ai_ci", "_uca1400_nopad_ai_ci"} {
			if strings.HasSuffix(c.Collation, suffix) {
				return true
			}
		}
		return c.Collation == "latin1_swedish_ci"
	}
	return false
}

// stringsRead reports whether st's session reads a string literal as the
// parser did: not with ANSI_QUOTES (a double-quoted string is a column's
// name) nor NO_BACKSLASH_ESCAPES (a backslash is itself); the sql_mode
// must be known.
func stringsRead(st *binlog.Statement) bool {
	return st.Session.HasSQLMode && st.Session.SQLMode&(binlog.ModeANSIQuotes|binlog.ModeNoBackslashEscapes) == 0
}

// rowLiteral is the literal an inserted row gives the column name (lower
// case, of literalKind kind); false for none. A string keys only where the
// server cannot have cut it to the column's length, which a strict
// sql_mode makes an error: STRICT_ALL_TABLES, or STRICT_TRANS_TABLES in an
// INSERT of one row (of several, a non-transactional table would cut the
// second row's).
func rowLiteral(st *binlog.Statement, kind int, name string, row []schema.ColumnValue, rows int) (literal, bool) {
	switch kind {
	case kindInteger:
		v, ok := schema.RowValue(row, name)
		return literal{i: v}, ok
	case kindString:
		v, ok := schema.RowString(row, name)
		uncut := st.Session.HasSQLMode && st.Session.SQLMode&binlog.ModeStrictAllTables != 0 || st.Session.Strict() && rows == 1
		return literal{s: v, str: true}, ok && stringsRead(st) && uncut
	}
	return literal{}, false
}

// pinnedLiterals are the literals w's WHERE pins column name (lower
// case, of literalKind kind) to; nil for none.
func pinnedLiterals(st *binlog.Statement, kind int, w *schema.Writes, name string) []literal {
	switch kind {
	case kindInteger:
		vs := w.Pinned(name)
		out := make([]literal, len(vs))
		for i, v := range vs {
			out[i] = literal{i: v}
		}
		return out
	case kindString:
		if !stringsRead(st) {
			return nil
		}
		vs := w.PinnedStrings(name)
		out := make([]literal, len(vs))
		for i, v := range vs {
			out[i] = literal{s: v, str: true}
		}
		return out
	}
	return nil
}
