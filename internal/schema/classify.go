package schema

import (
	"slices"
	"strings"
)

// noOpStatements are the first words of statements that never change a
// table definition.
var noOpStatements = map[string]bool{
	"SET": true, "GRANT": true, "REVOKE": true, "BEGIN": true, "START": true, "COMMIT": true,
	"ROLLBACK": true, "SAVEPOINT": true, "RELEASE": true, "XA": true, "LOCK": true, "UNLOCK": true,
	"FLUSH": true, "RESET": true, "PURGE": true, "INSERT": true, "UPDATE": true, "DELETE": true,
	"REPLACE": true, "SELECT": true, "WITH": true, "LOAD": true, "CALL": true, "DO": true,
	"HANDLER": true, "ANALYZE": true, "OPTIMIZE": true, "REPAIR": true, "CHECK": true,
	"CHECKSUM": true, "INSTALL": true, "UNINSTALL": true, "KILL": true, "SHOW": true,
	"DESCRIBE": true, "DESC": true, "EXPLAIN": true, "HELP": true, "PREPARE": true,
	"EXECUTE": true, "DEALLOCATE": true, "SIGNAL": true, "RESIGNAL": true, "GET": true,
	"CACHE": true, "BINLOG": true, "CHANGE": true, "STOP": true, "SHUTDOWN": true, "BACKUP": true,
	"VALUES": true, "TABLE": true, "USE": true, "TRUNCATE": true,
}

// tableObjects are the object words after CREATE, ALTER or DROP that name
// something whose definition this package follows.
var tableObjects = map[string]bool{"TABLE": true, "TABLES": true, "INDEX": true, "DATABASE": true, "SCHEMA": true}

// otherObjects are the object words after CREATE, ALTER, DROP or RENAME
// that name something else.
var otherObjects = map[string]bool{
	"VIEW": true, "TRIGGER": true, "PROCEDURE": true, "FUNCTION": true, "EVENT": true, "USER": true,
	"ROLE": true, "SERVER": true, "SEQUENCE": true, "PACKAGE": true, "TABLESPACE": true,
	"LOGFILE": true, "INSTANCE": true, "RESOURCE": true, "REFERENCE": true, "PREPARE": true,
}

// mayChangeTables reports whether a statement may change a table or
// database definition and so must be parsed. Statements that certainly do
// not (see noOpStatements; CREATE VIEW, TRIGGER, PROCEDURE...; temporary
// tables) are not parsed at all, which also spares routine bodies the TiDB
// parser cannot read. A statement it does not recognize is parsed.
func mayChangeTables(toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	if toks[0].kind != tokWord {
		return !toks[0].isPunct("(") // "(SELECT ...)" is a query
	}
	first := strings.ToUpper(toks[0].val)
	switch first {
	case "CREATE", "ALTER", "DROP", "RENAME":
		temporary := false
		for _, t := range toks[1:] {
			if t.kind != tokWord {
				continue
			}
			w := strings.ToUpper(t.val)
			switch {
			case w == "TEMPORARY":
				temporary = true
			case tableObjects[w]:
				return !temporary
			case otherObjects[w]:
				return false
			}
		}
		return true
	}
	return !noOpStatements[first]
}

// setStatementBody returns the statement after MariaDB's "SET STATEMENT
// var=value[, ...] FOR" prefix, which runs it with session variables set;
// false if text has no such prefix.
func setStatementBody(text string, toks []token) (string, bool) {
	if len(toks) < 2 || !toks[0].is("SET") || !toks[1].is("STATEMENT") {
		return "", false
	}
	depth := 0
	for _, t := range toks[2:] {
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && t.is("FOR"):
			return text[t.end:], true
		}
	}
	return "", false
}

// tableWords are the words after which a statement names a table.
var tableWords = map[string]bool{
	"TABLE": true, "TABLES": true, "REFERENCES": true, "ON": true, "TO": true, "LIKE": true,
	"INTO": true, "FROM": true, "JOIN": true,
}

// notTables are words that follow a tableWord without being a table name.
var notTables = map[string]bool{
	"DELETE": true, "UPDATE": true, "DUPLICATE": true, "SELECT": true, "VALUES": true, "SET": true,
	"IF": true, "NOT": true, "EXISTS": true, "WHERE": true, "DEFAULT": true, "NULL": true,
	"COLUMN": true, "INDEX": true, "KEY": true, "TABLE": true, "WAIT": true, "NOWAIT": true,
	"LOCK": true, "COMMIT": true, "SCHEDULE": true, "COMPLETION": true,
}

// scanTables finds, without parsing, the tables a statement may touch: a
// (qualified) name after TABLE, TABLES, REFERENCES, ON, TO, LIKE, INTO, FROM
// or JOIN, the names of a comma-separated list after one of those, and any
// identifier that names a table the catalog has or marks Unknown
// (qualified, or in cur). It errs on the side of finding too much.
func scanTables(toks []token, cur string, c *Catalog) []TableName {
	found := map[TableName]bool{}
	known := func(n TableName) bool { return c.tables[n] != nil || c.unknown[n] }
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.isName() {
			continue
		}
		// A known table, named anywhere.
		if i+2 < len(toks) && toks[i+1].isPunct(".") && toks[i+2].isName() {
			if n := (TableName{t.val, toks[i+2].val}); known(n) {
				found[n] = true
			}
		}
		if n := (TableName{cur, t.val}); known(n) {
			found[n] = true
		}
		if t.kind != tokWord || !tableWords[strings.ToUpper(t.val)] {
			continue
		}
		// Names in table position.
		j := i + 1
		for j < len(toks) && (toks[j].is("IF") || toks[j].is("NOT") || toks[j].is("EXISTS")) {
			j++
		}
		for {
			n, next, ok := qualifiedName(toks, j, cur)
			if !ok {
				break
			}
			found[n] = true
			if next >= len(toks) || !toks[next].isPunct(",") {
				break
			}
			j = next + 1
		}
	}
	out := make([]TableName, 0, len(found))
	for n := range found {
		out = append(out, n)
	}
	slices.SortFunc(out, TableName.Compare)
	return out
}

// qualifiedName reads "name" or "schema.name" at toks[i].
func qualifiedName(toks []token, i int, cur string) (TableName, int, bool) {
	if i >= len(toks) || !toks[i].isName() || (toks[i].kind == tokWord && notTables[strings.ToUpper(toks[i].val)]) {
		return TableName{}, i, false
	}
	if i+2 < len(toks) && toks[i+1].isPunct(".") && toks[i+2].isName() {
		return TableName{toks[i].val, toks[i+2].val}, i + 3, true
	}
	return TableName{cur, toks[i].val}, i + 1, true
}
