package clone

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/schema"
)

// ddl is a definition as the target runs it: in database schema, with
// the session settings the source created it with (sql_mode, and for an
// event its time zone), as mariadb-dump writes them before it.
type ddl struct {
	what     string // "table app.t", "view app.v": for errors
	schema   string // the default database, on the target
	query    string
	sqlMode  string // "" to leave the session's
	timeZone string
}

// show runs a SHOW CREATE statement on conn and returns its row by
// column name.
func show(ctx context.Context, conn *sql.Conn, q string) (map[string]string, error) {
	cols, vals, err := firstRow(ctx, conn.QueryContext, q)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(cols))
	for i, c := range cols {
		out[c] = vals[i]
	}
	return out, nil
}

// autoIncrement matches the AUTO_INCREMENT table option, which moves as
// the source inserts rows: a definition compared across runs leaves it out.
var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// definition is a table's definition read on the source.
type definition struct {
	// shown is SHOW CREATE TABLE's text without AUTO_INCREMENT: a resumed
	// clone compares it with what it created the table from.
	shown string
	// create creates the table on the target without the indexes in
	// indexes, which are added once its rows are in.
	create  ddl
	indexes []string
	// implicitPeriod: a system-versioned table whose row_start and row_end
	// are not columns of its own (WITH SYSTEM VERSIONING alone).
	implicitPeriod bool
}

// readDefinition reads t's definition on the source and makes the target's
// of it: renamed under rules, without its secondary indexes when defer is
// set (all but the key keep names, which chunks are read by).
func readDefinition(ctx context.Context, conn *sql.Conn, t *table, keep string, deferIndexes bool, rules *filter.Rules) (*definition, error) {
	what := "TABLE"
	if t.typ == sequence {
		what = "SEQUENCE" // its options, which a table's definition of it lacks
	}
	row, err := show(ctx, conn, "SHOW CREATE "+what+" "+quoteTable(t.src.Schema, t.src.Name))
	if err != nil {
		return nil, fmt.Errorf("table %s: SHOW CREATE %s: %w", t, what, err)
	}
	text := row["Create Table"]
	d := &definition{shown: autoIncrement.ReplaceAllString(text, "")}
	if t.typ == versioned {
		d.implicitPeriod = !strings.Contains(text, "PERIOD FOR SYSTEM_TIME")
		if strings.Contains(strings.ToLower(text), "bigint(20) unsigned generated always as row start") {
			return nil, fmt.Errorf("table %s is system-versioned by transaction id (a ROW START column of BIGINT UNSIGNED): "+
				"its history cannot be inserted on another server; leave it out with --exclude and copy it by hand", t)
		}
	}
	if deferIndexes && keep != "" && t.typ == baseTable && !strings.Contains(text, "FOREIGN KEY") {
		text, d.indexes = splitIndexes(text, keep)
	}
	if d.create, err = renamed(ddl{what: "table " + t.String(), schema: t.src.Schema, query: text}, rules); err != nil {
		return nil, err
	}
	return d, nil
}

// indexLine matches a secondary index of SHOW CREATE TABLE's text (one a
// line), with its name.
var indexLine = regexp.MustCompile("^  (?:UNIQUE |FULLTEXT |SPATIAL )?KEY `((?:[^`]|``)*)`")

// splitIndexes returns create, the text of SHOW CREATE TABLE, without its
// secondary indexes but keep, and those indexes' definitions.
func splitIndexes(create, keep string) (string, []string) {
	lines := strings.Split(create, "\n")
	var kept []string
	var indexes []string
	for i, l := range lines {
		m := indexLine.FindStringSubmatch(l)
		if i == 0 || m == nil || strings.ReplaceAll(m[1], "``", "`") == keep {
			kept = append(kept, l)
			continue
		}
		indexes = append(indexes, strings.TrimSuffix(strings.TrimSpace(l), ","))
	}
	// The body's last line loses its comma: it may have been followed by
	// an index.
	for i := len(kept) - 1; i > 0; i-- {
		if strings.HasPrefix(kept[i], ")") {
			kept[i-1] = strings.TrimSuffix(kept[i-1], ",")
			break
		}
	}
	return strings.Join(kept, "\n"), indexes
}

// addIndexes are the statements that add indexes (splitIndexes') to
// table db.name: one for all but the FULLTEXT ones, one for each of those
// (InnoDB builds one FULLTEXT index at a time).
func addIndexes(db, name string, indexes []string) []string {
	var plain []string
	var out []string
	for _, ix := range indexes {
		if strings.HasPrefix(ix, "FULLTEXT ") {
			out = append(out, "ALTER TABLE "+quoteTable(db, name)+" ADD "+ix)
			continue
		}
		plain = append(plain, "ADD "+ix)
	}
	if plain != nil {
		out = append([]string{"ALTER TABLE " + quoteTable(db, name) + " " + strings.Join(plain, ", ")}, out...)
	}
	return out
}

// renamed returns d as the target runs it under rules: its default
// database renamed, and the databases it names (schema.RenameDatabases,
// as replicate renames DDL; an error where a name cannot be proved one).
func renamed(d ddl, rules *filter.Rules) (ddl, error) {
	d.schema, _ = rules.Database(d.schema)
	if len(rules.Rewrites) == 0 {
		return d, nil
	}
	q, err := schema.RenameDatabases(d.query, rules.Database)
	if err != nil {
		return d, fmt.Errorf("%s: cannot rename the databases its definition names (--rewrite-db): %w; create it on the target by hand, or leave it out with --exclude", d.what, err)
	}
	d.query = q
	return d, nil
}

// orReplace makes a CREATE statement CREATE OR REPLACE, so that a clone
// run again creates the object again whatever the last run left.
func orReplace(q string) string {
	if rest, ok := strings.CutPrefix(q, "CREATE "); ok && !strings.HasPrefix(rest, "OR REPLACE ") {
		return "CREATE OR REPLACE " + rest
	}
	return q
}

// objectDefinition reads o's definition on the source and makes the
// target's: CREATE OR REPLACE, renamed under rules, an event kept on the
// target as MariaDB's replica keeps it (DISABLE ON SLAVE).
func objectDefinition(ctx context.Context, conn *sql.Conn, o object, rules *filter.Rules) (ddl, error) {
	if o.kind == "TRIGGER" {
		return triggerDefinition(ctx, conn, o, rules)
	}
	row, err := show(ctx, conn, "SHOW CREATE "+o.kind+" "+quoteTable(o.schema, o.name))
	if err != nil {
		return ddl{}, fmt.Errorf("%s: SHOW CREATE %s: %w", o, o.kind, err)
	}
	d := ddl{what: o.String(), schema: o.schema, sqlMode: row["sql_mode"], timeZone: row["time_zone"]}
	switch o.kind {
	case "VIEW":
		d.query = row["Create View"]
	case "PROCEDURE":
		d.query = row["Create Procedure"]
	case "FUNCTION":
		d.query = row["Create Function"]
	case "EVENT":
		d.query = row["Create Event"]
	}
	if d.query == "" {
		return ddl{}, fmt.Errorf("%s: SHOW CREATE %s shows no definition (does the source account lack the privilege to see it?)", o, o.kind)
	}
	d.query = orReplace(d.query)
	if o.kind == "EVENT" {
		if q, ok := schema.ReplicaEvent(d.query); ok {
			d.query = q
		}
	}
	return renamed(d, rules)
}

// triggerDefinition makes trigger o's definition from information_schema:
// its table and its own name unqualified (in its database, renamed or
// not), where the statement the source was given may name the database;
// only its body is renamed (schema.RenameDatabases).
func triggerDefinition(ctx context.Context, conn *sql.Conn, o object, rules *filter.Rules) (ddl, error) {
	cols, vals, err := firstRow(ctx, func(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
		return conn.QueryContext(ctx, q, o.schema, o.name)
	}, "SELECT DEFINER, ACTION_TIMING, EVENT_MANIPULATION, EVENT_OBJECT_TABLE, ACTION_STATEMENT, SQL_MODE "+
		"FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? AND TRIGGER_NAME = ?")
	if err != nil || len(cols) != 6 {
		return ddl{}, fmt.Errorf("%s: reading it in information_schema.TRIGGERS: %w", o, err)
	}
	user, host := vals[0], ""
	if i := strings.LastIndex(user, "@"); i >= 0 {
		user, host = user[:i], user[i+1:]
	}
	q := fmt.Sprintf("CREATE OR REPLACE DEFINER=%s@%s TRIGGER %s %s %s ON %s FOR EACH ROW %s",
		quote(user), quote(host), quote(o.name), vals[1], vals[2], quote(vals[3]), vals[4])
	return renamed(ddl{what: o.String(), schema: o.schema, query: q, sqlMode: vals[5]}, rules)
}

// run runs d on conn, a session of its own: in its database, with its
// settings.
func (d ddl) run(ctx context.Context, conn *sql.Conn) error {
	tz := d.timeZone
	if tz == "" {
		tz = "+00:00"
	}
	// A table's definition was shown under the source session's settings;
	// the empty sql_mode takes any default it shows (a zero date).
	qs := []string{"USE " + quote(d.schema), "SET SESSION sql_mode = " + literal(d.sqlMode), "SET SESSION time_zone = " + literal(tz), d.query}
	for _, q := range qs {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("creating %s on the target: %w", d.what, err)
		}
	}
	return nil
}

// literal is s as a quoted string literal.
func literal(s string) string {
	return "'" + string(appendEscaped(nil, []byte(s), &literalEscapes)) + "'"
}
