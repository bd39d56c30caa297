// Package stmtmerge merges statement-format statements of one target
// transaction the way the SQL path compacts rows: the plainest statements
// of a table, each writing one row it names by its primary key, become one
// statement per shape.
//
//	UPDATE t SET k=k+1 WHERE id=5; UPDATE t SET k=k+1 WHERE id=7
//	  -> UPDATE t SET k=k+1 WHERE id IN (5,7)
//	UPDATE t SET c='a' WHERE id=5; UPDATE t SET c='b' WHERE id=7
//	  -> UPDATE t SET c=CASE id WHEN 5 THEN 'a' WHEN 7 THEN 'b' END WHERE id IN (5,7)
//	DELETE FROM t WHERE id=5; DELETE FROM t WHERE id=7
//	  -> DELETE FROM t WHERE id IN (5,7)
//	INSERT INTO t (id,c) VALUES (5,'a'); INSERT INTO t (id,c) VALUES (7,'b')
//	  -> INSERT INTO t (id,c) VALUES (5,'a'),(7,'b')
//
// On a MIXED source most of a replica's work on such a stream is per
// statement (parsing, opening and locking the table, planning, logging a
// table map), not per row: merged, the target spent 0.12-0.13 ms of CPU a
// sysbench write_only transaction against 0.29 (docs/benchmark.md,
// "Merging statements").
//
// A key may be a string (a session's id): the caller offers one only in a
// collation where two plain ASCII strings name one row only if they are
// equal but for letter case (the _bin, general, unicode and uca1400
// collations), the rows Merger tells apart.
//
// Order: each statement gets a level, one above the last statement before
// it that wrote the same row (Level). Statements of one level write
// distinct rows, and each one row of a table whose primary key is its only
// unique key, with no trigger and no foreign key (or, for an UPDATE that
// assigns no column of them, other unique keys and foreign keys of other
// tables referencing the primary key), the caller's to check, as for the
// statement's writeset: they commute, so the statements of a level may run
// in any order, merged. Levels run in order.
//
// Recognize accepts only texts it reads with certainty: ASCII, no
// comment, no backslash, no double quote (a string or, under ANSI_QUOTES,
// an identifier), no user or system variable, no DEFAULT in an UPDATE;
// every other statement stays as it is.
package stmtmerge

import (
	"strings"
)

// Kind is a recognized statement's verb.
type Kind uint8

// The kinds of statement Recognize reads.
const (
	Update Kind = iota + 1
	Delete
	Insert
)

// Form is a statement Recognize read: the parts its merged statement is
// written from, each the statement's own text.
type Form struct {
	Kind Kind
	// Table is the table as the statement names it ("sbtest1",
	// "`db`.`t`"); Key is the primary key's column as the statement names
	// it, KeyValue the row's key, or KeyText, where the key is a string,
	// its literal as written (quoted).
	Table    string
	Key      string
	KeyValue int64
	KeyText  string
	// Columns are the assigned columns (UPDATE) or the column list
	// (INSERT), as written; Exprs their expressions (UPDATE) or the
	// values (INSERT).
	Columns []string
	Exprs   []string
	// literal says, per Exprs, whether the expression is one integer,
	// decimal or string literal: an UPDATE's differing expressions merge
	// into a CASE only then (a CASE's type is its branches', which one
	// kind keeps as each branch's own).
	literal []byte
}

// Recognizer reads statements (Recognize), reusing its buffers from one
// to the next. Not safe for concurrent use.
type Recognizer struct {
	toks []token
}

// Recognize is Recognizer.Recognize with buffers of its own.
func Recognize(query, key string) (Form, bool) {
	var r Recognizer
	return r.Recognize(query, key)
}

// Recognize reads query as one of
//
//	UPDATE tbl SET col=expr [, col=expr]... WHERE key=int
//	DELETE FROM tbl WHERE key=int
//	INSERT [INTO] tbl (col [, col]...) VALUES (expr [, expr]...)
//
// where key is the column named key (the table's one-column primary key,
// any letter case), int a positive integer literal (an INSERT's 0 would
// take an AUTO_INCREMENT value) or a string literal (see keyString) and an
// expression a balanced run of tokens without a top-level comma. ok is
// false for any other text.
func (rc *Recognizer) Recognize(query, key string) (f Form, ok bool) {
	toks, ok := scan(rc.toks[:0], query)
	rc.toks = toks[:0]
	if !ok || len(toks) < 4 {
		return Form{}, false
	}
	r := reader{query: query, toks: toks}
	switch {
	case r.word("UPDATE"):
		f.Kind = Update
	case r.word("DELETE") && r.word("FROM"):
		f.Kind = Delete
	case r.word("INSERT"):
		r.word("INTO")
		f.Kind = Insert
	default:
		return Form{}, false
	}
	if f.Table, ok = r.table(); !ok {
		return Form{}, false
	}
	if f.Kind != Delete {
		// One allocation for both lists of a statement of up to eight
		// columns; append moves a longer one out.
		strs := make([]string, 16)
		f.Columns, f.Exprs, f.literal = strs[0:0:8], strs[8:8:16], make([]byte, 0, 8)
	}
	switch f.Kind {
	case Update:
		if !r.word("SET") || !r.assignments(&f) {
			return Form{}, false
		}
		fallthrough
	case Delete:
		if !r.word("WHERE") {
			return Form{}, false
		}
		col, ok := r.name()
		if !ok || !strings.EqualFold(unquoted(col), key) || !r.punct('=') {
			return Form{}, false
		}
		f.Key = col
		if v, ok := r.positive(); ok {
			f.KeyValue = v
		} else if lit, ok := r.keyString(); ok {
			f.KeyText = lit
		} else {
			return Form{}, false
		}
	case Insert:
		if !r.insert(&f, key) {
			return Form{}, false
		}
	}
	return f, r.done()
}

// unquoted is an identifier without its backticks (doubled ones single).
func unquoted(name string) string {
	if len(name) >= 2 && name[0] == '`' {
		return strings.ReplaceAll(name[1:len(name)-1], "``", "`")
	}
	return name
}
