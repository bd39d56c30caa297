package schema

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// rewrite is a statement rewritten so that the TiDB parser accepts it, and
// what the rewriting took out that the catalog still needs.
type rewrite struct {
	text string
	// types maps a column name (lower case) to its real type, for types the
	// parser lacks and that were replaced by a stand-in.
	types       map[string]string
	ifExists    bool // an IF EXISTS the parser does not take was removed
	ifNotExists bool // an IF NOT EXISTS the parser does not take was removed
	orReplace   bool // CREATE OR REPLACE
	// unsupported, if set, says why the statement's effect cannot be modelled
	// even if it parses.
	unsupported string
	// period is the application-time period of a CREATE TABLE (its PERIOD
	// FOR clause, removed), nil if it has none.
	period *period
}

// period is an application-time period: its name and its start and end
// columns.
type period struct{ name, start, end string }

// overlapsMark is the prefix length that marks, in a rewritten key, the
// part that names a period WITHOUT OVERLAPS: "p WITHOUT OVERLAPS" becomes
// "p(2147483647)", which the parser takes and no real prefix has (MariaDB
// keys are at most a few thousand bytes long).
const overlapsMark = math.MaxInt32

// unsupportedPeriods says why a statement with system versioning, or with
// an application-time period outside CREATE TABLE, is not modelled.
const unsupportedPeriods = "system-versioned tables, and application-time periods outside CREATE TABLE, are not modelled"

// standInTypes maps types the TiDB parser lacks (MariaDB's uuid and inet
// types, the spatial types) to a stand-in it knows.
var standInTypes = map[string]string{
	"uuid": "binary(16)", "inet6": "binary(16)", "inet4": "binary(4)",
	"geometry": "blob", "point": "blob", "linestring": "blob", "polygon": "blob",
	"multipoint": "blob", "multilinestring": "blob", "multipolygon": "blob",
	"geometrycollection": "blob", "geomcollection": "blob",
}

// notColumnNames are words that precede a type-like word without being the
// column name it would be the type of.
var notColumnNames = map[string]bool{
	"ADD": true, "COLUMN": true, "MODIFY": true, "CHANGE": true, "EXISTS": true, "TABLE": true,
	"KEY": true, "INDEX": true, "UNIQUE": true, "PRIMARY": true, "CONSTRAINT": true, "FOREIGN": true,
	"FULLTEXT": true, "SPATIAL": true, "CHECK": true, "DEFAULT": true,
}

// rewriteForParser rewrites MariaDB (and some MySQL 8) syntax that the TiDB
// parser rejects into syntax it accepts, keeping what matters for columns
// and keys. It is used only after a statement failed to parse as written,
// so that a statement the parser reads is never changed. Rewrites:
//
//   - CREATE OR REPLACE → CREATE; ALTER ONLINE → ALTER;
//   - IF [NOT] EXISTS where the parser does not take it (ALTER TABLE IF
//     EXISTS, RENAME TABLE IF EXISTS, DROP FOREIGN KEY IF EXISTS, ADD/DROP
//     CONSTRAINT IF [NOT] EXISTS, ...) is removed and remembered;
//   - WAIT n and NOWAIT are removed; FORCE becomes LOCK=DEFAULT;
//   - column attributes INVISIBLE, COMPRESSED[=zlib], IGNORED, NOT IGNORED,
//     SRID n and engine-defined `attr`=value are removed; PERSISTENT → STORED;
//   - uuid, inet4, inet6 and spatial types become binary/blob stand-ins
//     (their real type is kept in rewrite.types); SPATIAL KEY → KEY;
//   - DEFAULT values become NULL, (CONNECTION_ID()) or 0 (the parser
//     rejects many expression defaults; standInDefault); generated column
//     expressions become (0) and CHECK expressions (1);
//   - the table options of CREATE TABLE are cut down to its character set
//     and collation (partitioning and engine options go).
//
// In CREATE TABLE, an application-time period's PERIOD FOR clause is
// removed (rewrite.period keeps it) and a key part "p WITHOUT OVERLAPS"
// becomes p(overlapsMark). System versioning, which adds hidden columns,
// and periods in other statements (ALTER TABLE ... ADD PERIOD, a WITHOUT
// OVERLAPS key added later) are reported as unsupported.
func rewriteForParser(text string, toks []token) rewrite {
	p := &parserRewrite{r: rewrite{types: map[string]string{}}, e: &editor{text: text, toks: toks}, toks: toks}
	if len(toks) > 0 {
		p.first = strings.ToUpper(toks[0].val)
	}
	optStart, optEnd := -1, -1
	if p.first == "CREATE" {
		optStart, optEnd = tableOptionsSpan(toks)
	}
	p.createTable = isCreateTable(toks)
	for i := 0; i < len(toks); i++ {
		if i == optStart {
			p.e.replace(optStart, optEnd-1, p.e.charsetOptions(optStart, optEnd))
			i = optEnd - 1
			continue
		}
		i = p.token(i)
	}
	p.r.text = p.e.String()
	return p.r
}

// parserRewrite is rewriteForParser at work on one statement's tokens.
type parserRewrite struct {
	r           rewrite
	e           *editor
	toks        []token
	first       string // the statement's first word, upper case
	createTable bool   // isCreateTable
}

// at is token j, or a punctuation token past the end.
func (p *parserRewrite) at(j int) token {
	if j < len(p.toks) {
		return p.toks[j]
	}
	return token{kind: tokPunct}
}

// token rewrites what starts at token i outside the table options, and
// returns the index of the last token it consumed.
func (p *parserRewrite) token(i int) int {
	toks, t := p.toks, p.toks[i]
	if t.kind == tokIdent && i+1 < len(toks) && toks[i+1].isPunct("=") {
		end := valueEnd(toks, i+2)
		p.e.replace(i, end, "")
		return end
	}
	if t.isName() && i+2 < len(toks) && toks[i+1].is("WITHOUT") && toks[i+2].is("OVERLAPS") {
		if !p.createTable {
			p.r.unsupported = unsupportedPeriods
		}
		p.e.replace(i, i+2, p.e.text[t.start:t.end]+"("+strconv.Itoa(overlapsMark)+")")
		return i + 2
	}
	if t.kind != tokWord {
		return i
	}
	return p.word(i)
}

// word rewrites what starts at word i, as the list above says, and
// returns the index of the last token it consumed.
func (p *parserRewrite) word(i int) int {
	e, toks := p.e, p.toks
	switch w := strings.ToUpper(toks[i].val); {
	case w == "PERIOD" && p.at(i+1).is("FOR"):
		i = rewritePeriod(e, toks, i, p.createTable, &p.r)
	case w == "VERSIONING" || w == "OVERLAPS" || (w == "ROW" && (p.at(i+1).is("START") || p.at(i+1).is("END"))):
		p.r.unsupported = unsupportedPeriods
	case i == 1 && p.first == "CREATE" && w == "OR" && p.at(i+1).is("REPLACE"):
		e.replace(1, 2, "")
		p.r.orReplace = true
		i = 2
	case i == 1 && p.first == "ALTER" && w == "ONLINE":
		e.replace(1, 1, "")
	case w == "IF" && removableIf(toks, i, p.first):
		end := i + 1
		if p.at(i + 1).is("NOT") {
			end = i + 2
			p.r.ifNotExists = true
		} else {
			p.r.ifExists = true
		}
		e.replace(i, end, "")
		i = end
	case w == "WAIT" && isNumber(p.at(i+1)):
		e.replace(i, i+1, "")
		i++
	case w == "NOWAIT" || w == "INVISIBLE" || w == "IGNORED" || (w == "SPATIAL" && (p.at(i+1).is("KEY") || p.at(i+1).is("INDEX"))):
		e.replace(i, i, "")
	case w == "NOT" && p.at(i+1).is("IGNORED"):
		e.replace(i, i+1, "")
		i++
	case w == "FORCE" && p.first == "ALTER":
		e.replace(i, i, "LOCK=DEFAULT")
	case w == "COMPRESSED":
		end := i
		if p.at(i + 1).isPunct("=") {
			end = i + 2
		}
		e.replace(i, end, "")
		i = end
	case w == "PERSISTENT":
		e.replace(i, i, "STORED")
	case w == "SRID" && isNumber(p.at(i+1)):
		e.replace(i, i+1, "")
		i++
	case standInTypes[strings.ToLower(w)] != "" && isTypePosition(toks, i):
		p.r.types[strings.ToLower(toks[i-1].val)] = strings.ToLower(w)
		e.replace(i, i, standInTypes[strings.ToLower(w)])
	case w == "DEFAULT":
		i = rewriteDefault(e, toks, i)
	case w == "AS" && p.at(i+1).isPunct("(") && !p.at(i+2).is("SELECT") && !p.at(i+2).is("WITH"):
		end := matchParen(toks, i+1)
		e.replace(i+1, end, "(0)")
		i = end
	case w == "CHECK" && p.at(i+1).isPunct("("):
		end := matchParen(toks, i+1)
		e.replace(i+1, end, "(1)")
		i = end
	}
	return i
}

// isCreateTable reports whether toks are a CREATE [OR REPLACE] [TEMPORARY]
// TABLE statement.
func isCreateTable(toks []token) bool {
	i := 1
	if len(toks) > 2 && toks[1].is("OR") && toks[2].is("REPLACE") {
		i = 3
	}
	if i < len(toks) && toks[i].is("TEMPORARY") {
		i++
	}
	return len(toks) > 0 && toks[0].is("CREATE") && i < len(toks) && toks[i].is("TABLE")
}

// rewritePeriod handles the PERIOD FOR at toks[i]: in CREATE TABLE, the
// definition of an application-time period, PERIOD FOR p (start, end), is
// removed with the comma that separates it from the next (or the
// previous) definition, and kept in r.period. A system-time period, one in
// another statement, a second one or one of another shape is unsupported.
// It returns the index of the last token it consumed.
func rewritePeriod(e *editor, toks []token, i int, createTable bool, r *rewrite) int {
	shape := i+7 < len(toks) && toks[i+2].isName() && toks[i+3].isPunct("(") && toks[i+4].isName() &&
		toks[i+5].isPunct(",") && toks[i+6].isName() && toks[i+7].isPunct(")")
	if !createTable || !shape || toks[i+2].is("SYSTEM_TIME") || r.period != nil {
		r.unsupported = unsupportedPeriods
		return i
	}
	r.period = &period{name: toks[i+2].val, start: toks[i+4].val, end: toks[i+6].val}
	start, end := i, i+7
	switch {
	case end+1 < len(toks) && toks[end+1].isPunct(","):
		end++
	case i > 0 && toks[i-1].isPunct(",") && e.pos <= toks[i-1].start:
		start--
	}
	e.replace(start, end, "")
	return end
}

// removableIf reports whether the IF [NOT] EXISTS at toks[i] is one to
// remove: all but those of CREATE/DROP TABLE/DATABASE, which the parser
// takes and whose meaning it keeps.
func removableIf(toks []token, i int, first string) bool {
	if !(i+1 < len(toks) && toks[i+1].is("EXISTS")) && !(i+2 < len(toks) && toks[i+1].is("NOT") && toks[i+2].is("EXISTS")) {
		return false
	}
	if i == 0 {
		return false
	}
	prev := strings.ToUpper(toks[i-1].val)
	if (first == "CREATE" || first == "DROP") && (prev == "TABLE" || prev == "TABLES" || prev == "DATABASE" || prev == "SCHEMA") {
		return false
	}
	return true
}

// rewriteDefault handles the DEFAULT at toks[i]: the value of a column's
// DEFAULT or of ALTER COLUMN ... SET DEFAULT becomes its standInDefault,
// and DEFAULT CHARSET, DROP DEFAULT and ON DELETE SET DEFAULT stay. It returns
// the index of the last token it consumed.
func rewriteDefault(e *editor, toks []token, i int) int {
	if i+1 >= len(toks) {
		return i
	}
	nx := toks[i+1]
	if nx.is("CHARSET") || nx.is("CHARACTER") || nx.is("COLLATE") || nx.isPunct("=") ||
		nx.isPunct(",") || nx.isPunct(")") || nx.is("ON") {
		return i
	}
	if i > 0 && toks[i-1].is("DROP") {
		return i
	}
	end := valueEnd(toks, i+1)
	if i > 0 && toks[i-1].is("SET") {
		if i >= 2 && (toks[i-2].is("DELETE") || toks[i-2].is("UPDATE") || toks[i-2].is("CHARACTER")) {
			return i
		}
		e.replace(i+1, end, standInDefault(toks[i+1:end+1]))
		return end
	}
	e.replace(i+1, end, standInDefault(toks[i+1:end+1]))
	return end
}

// standInDefault is what a DEFAULT value becomes: something the parser
// takes that keeps what the catalog reads of a default (whether it is
// NULL, whether it calls CONNECTION_ID()), and nothing else.
func standInDefault(value []token) string {
	switch {
	case len(value) == 1 && value[0].is("NULL"):
		return "NULL"
	case slices.ContainsFunc(value, func(t token) bool { return t.is("CONNECTION_ID") }):
		return "(CONNECTION_ID())"
	}
	return "0"
}

// isTypePosition reports whether toks[i] stands where a column definition
// has its type: right after the column name, which follows "(", ",", ADD,
// COLUMN, MODIFY, IF EXISTS, or the old name of CHANGE.
func isTypePosition(toks []token, i int) bool {
	if i < 2 || !toks[i-1].isName() || (toks[i-1].kind == tokWord && notColumnNames[strings.ToUpper(toks[i-1].val)]) {
		return false
	}
	if i+1 < len(toks) && (toks[i+1].isPunct("(") || toks[i+1].isPunct(".")) {
		return false
	}
	p := toks[i-2]
	if p.isPunct("(") || p.isPunct(",") || p.is("ADD") || p.is("COLUMN") || p.is("MODIFY") || p.is("EXISTS") {
		return true
	}
	return p.isName() && i >= 3 && (toks[i-3].is("CHANGE") || toks[i-3].is("COLUMN") || toks[i-3].is("EXISTS"))
}

// tableOptionsSpan returns the token range [start, end) of the table options
// of a CREATE TABLE with a column list: after the list's closing
// parenthesis, up to a SELECT part or the end. (-1, -1) if there is none.
func tableOptionsSpan(toks []token) (int, int) {
	i := 1
	for i < len(toks) && !toks[i].is("TABLE") {
		if toks[i].isPunct("(") {
			return -1, -1
		}
		i++
	}
	i++
	if i+2 < len(toks) && toks[i].is("IF") {
		i += 3 // IF NOT EXISTS
	}
	if _, next, ok := qualifiedName(toks, i, ""); ok {
		i = next
	}
	if i >= len(toks) || !toks[i].isPunct("(") {
		return -1, -1
	}
	start := matchParen(toks, i) + 1
	end := start
	depth := 0
	for ; end < len(toks); end++ {
		t := toks[end]
		switch {
		case t.isPunct("("):
			if end+1 < len(toks) && (toks[end+1].is("SELECT") || toks[end+1].is("WITH")) && depth == 0 {
				return spanOrNone(start, end)
			}
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && (t.is("SELECT") || t.is("AS") || t.is("WITH") || t.is("IGNORE") || t.is("REPLACE")):
			return spanOrNone(start, end)
		}
	}
	return spanOrNone(start, end)
}

func spanOrNone(start, end int) (int, int) {
	if start >= end {
		return -1, -1
	}
	return start, end
}

// matchParen returns the index of the ")" matching the "(" at toks[i], or
// the last index if it is unbalanced.
func matchParen(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch {
		case toks[j].isPunct("("):
			depth++
		case toks[j].isPunct(")"):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(toks) - 1
}

// valueEnd returns the index of the last token of the value (literal,
// function call, parenthesized expression) that starts at toks[i].
func valueEnd(toks []token, i int) int {
	if i >= len(toks) {
		return len(toks) - 1
	}
	t := toks[i]
	more := func(k int) bool { return i+k < len(toks) }
	switch {
	case t.isPunct("("):
		return matchParen(toks, i)
	case t.isPunct("-") || t.isPunct("+"):
		return valueEnd(toks, i+1)
	case t.isPunct(".") && more(1) && isNumber(toks[i+1]):
		return i + 1
	case t.kind == tokWord && more(1) && toks[i+1].isPunct("("):
		return matchParen(toks, i+1)
	case t.kind == tokWord && more(1) && toks[i+1].kind == tokString && toks[i+1].start == t.end:
		return i + 1 // _utf8mb4'x', N'x', X'0f', b'01'
	case isNumber(t) && more(2) && toks[i+1].isPunct(".") && toks[i+1].start == t.end:
		return i + 2 // 0.00
	}
	return i
}

func isNumber(t token) bool {
	if t.kind != tokWord || t.val == "" {
		return false
	}
	for i := 0; i < len(t.val); i++ {
		if t.val[i] < '0' || t.val[i] > '9' {
			return false
		}
	}
	return true
}

// editor rebuilds a statement from its tokens, replacing ranges of them.
// Replacements must come in increasing, non-overlapping order.
type editor struct {
	text string
	toks []token
	b    strings.Builder
	pos  int // byte offset of text copied so far
}

// replace replaces tokens i..j (inclusive) with s.
func (e *editor) replace(i, j int, s string) {
	e.b.WriteString(e.text[e.pos:e.toks[i].start])
	e.b.WriteString(" " + s + " ")
	e.pos = e.toks[j].end
}

func (e *editor) String() string {
	e.b.WriteString(e.text[e.pos:])
	return e.b.String()
}

// charsetOptions returns the character set and collation among the table
// options toks[start:end], as options the parser accepts.
func (e *editor) charsetOptions(start, end int) string {
	var out []string
	for i := start; i < end; i++ {
		var opt string
		switch {
		case e.toks[i].is("CHARSET"):
			opt = "DEFAULT CHARSET="
		case e.toks[i].is("CHARACTER") && i+1 < end && e.toks[i+1].is("SET"):
			opt = "DEFAULT CHARSET="
			i++
		case e.toks[i].is("COLLATE"):
			opt = "COLLATE="
		default:
			continue
		}
		if i+1 < end && e.toks[i+1].isPunct("=") {
			i++
		}
		if i+1 < end {
			i++
			out = append(out, opt+e.text[e.toks[i].start:e.toks[i].end])
		}
	}
	return strings.Join(out, " ")
}
