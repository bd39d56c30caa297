package schema

import (
	"fmt"
	"strings"
)

// leadingSubjects reads what a statement the TiDB parser rejects changes
// from its leading words, for the forms whose subject they name:
//
//	CREATE|ALTER|DROP [OR REPLACE] [DEFINER = u] [...] TRIGGER|EVENT|FUNCTION|PROCEDURE [IF [NOT] EXISTS] [db.]name
//	CREATE|ALTER|DROP|TRUNCATE|RENAME [...] TABLE|TABLES|VIEW|SEQUENCE [IF [NOT] EXISTS] name [, name | TO name ...]
//	CREATE|DROP [...] INDEX [IF [NOT] EXISTS] name ... ON table
//	CREATE|ALTER|DROP DATABASE|SCHEMA [IF [NOT] EXISTS] name
//
// A trigger's subject is its table (ON table) when the statement names
// it, else the database it is in; a stored program's, its database.
// Anything else is ErrUnparsed.
func leadingSubjects(cur string, toks []token) (Subjects, error) {
	if len(toks) == 0 || toks[0].kind != tokWord {
		return Subjects{}, cannotTell("it does not start with a word")
	}
	verb := strings.ToUpper(toks[0].val)
	switch verb {
	case "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE":
	case "ANALYZE", "OPTIMIZE", "REPAIR", "CHECK":
		return tableMaintenance(cur, toks)
	case "INSTALL", "UNINSTALL":
		return Subjects{}, nil // plugins: the server's, no table's
	default:
		return Subjects{}, cannotTell(verb + " statements are not read without the parser")
	}
	object, i, err := leadingObject(toks, verb)
	if err != nil {
		return Subjects{}, err
	}
	i = skipIfExists(toks, i)
	name, i, ok := qualifiedName(toks, i, cur)
	if !ok {
		return Subjects{}, cannotTell("no name after " + verb + " " + object)
	}
	return objectSubjects(cur, toks, i, verb, object, name)
}

// cannotTell is the ErrUnparsed for a statement whose leading words do not
// say what it changes, and why.
func cannotTell(why string) error {
	return fmt.Errorf("%w: cannot tell what the statement changes: %s", ErrUnparsed, why)
}

// leadingObject reads the kind of object (TABLE, INDEX, TRIGGER, ...) verb
// acts on, after its modifiers, and the index of the token after it.
func leadingObject(toks []token, verb string) (string, int, error) {
	i := skipModifiers(toks, 1)
	object := "TABLE" // TRUNCATE t
	if i < len(toks) && toks[i].kind == tokWord {
		switch w := strings.ToUpper(toks[i].val); w {
		case "TABLE", "TABLES", "VIEW", "SEQUENCE", "INDEX", "DATABASE", "SCHEMA", "TRIGGER", "EVENT", "FUNCTION", "PROCEDURE":
			object = w
			i++
		default:
			if verb != "TRUNCATE" {
				return "", 0, cannotTell(verb + " " + w)
			}
		}
	}
	return object, i, nil
}

// objectSubjects reads what a statement verb on object named name changes;
// the tokens after the name start at i.
func objectSubjects(cur string, toks []token, i int, verb, object string, name TableName) (Subjects, error) {
	var s Subjects
	switch object {
	case "DATABASE", "SCHEMA":
		// The name read as a table name is the database's.
		s.database(name.Name)
	case "EVENT", "FUNCTION", "PROCEDURE":
		s.database(name.Schema)
		if j := indexWord(toks, i, "RENAME"); j >= 0 && verb == "ALTER" {
			if to, _, ok := qualifiedName(toks, skipWords(toks, j+1, "TO"), cur); ok {
				s.database(to.Schema)
			}
		}
	case "TRIGGER":
		if j := indexWord(toks, i, "ON"); j >= 0 && verb == "CREATE" {
			if t, _, ok := qualifiedName(toks, j+1, cur); ok {
				s.add(t)
				break
			}
		}
		s.database(name.Schema)
	case "INDEX":
		j := indexWord(toks, i, "ON")
		t, _, ok := qualifiedName(toks, j+1, cur)
		if j < 0 || !ok {
			return Subjects{}, cannotTell("no table after ON")
		}
		s.add(t)
	default:
		return tableSubjects(cur, toks, i, verb, name)
	}
	return s, nil
}

// tableSubjects reads the tables, views or sequences a statement verb
// names, name first: a list, or pairs with TO, or for ALTER the names it
// renames to. The tokens after name start at i.
func tableSubjects(cur string, toks []token, i int, verb string, name TableName) (Subjects, error) {
	var s Subjects
	s.add(name)
	if verb == "ALTER" {
		// ALTER TABLE t ..., RENAME [TO|AS] u (not RENAME COLUMN, INDEX, KEY)
		for j := indexWord(toks, i, "RENAME"); j >= 0; j = indexWord(toks, j+1, "RENAME") {
			if j+1 < len(toks) && (toks[j+1].is("COLUMN") || toks[j+1].is("INDEX") || toks[j+1].is("KEY")) {
				continue
			}
			to, _, ok := qualifiedName(toks, skipWords(toks, j+1, "TO", "AS"), cur)
			if !ok {
				return Subjects{}, cannotTell("no name after RENAME")
			}
			s.add(to)
		}
		return s, nil
	}
	for i < len(toks) && (toks[i].isPunct(",") || toks[i].is("TO")) {
		n, j, ok := qualifiedName(toks, i+1, cur)
		if !ok {
			return Subjects{}, cannotTell("a list of names that does not parse")
		}
		s.add(n)
		i = j
	}
	return s, nil
}

// tableMaintenance reads ANALYZE, OPTIMIZE, REPAIR or CHECK
// [NO_WRITE_TO_BINLOG | LOCAL] TABLE t [, t ...].
func tableMaintenance(cur string, toks []token) (Subjects, error) {
	var s Subjects
	i := skipWords(toks, 1, "NO_WRITE_TO_BINLOG", "LOCAL", "TABLE")
	for {
		n, j, ok := qualifiedName(toks, i, cur)
		if !ok {
			return Subjects{}, cannotTell("no table after " + strings.ToUpper(toks[0].val) + " TABLE")
		}
		s.add(n)
		if j >= len(toks) || !toks[j].isPunct(",") {
			return s, nil
		}
		i = j + 1
	}
}

// skipModifiers skips the words between a statement's verb and the kind
// of object it acts on: OR REPLACE, DEFINER = user, ALGORITHM = x, SQL
// SECURITY x, ONLINE, IGNORE, TEMPORARY, UNIQUE, FULLTEXT, SPATIAL,
// AGGREGATE.
func skipModifiers(toks []token, i int) int {
	for i < len(toks) {
		t := toks[i]
		switch {
		case t.is("OR") && i+1 < len(toks) && toks[i+1].is("REPLACE"):
			i += 2
		case (t.is("DEFINER") || t.is("ALGORITHM")) && i+1 < len(toks) && toks[i+1].isPunct("="):
			i += 2
			// user, 'user'@'host', CURRENT_USER[()]
			for i < len(toks) && (toks[i].kind != tokWord || !objectWord(toks[i])) {
				i++
			}
		case t.is("SQL") && i+1 < len(toks) && toks[i+1].is("SECURITY"):
			i += 3
		case t.is("ONLINE"), t.is("IGNORE"), t.is("TEMPORARY"), t.is("UNIQUE"), t.is("FULLTEXT"),
			t.is("SPATIAL"), t.is("AGGREGATE"):
			i++
		default:
			return i
		}
	}
	return i
}

// objectWord reports whether t names a kind of object (the word that
// ends a DEFINER clause).
func objectWord(t token) bool {
	switch strings.ToUpper(t.val) {
	case "TABLE", "VIEW", "SEQUENCE", "TRIGGER", "EVENT", "FUNCTION", "PROCEDURE", "SQL", "ALGORITHM", "AGGREGATE":
		return true
	}
	return false
}

func skipIfExists(toks []token, i int) int {
	return skipWords(toks, i, "IF", "NOT", "EXISTS")
}

func skipWords(toks []token, i int, words ...string) int {
	for i < len(toks) {
		skip := false
		for _, w := range words {
			skip = skip || toks[i].is(w)
		}
		if !skip {
			return i
		}
		i++
	}
	return i
}

// indexWord is the index of the first word w at parenthesis depth 0 from
// i, or -1.
func indexWord(toks []token, i int, w string) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch {
		case toks[i].isPunct("("):
			depth++
		case toks[i].isPunct(")"):
			depth--
		case depth == 0 && toks[i].is(w):
			return i
		}
	}
	return -1
}
