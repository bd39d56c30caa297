package schema

import "strings"

// leadingWord is the first word of query when nothing but blanks comes
// before it, "" when a comment (or anything else) does.
func leadingWord(query string) string {
	s := strings.TrimLeft(query, " \t\r\n")
	end := 0
	for end < len(s) && (s[end] >= 'A' && s[end] <= 'Z' || s[end] >= 'a' && s[end] <= 'z') {
		end++
	}
	if end == 0 || end < len(s) && s[end] != ' ' && s[end] != '\t' && s[end] != '\r' && s[end] != '\n' && s[end] != '(' && s[end] != '/' {
		return ""
	}
	return s[:end]
}

// TemporaryChange is what a statement does to the temporary tables of
// its session: CREATE TEMPORARY TABLE makes one, DROP TEMPORARY TABLE (and
// a DROP TABLE, which drops a session's temporary table of the name
// first: MariaDB logs it as DROP TEMPORARY TABLE) drops them.
type TemporaryChange struct {
	Created []TableName
	// Dropped are the tables a DROP names; Temporary says the DROP said
	// TEMPORARY (it drops no base table).
	Dropped   []TableName
	Temporary bool
}

// TemporaryTables reads what query, run with currentSchema as the
// default database, does to its session's temporary tables, from its
// leading words (versioned comments opened, a SET STATEMENT ... FOR prefix
// read past): CREATE [OR REPLACE] TEMPORARY TABLE|SEQUENCE [IF NOT EXISTS]
// name, DROP [TEMPORARY] TABLE|SEQUENCE [IF EXISTS] name[, name ...] (a
// temporary sequence is a temporary table). Any other statement changes
// none.
func TemporaryTables(currentSchema, query string) TemporaryChange {
	var c TemporaryChange
	if w := leadingWord(query); w != "" && !strings.EqualFold(w, "CREATE") && !strings.EqualFold(w, "DROP") && !strings.EqualFold(w, "SET") {
		return c // most statements: no need to read them whole
	}
	text := cleanQuery(query)
	toks := tokenize(text)
	if body, ok := setStatementBody(text, toks); ok {
		return TemporaryTables(currentSchema, body)
	}
	if len(toks) < 3 {
		return c
	}
	verb := toks[0]
	i := 1
	temporary := false
	for i < len(toks) && (toks[i].is("OR") || toks[i].is("REPLACE") || toks[i].is("TEMPORARY")) {
		temporary = temporary || toks[i].is("TEMPORARY")
		i++
	}
	if i >= len(toks) || !toks[i].is("TABLE") && !toks[i].is("SEQUENCE") {
		return c
	}
	i = skipIfExists(toks, i+1)
	switch {
	case verb.is("CREATE") && temporary:
		if n, _, ok := qualifiedName(toks, i, currentSchema); ok {
			c.Created = []TableName{n}
		}
	case verb.is("DROP"):
		c.Temporary = temporary
		for {
			n, j, ok := qualifiedName(toks, i, currentSchema)
			if !ok {
				break
			}
			c.Dropped = append(c.Dropped, n)
			if j >= len(toks) || !toks[j].isPunct(",") {
				break
			}
			i = j + 1
		}
	}
	return c
}

// Mentions reports whether query names one of tables anywhere in its
// text (as a LIKE source, in a subquery, in a join): an identifier equal
// to a table's name, qualified by its schema, or unqualified with
// currentSchema its schema. It reads more than StatementSubjects and may
// take a column or an alias of the same name for the table: a caller
// that routes a statement to the session holding a temporary table then
// runs it there, where it runs as on the source anyway.
func Mentions(currentSchema, query string, tables map[TableName]bool) bool {
	toks := tokenize(cleanQuery(query))
	for i, t := range toks {
		if !t.isName() {
			continue
		}
		if i+2 < len(toks) && toks[i+1].isPunct(".") && toks[i+2].isName() && tables[TableName{t.val, toks[i+2].val}] {
			return true
		}
		if (i == 0 || !toks[i-1].isPunct(".")) && tables[TableName{currentSchema, t.val}] {
			return true
		}
	}
	return false
}
