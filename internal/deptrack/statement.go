package deptrack

import (
	"math"
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// A statement-format statement carries no rows, but for the plainest
// statements its text says which rows it writes, exactly (not a guess):
//
//	UPDATE t SET ... WHERE id = 5        row 5 of t
//	DELETE FROM t WHERE id IN (5, 6)     rows 5 and 6
//	INSERT INTO t (id, ...) VALUES (5, ...), (6, ...)
//
// when its expressions read nothing but that row (schema.StatementWrites),
// and t is a table whose rows nothing else ties: a primary key of integers
// or strings (each value a literal that keys as the row's value does: an
// integer in its column's range, which the server would otherwise clip, a
// plain string, see literalKind) that is its only unique key (a row's
// other unique values would be unknown: a DELETE frees them; but see
// below), no foreign key (but see below), no trigger (which writes other
// rows on the replica, where a statement's triggers run). Such a
// statement gets the keys a row-format change of those rows gets, so it
// runs in parallel with what does not touch them; any other is a barrier
// (CauseStatement). The primary key's values are never changed (an
// UPDATE that assigns a key column is a barrier).
//
// A table may also have other unique keys none of whose columns is
// generated, and children whose foreign keys reference its primary key
// (a parent). An UPDATE that assigns none of those unique keys' columns
// keeps the row's values of them, and a child row's reference to the row
// carries the row's key; so whatever the UPDATE conflicts with writes the
// same row, or references it, and has its key. An INSERT (not REPLACE,
// nor ON DUPLICATE KEY UPDATE, which may change the row holding a
// duplicate) whose rows give the other unique keys' columns literals or
// NULL takes those values, and gets their keys too (see rowKeys). A
// DELETE or REPLACE gets keys on a parent without other unique keys
// where no child's foreign key cascades (RESTRICT, the default): a child
// row that references the row, before or after, carries the row's key.
//
// A child table's rows reference parent rows. Where a parent's foreign key
// cascades into the table (ON DELETE or ON UPDATE CASCADE, SET NULL, SET
// DEFAULT), a cascade, which the binlog does not show, can change a row
// under a statement: every statement on it is a barrier. Otherwise (the
// default, RESTRICT) two statements get keys: an UPDATE that assigns no
// foreign key column, for which the server checks no foreign key and
// whose row keeps the parent rows it references, and an INSERT whose rows
// give each foreign key column a literal or NULL (or leave out a nullable
// one whose default is NULL, as Laravel's inserts of the attributes set
// do), whose rows also get the keys of the parent rows they name, as a row
// image's change does (see parents). A DELETE, a REPLACE (which deletes) and an UPDATE of a
// reference are barriers: each frees a parent row that the text does not
// name, and a later DELETE of that parent row must wait for it.
//
// An INSERT whose rows give the AUTO_INCREMENT column 0 (sysbench's
// oltp_insert), NULL, or nothing does not write row 0: the server
// generates the values, and the binlog carries the first (INSERT_ID)
// before the statement, from which a replica generates them again. Such a
// statement is keyed by those values (see generatedKeys). A 0 is row 0
// only where the session's sql_mode has NO_AUTO_VALUE_ON_ZERO.

// maxStatementKeys bounds the keys one statement's text may give (IN
// lists multiply): more is a barrier.
const maxStatementKeys = 1024

// statements adds the keys of t's statements to ws; false if one of them
// is a barrier, with the table it names (or "").
func (x *Extractor) statements(t *binlog.Txn, ws *Writeset) (bool, string) {
	keyed := 0
	for i := range t.Statements {
		st := &t.Statements[i]
		switch {
		case st.Kind == binlog.StmtSavepoint, st.Kind == binlog.StmtOther, st.Kind == binlog.StmtControl:
			continue
		case st.Kind != binlog.StmtDML || st.Load != nil:
			return false, ""
		}
		text := st.Text()
		w, ok := schema.StatementWrites(st.Schema, text)
		if !ok {
			return false, ""
		}
		if schema.IndexFold(text, "connection_id") >= 0 || schema.IndexFold(text, "pseudo_thread_id") >= 0 {
			ws.ReadsConnectionID = true
		}
		col, ok := x.statementKeys(st, w, ws)
		if !ok {
			return false, w.Table.String()
		}
		if col != "" {
			ws.Statements = append(ws.Statements, StatementKey{Index: i, Table: w.Table, Column: col})
		}
		keyed++
	}
	// Statement DML without a statement (what else made it so is not
	// known): a barrier.
	return keyed > 0, ""
}

// statementKeys adds the primary keys of the rows w, which st writes, to
// ws; false when its table does not allow it (see above). col is the
// primary key's column when it is one column, "" otherwise.
func (x *Extractor) statementKeys(st *binlog.Statement, w schema.Writes, ws *Writeset) (col string, ok bool) {
	tbl := x.catalog.Table(w.Table.Schema, w.Table.Name)
	if tbl == nil || x.catalog.Unknown(w.Table.Schema, w.Table.Name) || tbl.Triggers {
		return "", false
	}
	p := x.plan(tbl)
	if p.pkKey < 0 {
		return "", false
	}
	if (p.uniques || p.parent) && (!p.keepable || slices.ContainsFunc(w.Set, func(c string) bool { return slices.Contains(p.kept, c) })) {
		return "", false // it changes values other unique keys hold, or children may reference
	}
	var uniques []keyValues
	if p.uniques && (w.Insert || len(w.Set) == 0) {
		// A DELETE or REPLACE frees other unique values its text does not
		// say, and ON DUPLICATE KEY UPDATE may change a row the text does
		// not name (the one holding a duplicate); a plain INSERT takes the
		// values its rows give, and gets their keys.
		if !w.Insert || w.Replace || len(w.Set) > 0 {
			return "", false
		}
		for _, k := range p.uniqueKeys {
			if k < 0 {
				return "", false
			}
			ts, ok := rowKeys(st, tbl, p, &w, k)
			if !ok {
				return "", false
			}
			for _, t := range ts {
				uniques = append(uniques, keyValues{key: k, values: t})
			}
		}
	}
	if (w.Replace || !w.Insert && len(w.Set) == 0) && len(p.cascades) > 0 {
		return "", false // a DELETE, or REPLACE's, cascades into rows the text does not name
	}
	for _, c := range p.pk {
		if slices.Contains(w.Set, c.name) {
			return "", false
		}
	}
	refs, ok := x.parents(st, p, tbl, &w)
	if !ok {
		return "", false
	}
	var tuples [][]literal
	if w.Insert {
		tuples, ok = insertedKeys(st, tbl, p, w)
	} else {
		tuples, ok = pinnedKeys(st, tbl, p, &w)
	}
	if !ok {
		return "", false
	}
	if tbl.ReadsConnectionID() {
		ws.ReadsConnectionID = true
	}
	for _, t := range tuples {
		x.addValues(ws, &p.keys[p.pkKey], t)
	}
	for _, r := range append(refs, uniques...) {
		x.addValues(ws, &p.keys[r.key], r.values)
	}
	if len(p.pk) == 1 && p.pk[0].merges && !(p.parent && (w.Insert || len(w.Set) == 0)) {
		return p.pk[0].name, true // stmtmerge merges statements by a key of one column
	}
	// A parent's INSERT, DELETE and REPLACE are not merged: stmtmerge
	// orders a table's statements by their rows alone, and could move a
	// child's INSERT before the INSERT of the row it references, or a
	// parent row's DELETE after a child's INSERT that references it anew.
	return "", true
}

// insertedKeys are the primary key values of the rows INSERT w writes
// into tbl (plan p), each a literal of the key's kind in its column's
// range, or generated (see generatedKeys); false when a row's is not.
func insertedKeys(st *binlog.Statement, tbl *schema.Table, p *tablePlan, w schema.Writes) ([][]literal, bool) {
	gen, ok := generatedKeys(st, tbl, p.pk, w)
	if !ok || len(w.Rows) > maxStatementKeys {
		return nil, false
	}
	tuples := make([][]literal, len(w.Rows))
	all := make([]literal, len(w.Rows)*len(p.pk))
	for r, row := range w.Rows {
		tuple := all[r*len(p.pk) : (r+1)*len(p.pk)]
		for i, c := range p.pk {
			if gen != nil && i == 0 {
				tuple[i] = literal{i: gen[r]}
				continue
			}
			col := &tbl.Columns[c.pos]
			v, ok := rowLiteral(st, c.kind, c.name, row, len(w.Rows))
			if !ok || !inRange(col, v) {
				return nil, false // NULL or left out (its default), or not a literal
			}
			tuple[i] = v
		}
		tuples[r] = tuple
	}
	return tuples, true
}

// pinnedKeys are the primary key values of the rows UPDATE or DELETE w
// names in tbl (plan p): every combination of the values its WHERE pins
// each key column to, each a literal of the column's kind in its range;
// false when a column is not pinned so, or they are too many.
func pinnedKeys(st *binlog.Statement, tbl *schema.Table, p *tablePlan, w *schema.Writes) ([][]literal, bool) {
	tuples := [][]literal{{}}
	for _, c := range p.pk {
		col := &tbl.Columns[c.pos]
		vs := pinnedLiterals(st, c.kind, w, c.name)
		if len(vs) == 0 || len(tuples)*len(vs) > maxStatementKeys {
			return nil, false
		}
		next := make([][]literal, 0, len(tuples)*len(vs))
		for _, t := range tuples {
			for _, v := range vs {
				if !inRange(col, v) {
					return nil, false
				}
				next = append(next, append(t[:len(t):len(t)], v))
			}
		}
		tuples = next
	}
	return tuples, true
}

// keyValues are the values a statement's row gives key plan key: a
// foreign key's parent key (the parent row it references), or another
// unique key.
type keyValues struct {
	key    int
	values []literal
}

// parents checks statement w, which st logged, against the foreign keys of
// tbl, whose plan is p, and returns the parent rows the rows it inserts
// reference; false when the statement is a barrier (see the comment at
// the top). A table without foreign keys passes with none.
func (x *Extractor) parents(st *binlog.Statement, p *tablePlan, tbl *schema.Table, w *schema.Writes) ([]keyValues, bool) {
	if len(tbl.ForeignKeys) == 0 {
		return nil, true
	}
	if p.cascadeChild || w.Replace || (!w.Insert && len(w.Set) == 0) {
		return nil, false
	}
	var refs []keyValues
	for f, fk := range tbl.ForeignKeys {
		for _, c := range fk.Columns {
			col := &tbl.Columns[c]
			if slices.Contains(w.Set, strings.ToLower(col.Name)) || col.AutoIncrement || col.Generated {
				return nil, false
			}
		}
		if !w.Insert {
			continue
		}
		k := p.fkKeys[f]
		if k < 0 {
			return nil, false
		}
		tuples, ok := rowKeys(st, tbl, p, w, k)
		if !ok {
			return nil, false
		}
		for _, t := range tuples {
			refs = append(refs, keyValues{key: k, values: t})
		}
	}
	return refs, true
}

// rowKeys are the values the rows of INSERT w, which st logged, give key
// k of tbl's plan p, a tuple per row: each a literal of its column's kind
// in its range. A row that leaves a column of the key NULL (given, or left
// out where its default is NULL) has none, as no unique check nor foreign
// key meets it; false when a row gives one anything else. (Tables with
// triggers, which could set it, are barriers.)
func rowKeys(st *binlog.Statement, tbl *schema.Table, p *tablePlan, w *schema.Writes, k int) ([][]literal, bool) {
	n := len(p.keys[k].cols)
	all := make([]literal, len(w.Rows)*n) // one backing array for every row's tuple
	var tuples [][]literal
rows:
	for r, row := range w.Rows {
		t := all[r*n : (r+1)*n : (r+1)*n]
		for i, c := range p.keys[k].cols {
			col := &tbl.Columns[c]
			name := strings.ToLower(col.Name)
			v, ok := rowLiteral(st, literalKind(col), name, row, len(w.Rows))
			switch {
			case ok && inRange(col, v):
				t[i] = v
			case !ok && col.Nullable && slices.Contains(w.Columns, name) && w.LeavesOut(r, name):
				continue rows // NULL (which a NOT NULL column of a multi-row INSERT, not strict, stores as 0 or '')
			case !ok && !slices.Contains(w.Columns, name) && col.LeftNull():
				continue rows // left out, so NULL too
			default:
				return nil, false // left to a default not NULL, or not a literal
			}
		}
		tuples = append(tuples, t)
	}
	return tuples, true
}

// generatedKeys tells which values the primary key's AUTO_INCREMENT
// column (pkCols, indexes in tbl) gets in the rows of INSERT w, which st
// logged, one per row: nil when the statement gives it every value
// itself. The column leads the key, or the statement is a barrier
// (false): after another key column (MyISAM, Aria) each prefix counts on
// its own, so the rows' values need not follow one another. A row leaves
// the value to the server when it gives NULL, leaves the column out, or
// gives 0 (unless NO_AUTO_VALUE_ON_ZERO). When every row does, the values
// are INSERT_ID's and each next one auto_increment_increment above (what a
// replica given INSERT_ID generates). false too when that cannot be told:
// some rows give a value and others do not, a value is not a literal, or
// INSERT_ID is missing where a value was generated (or there where none
// was).
func generatedKeys(st *binlog.Statement, tbl *schema.Table, pk []pkPart, w schema.Writes) ([]int64, bool) {
	switch slices.IndexFunc(pk, func(c pkPart) bool { return tbl.Columns[c.pos].AutoIncrement }) {
	case -1:
		return nil, !st.Context.HasInsertID
	case 0:
	default:
		return nil, false
	}
	col := pk[0].name
	left := 0
	for r, row := range w.Rows {
		if v, ok := schema.RowValue(row, col); (ok && v == 0 && !zeroStored(st)) || (!ok && w.LeavesOut(r, col)) {
			left++
		} else if !ok {
			return nil, false // an expression
		}
	}
	switch {
	case left == 0:
		return nil, !st.Context.HasInsertID
	case left < len(w.Rows):
		return nil, false // a value given among generated ones moves those after it
	case !st.Context.HasInsertID || st.Context.InsertID > math.MaxInt64/2:
		return nil, false
	}
	step := int64(max(st.Session.AutoIncrementIncrement, 1))
	values := make([]int64, len(w.Rows))
	for r := range values {
		values[r] = int64(st.Context.InsertID) + int64(r)*step
	}
	return values, true
}

// zeroStored reports whether st's session stores a 0 given an
// AUTO_INCREMENT column as 0 (NO_AUTO_VALUE_ON_ZERO).
func zeroStored(st *binlog.Statement) bool {
	return st.Session.HasSQLMode && st.Session.SQLMode&binlog.ModeNoAutoValueOnZero != 0
}

// addValues adds the key of plan k with the values vs: the hash a row
// image with those values gets (addKey).
func (x *Extractor) addValues(ws *Writeset, k *keyPlan, vs []literal) {
	x.buf = append(x.buf[:0], k.prefix...)
	for i, v := range vs {
		if v.str {
			x.buf = appendValue(x.buf, v.s, &k.parts[i])
		} else {
			x.buf = appendInteger(x.buf, v.i, &k.parts[i])
		}
		x.buf = append(x.buf, 0x1f)
	}
	x.h.Reset()
	x.h.Write(x.buf)
	ws.Keys = append(ws.Keys, x.h.Sum64())
	if x.Explain {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = v.String()
		}
		ws.Refs = append(ws.Refs, KeyRef{Table: k.table, Index: k.name, Text: strings.Join(parts, ",")})
	}
}

// integerBits is the width of a column type (as the catalog spells it)
// that holds integers, which a statement's integer literals key as row
// images do; 0 for any other type.
func integerBits(t string) int {
	switch t {
	case "tinyint":
		return 8
	case "smallint":
		return 16
	case "mediumint":
		return 24
	case "int", "integer":
		return 32
	case "bigint":
		return 64
	}
	return 0
}

// inRange reports whether column c holds v as it is. An integer outside
// its range is clipped by a server in a non-strict sql_mode (or refused),
// so the row written would not be the literal's. (A string too long is
// cut, where rowLiteral takes one only in a strict sql_mode.)
func inRange(c *schema.Column, lit literal) bool {
	if lit.str {
		return true
	}
	v := lit.i
	bits := integerBits(c.Type)
	switch {
	case c.Unsigned && bits == 64:
		return v >= 0
	case c.Unsigned:
		return v >= 0 && v < 1<<bits
	case bits == 64:
		return true
	default:
		return v >= -1<<(bits-1) && v < 1<<(bits-1)
	}
}
