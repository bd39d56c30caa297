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
// leading words (versioned comments opened): CREATE [OR REPLACE]
// TEMPORARY TABLE [IF NOT EXISTS] name, DROP [TEMPORARY] TABLE [IF EXISTS]
// name[, name ...]. Any other statement changes none.
func TemporaryTables(currentSchema, query string) TemporaryChange {
	var c TemporaryChange
	if w := leadingWord(query); w != "" && !strings.EqualFold(w, "CREATE") && !strings.EqualFold(w, "DROP") {
		return c // most statements: no need to read them whole
	}
	toks := tokenize(cleanQuery(query))
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
	if i >= len(toks) || !toks[i].is("TABLE") {
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
