package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// At a checkpoint the harness takes a snapshot of each server: every
// schema object outside the system schemas, with what identifies its
// content, and compares each replica's with the source's. It keeps to what
// a replica must reproduce: definitions, rows (through CHECKSUM TABLE
// EXTENDED, confirmed row by row when it differs, since a checksum can
// differ on equal rows), history rows of system-versioned tables, sequence
// states, and triggers, routines and events. What depends on when a
// server did something (AUTO_INCREMENT counters, creation times, an
// event's status) is left out.

// mtrSkipSchemas are never compared: the servers' own schemas, paraply's
// bookkeeping on its target and mysql-test-run's helper schema.
var mtrSkipSchemas = []string{"mysql", "information_schema", "performance_schema", "sys", "paraply", "mtr"}

// mtrSchemaFilter is the SQL list of mtrSkipSchemas.
var mtrSchemaFilter = "('" + strings.Join(mtrSkipSchemas, "','") + "')"

// mtrObject is what the harness compares of one schema object.
type mtrObject struct {
	schema, name string
	kind         string // database, table, versioned, sequence, view, trigger, routine or event
	def          string // the definition, or the error reading it
	rows         int64  // tables: COUNT(*)
	sum          string // tables: CHECKSUM TABLE EXTENDED; versioned tables also the digest of FOR SYSTEM_TIME ALL; sequences: their row
	// locked: the object could not be read on the source because the
	// test holds a lock on it there, so it is not compared.
	locked bool
	// transactionIDs are the period columns of a table versioned by
	// transaction IDs, which are each server's own and not compared.
	transactionIDs []string
}

// mtrSnapshot maps "`db`.`name` kind" to the object.
type mtrSnapshot map[string]mtrObject

// autoIncrement is the table option a replica need not reproduce: the
// counter follows the rows it inserted, not the source's history.
var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// oldFormatMark is how SHOW CREATE TABLE marks a column stored in an old
// format: MariaDB 5.3's temporal types, VARCHAR from before MySQL 5.0.
var oldFormatMark = regexp.MustCompile(` ?/\* mariadb-5\.3 \*/|/\*old\*/`)

// transactionPeriod finds the period columns of a table versioned by
// transaction IDs (WITH SYSTEM VERSIONING on BIGINT UNSIGNED columns).
var transactionPeriod = regexp.MustCompile("`((?:[^`]|``)+)` bigint\\(\\d+\\) unsigned GENERATED ALWAYS AS ROW (?:START|END)")

// mtrTakeSnapshot reads the snapshot of one server.
func mtrTakeSnapshot(ctx context.Context, db *sql.DB) (mtrSnapshot, error) {
	snap := mtrSnapshot{}
	lists := []struct {
		kind, q string
	}{
		{"database", "SELECT SCHEMA_NAME, '', CONCAT_WS(' ', DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME, SCHEMA_COMMENT) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN " + mtrSchemaFilter},
		{"trigger", "SELECT TRIGGER_SCHEMA, TRIGGER_NAME, CONCAT_WS(' | ', EVENT_OBJECT_TABLE, ACTION_TIMING, EVENT_MANIPULATION, ACTION_ORDER, ACTION_STATEMENT, SQL_MODE, DEFINER, CHARACTER_SET_CLIENT, COLLATION_CONNECTION, DATABASE_COLLATION) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA NOT IN " + mtrSchemaFilter},
		{"routine", "SELECT db, CONCAT(type, ' ', name), CONCAT_WS(' | ', param_list, returns, body, sql_mode, security_type, definer, character_set_client, collation_connection, db_collation, comment, is_deterministic, sql_data_access) FROM mysql.proc WHERE db NOT IN " + mtrSchemaFilter},
		{"event", "SELECT db, name, CONCAT_WS(' | ', body, definer, interval_value, interval_field, sql_mode, on_completion, comment, character_set_client, collation_connection, db_collation) FROM mysql.event WHERE db NOT IN " + mtrSchemaFilter},
	}
	for _, l := range lists {
		if err := mtrScan(ctx, db, l.q, func(schema, name, def string) {
			snap[mtrKey(schema, name, l.kind)] = mtrObject{schema: schema, name: name, kind: l.kind, def: def}
		}); err != nil {
			return nil, err
		}
	}
	type table struct{ schema, name, typ string }
	var tables []table
	if err := mtrScan(ctx, db, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN "+mtrSchemaFilter+
		" AND TABLE_TYPE <> 'TEMPORARY'", func(schema, name, typ string) {
		tables = append(tables, table{schema, name, typ})
	}); err != nil {
		return nil, err
	}
	for _, tb := range tables {
		o, err := mtrReadTable(ctx, db, tb.schema, tb.name, tb.typ)
		if err != nil {
			return nil, err
		}
		kind := o.kind
		if kind == "versioned" {
			kind = "table"
		}
		snap[mtrKey(tb.schema, tb.name, kind)] = o
	}
	return snap, nil
}

func mtrKey(schema, name, kind string) string {
	if name == "" {
		return quoteName(schema) + " " + kind
	}
	return quoteName(schema) + "." + quoteName(name) + " " + kind
}

func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// mtrScan runs q, which returns three text columns, and calls row for each
// row.
func mtrScan(ctx context.Context, db *sql.DB, q string, row func(a, b, c string)) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, b, c sql.NullString
		if err := rows.Scan(&a, &b, &c); err != nil {
			return err
		}
		row(a.String, b.String, c.String)
	}
	return rows.Err()
}

// mtrReadTable reads one table, view or sequence. A failure to read the
// object itself (a broken table, a lock) is part of the object, not an
// error: only a lost server is.
func mtrReadTable(ctx context.Context, db *sql.DB, schema, name, typ string) (mtrObject, error) {
	full := quoteName(schema) + "." + quoteName(name)
	o := mtrObject{schema: schema, name: name, kind: "table"}
	switch typ {
	case "VIEW":
		o.kind = "view"
	case "SEQUENCE":
		o.kind = "sequence"
	case "SYSTEM VERSIONED":
		o.kind = "versioned"
	}
	fail := func(err error) (mtrObject, error) {
		var me *mysql.MySQLError
		if !errors.As(err, &me) {
			return o, err
		}
		o.def = "error: " + me.Message
		o.locked = me.Number == 1205 // ER_LOCK_WAIT_TIMEOUT, metadata locks included
		return o, nil
	}
	show := "SHOW CREATE TABLE " + full
	if o.kind == "view" {
		show = "SHOW CREATE VIEW " + full
	}
	def, err := mtrRow(ctx, db, show)
	if err != nil {
		return fail(err)
	}
	// The first column repeats the name; the rest is the definition
	// (and, for a view, the session's character sets).
	o.def = autoIncrement.ReplaceAllString(strings.Join(def[1:], " | "), "")
	switch o.kind {
	case "view":
		return o, nil
	case "sequence":
		row, err := mtrRow(ctx, db, "SELECT * FROM "+full)
		if err != nil {
			return fail(err)
		}
		o.sum = strings.Join(row, " ")
		return o, nil
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+full).Scan(&o.rows); err != nil {
		return fail(err)
	}
	if o.kind == "versioned" {
		for _, m := range transactionPeriod.FindAllStringSubmatch(o.def, -1) {
			o.transactionIDs = append(o.transactionIDs, strings.ReplaceAll(m[1], "``", "`"))
		}
	}
	if len(o.transactionIDs) == 0 {
		sum, err := mtrRow(ctx, db, "CHECKSUM TABLE "+full+" EXTENDED")
		if err != nil {
			return fail(err)
		}
		o.sum = sum[1]
	}
	if o.kind == "versioned" {
		rows, err := mtrDump(ctx, db, o)
		if err != nil {
			return fail(err)
		}
		h := sha256.Sum256([]byte(strings.Join(rows, "\n")))
		o.sum += " history " + hex.EncodeToString(h[:8])
	}
	return o, nil
}

// mtrRow returns the first row of q as text ("NULL" for NULL).
func mtrRow(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rows, err := mtrRows(ctx, db, q)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", q)
	}
	return rows[0], nil
}

// mtrRows returns the rows of q as text ("NULL" for NULL).
func mtrRows(ctx context.Context, db *sql.DB, q string) ([][]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = "NULL"
			if v != nil {
				row[i] = string(v)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// mtrDump renders every row of a table, invisible columns included, one
// line per row, sorted; of a system-versioned table, with its history rows
// and their periods (but not transaction IDs).
func mtrDump(ctx context.Context, db *sql.DB, o mtrObject) ([]string, error) {
	cols, err := mtrRows(ctx, db, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '"+
		strings.ReplaceAll(o.schema, "'", "''")+"' AND TABLE_NAME = '"+strings.ReplaceAll(o.name, "'", "''")+"' ORDER BY ORDINAL_POSITION")
	if err != nil {
		return nil, err
	}
	var list []string
	for _, c := range cols {
		if !slices.Contains(o.transactionIDs, c[0]) {
			list = append(list, quoteName(c[0]))
		}
	}
	if len(list) == 0 {
		list = []string{"*"}
	}
	from := " FROM " + quoteName(o.schema) + "." + quoteName(o.name)
	if o.kind == "versioned" {
		from += " FOR SYSTEM_TIME ALL"
	}
	if o.kind == "versioned" && len(o.transactionIDs) == 0 {
		// ROW_START and ROW_END name the period's columns when the
		// table does not name them itself (they are not in COLUMNS).
		if rows, err := mtrRows(ctx, db, "SELECT "+strings.Join(list, ", ")+", ROW_START, ROW_END"+from); err == nil {
			return mtrLines(rows), nil
		}
	}
	rows, err := mtrRows(ctx, db, "SELECT "+strings.Join(list, ", ")+from)
	if err != nil {
		return nil, err
	}
	return mtrLines(rows), nil
}

// mtrLines renders rows one per line, values quoted, sorted.
func mtrLines(rows [][]string) []string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		var b strings.Builder
		for j, v := range r {
			if j > 0 {
				b.WriteString(" | ")
			}
			fmt.Fprintf(&b, "%q", v)
		}
		lines[i] = b.String()
	}
	slices.Sort(lines)
	return lines
}

// mtrDifference is one way a replica's target differs from the source.
// Key names the object and the aspect (definition, rows, ...), so that the
// differences of the two replicas can be matched; text says how.
type mtrDifference struct {
	key, text string
	object    string // the object's key in the snapshot (mtrKey)
}

// mtrDiff compares a replica's snapshot with the source's and lists the
// differences, in key order. A table whose definition differs still has
// its rows compared: an older temporal format on the source, for one,
// differs in definition while the values must be the same. rowsDiffer
// confirms a checksum difference of a table by its rows; it returns ""
// when the rows are equal after all, or the first differing row.
func mtrDiff(src, rep mtrSnapshot, rowsDiffer func(mtrObject) string) []mtrDifference {
	keys := make([]string, 0, len(src)+len(rep))
	for k := range src {
		keys = append(keys, k)
	}
	for k := range rep {
		if _, ok := src[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var diffs []mtrDifference
	add := func(k, aspect, text string) {
		diffs = append(diffs, mtrDifference{key: k + " " + aspect, text: k + ": " + text, object: k})
	}
	for _, k := range keys {
		s, inSrc := src[k]
		r, inRep := rep[k]
		switch {
		case inSrc && s.locked:
			continue
		case !inRep:
			add(k, "missing", "missing")
			continue
		case !inSrc:
			add(k, "extra", "not on the source")
			continue
		}
		if s.def != r.def {
			add(k, "definition", "definition differs: "+firstDifference(s.def, r.def))
		}
		switch {
		case r.locked || strings.HasPrefix(r.def, "error: "):
		case s.rows != r.rows:
			add(k, "rows", fmt.Sprintf("%d rows, the source has %d", r.rows, s.rows))
		case s.sum == r.sum:
		case s.kind == "sequence":
			add(k, "rows", fmt.Sprintf("state %s, the source's %s", r.sum, s.sum))
		default:
			if d := rowsDiffer(s); d != "" {
				add(k, "rows", "rows differ: "+d)
			}
		}
	}
	return diffs
}

// firstDifference shows where two texts part: a little of the common
// part, then each side's rest, abbreviated.
func firstDifference(want, got string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-30)
	return fmt.Sprintf("source %q, replica %q", abbrev(want[from:], 110), abbrev(got[from:], 110))
}

func abbrev(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// mtrFirstRowDiff names the first row one side has and the other not.
func mtrFirstRowDiff(src, rep []string) string {
	var i, j int
	for i < len(src) && j < len(rep) {
		switch {
		case src[i] == rep[j]:
			i++
			j++
		case src[i] < rep[j]:
			return "the source has " + abbrev(src[i], 200) + ", the replica not"
		default:
			return "the replica has " + abbrev(rep[j], 200) + ", the source not"
		}
	}
	switch {
	case i < len(src):
		return "the source has " + abbrev(src[i], 200) + ", the replica not"
	case j < len(rep):
		return "the replica has " + abbrev(rep[j], 200) + ", the source not"
	}
	return ""
}
