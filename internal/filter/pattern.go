package filter

import (
	"fmt"
	"unicode/utf8"
)

// Pattern is a `db.table` pattern as MariaDB's replicate_wild_do_table
// takes it: `%` matches any run of characters (none included), `_` any
// one character, a backslash makes the character after it literal; `*`
// is taken as `%` (write `\*` for a literal one). It is matched against
// "db.table" as a whole, so a `%` may span the dot, as on MariaDB; the
// part before the first unescaped dot is its database part. Names
// compare case-sensitively, as MariaDB's identifiers do with
// lower_case_table_names=0.
type Pattern struct {
	text  string
	elems []elem
	dot   int // index in elems of the first unescaped dot
}

// elem is one element of a pattern: a literal character, or a wildcard.
type elem struct {
	kind byte // 'c' literal, '_' one character, '%' any run
	r    rune
}

// ParsePattern parses a pattern; it must have a dot between its database
// and table parts.
func ParsePattern(s string) (Pattern, error) {
	if !utf8.ValidString(s) {
		return Pattern{}, fmt.Errorf("pattern %q is not UTF-8", s)
	}
	p := Pattern{text: s, dot: -1}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\\' && i+1 < len(rs):
			i++
			p.elems = append(p.elems, elem{kind: 'c', r: rs[i]})
		case r == '%' || r == '*':
			p.elems = append(p.elems, elem{kind: '%'})
		case r == '_':
			p.elems = append(p.elems, elem{kind: '_'})
		default:
			if r == '.' && p.dot < 0 {
				p.dot = len(p.elems)
			}
			p.elems = append(p.elems, elem{kind: 'c', r: r})
		}
	}
	if p.dot < 0 {
		return Pattern{}, fmt.Errorf("pattern %q has no dot: write db.table (%%.%% for every table)", s)
	}
	if p.dot == 0 || p.dot == len(p.elems)-1 {
		return Pattern{}, fmt.Errorf("pattern %q lacks a database or a table part: write db.table, with %% for any", s)
	}
	return p, nil
}

// String is the pattern as given.
func (p Pattern) String() string { return p.text }

// Table reports whether the pattern matches table name of database db.
func (p Pattern) Table(db, name string) bool {
	return match(p.elems, []rune(db+"."+name))
}

// Database reports whether the pattern's database part matches db: some
// table of db could match the pattern.
func (p Pattern) Database(db string) bool {
	return match(p.elems[:p.dot], []rune(db))
}

// WholeDatabase reports whether the pattern matches every table of db:
// its database part matches db and its table part is only `%`s (`db.%`).
func (p Pattern) WholeDatabase(db string) bool {
	for _, e := range p.elems[p.dot+1:] {
		if e.kind != '%' {
			return false
		}
	}
	return p.Database(db)
}

// match reports whether the elements match all of s: a backtracking
// matcher that retries only the last `%`, which is enough (the classic
// wildcard algorithm, linear in practice).
func match(elems []elem, s []rune) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(elems) && elems[pi].kind == '%':
			star, mark = pi, si
			pi++
		case pi < len(elems) && (elems[pi].kind == '_' || elems[pi].r == s[si]):
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(elems) && elems[pi].kind == '%' {
		pi++
	}
	return pi == len(elems)
}
