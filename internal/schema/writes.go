package schema

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Writes are the rows one statement-format statement can write, as far as
// its text fixes them: the table, and for each row the values integer
// and plain string literals (see plainString) give its columns. A dependency tracker that knows the table's
// keys turns them into the statement's writeset, as the rows of a
// row-format transaction give theirs.
type Writes struct {
	Table TableName
	// Insert: Rows holds each row the statement inserts (INSERT or
	// REPLACE ... VALUES): the columns a literal integer gives, by
	// lower-case name, in the statement's order. Otherwise the statement
	// is an UPDATE or a DELETE of the rows whose columns Where pins to one
	// of the values it lists (WHERE c = 1 AND d IN (2, 3) AND ...), by
	// lower-case name, in the order the WHERE first pins them.
	//
	// Slices rather than maps: a statement names a handful of columns,
	// and every statement of a statement-format stream is read, from its
	// shape (see shapeCache), into a new Writes.
	Insert bool
	// Replace: the INSERT is a REPLACE, which deletes the rows it
	// replaces, whatever their other columns hold.
	Replace bool
	Rows    [][]ColumnValue
	Where   []ColumnValues
	// Columns is an INSERT's column list (lower case), and Nulls, per
	// row, the columns it gives the literal NULL (nil where no row gives
	// one): what LeavesOut reads.
	Columns []string
	Nulls   [][]string
	// Set are the columns (lower case) an UPDATE, or an INSERT's ON
	// DUPLICATE KEY UPDATE, assigns.
	Set []string
}

// ColumnValue is the value a literal gives a column of a row: the
// integer Value, or where IsStr the string Str.
type ColumnValue struct {
	Column string
	Value  int64
	Str    string
	IsStr  bool
}

// ColumnValues are the values a WHERE pins a column to: integers, or
// strings (Strs, Values nil), never both.
type ColumnValues struct {
	Column string
	Values []int64
	Strs   []string
}

// RowValue is the integer row gives column col, if it gives one.
func RowValue(row []ColumnValue, col string) (int64, bool) {
	for _, c := range row {
		if c.Column == col {
			return c.Value, !c.IsStr
		}
	}
	return 0, false
}

// RowString is the plain string row gives column col, if it gives one.
func RowString(row []ColumnValue, col string) (string, bool) {
	for _, c := range row {
		if c.Column == col {
			return c.Str, c.IsStr
		}
	}
	return "", false
}

// LeavesOut reports whether row r of an INSERT gives column col no value
// of its own: col is not in the column list, or the row gives it NULL.
// (An AUTO_INCREMENT column then gets the next value.)
func (w *Writes) LeavesOut(r int, col string) bool {
	if !slices.Contains(w.Columns, col) {
		return true
	}
	return r < len(w.Nulls) && slices.Contains(w.Nulls[r], col)
}

// setRowValue gives col the value v in row, the last value a column list
// that names col twice gives it.
func setRowValue(row []ColumnValue, v ColumnValue) []ColumnValue {
	for i := range row {
		if row[i].Column == v.Column {
			row[i] = v
			return row
		}
	}
	return append(row, v)
}

// dropRowValue forgets the value row gave col: a column list that names
// col again gives it one that is not a literal.
func dropRowValue(row []ColumnValue, col string) []ColumnValue {
	return slices.DeleteFunc(row, func(c ColumnValue) bool { return c.Column == col })
}

// Pinned are the integers w's WHERE pins column col to; nil if it pins
// none.
func (w *Writes) Pinned(col string) []int64 {
	for _, c := range w.Where {
		if c.Column == col {
			return c.Values
		}
	}
	return nil
}

// PinnedStrings are the plain strings w's WHERE pins column col to; nil if
// it pins none.
func (w *Writes) PinnedStrings(col string) []string {
	for _, c := range w.Where {
		if c.Column == col {
			return c.Strs
		}
	}
	return nil
}

// StatementWrites reads which rows query, run with currentSchema as the
// default database, can write: ok is false unless it is one of
//
//	INSERT|REPLACE [INTO] t [(cols)] VALUES (...), ... [ON DUPLICATE KEY UPDATE ...]
//	UPDATE t SET ... WHERE ...                   (one table)
//	DELETE FROM t WHERE ...                      (one table)
//
// whose expressions read nothing but the row they write (literals, its
// own columns, user and system variables, operators and built-in
// functions of a known list: no subquery, no other table, no stored
// function, which could read or write anything). What it writes is then
// known from its text and the table's keys; what it read is the row
// itself. Whether the table's keys and triggers allow that the caller
// decides.
func StatementWrites(currentSchema, query string) (Writes, bool) {
	r := readStatement(currentSchema, query)
	return r.writes, r.writesOK
}

// writesOf is StatementWrites of a parsed statement.
func writesOf(currentSchema string, p *parsedText) (Writes, bool) {
	nodes, err := p.nodes, p.err
	if err != nil || len(nodes) != 1 {
		return Writes{}, false
	}
	switch n := nodes[0].(type) {
	case *ast.InsertStmt:
		return insertWrites(currentSchema, n)
	case *ast.UpdateStmt:
		if n.MultipleTable || n.Order != nil {
			return Writes{}, false
		}
		w, alias, ok := singleTable(currentSchema, n.TableRefs)
		if !ok || !readsOnly(alias, n.Where) {
			return Writes{}, false
		}
		for _, a := range n.List {
			if !sameTable(alias, a.Column) || !readsOnly(alias, a.Expr) {
				return Writes{}, false
			}
			w.Set = append(w.Set, a.Column.Name.L)
		}
		w.Where = pinned(alias, n.Where)
		return w, len(w.Where) > 0
	case *ast.DeleteStmt:
		if n.IsMultiTable || n.Order != nil {
			return Writes{}, false
		}
		w, alias, ok := singleTable(currentSchema, n.TableRefs)
		if !ok || !readsOnly(alias, n.Where) {
			return Writes{}, false
		}
		w.Where = pinned(alias, n.Where)
		return w, len(w.Where) > 0
	}
	return Writes{}, false
}

// insertWrites reads an INSERT or REPLACE with VALUES.
func insertWrites(cur string, n *ast.InsertStmt) (Writes, bool) {
	if n.Select != nil {
		return Writes{}, false
	}
	w, alias, ok := singleTable(cur, n.Table)
	if !ok || len(n.Columns) == 0 {
		// Without a column list the values follow the table's columns,
		// which the statement does not name.
		return Writes{}, false
	}
	w.Insert, w.Replace = true, n.IsReplace
	for _, c := range n.Columns {
		w.Columns = append(w.Columns, c.Name.L)
	}
	for r, list := range n.Lists {
		if len(list) != len(n.Columns) {
			return Writes{}, false
		}
		var row []ColumnValue
		for i, e := range list {
			if !readsOnly(alias, e) {
				return Writes{}, false
			}
			col := n.Columns[i].Name.L
			if v, ok := intLiteral(e); ok {
				row = setRowValue(row, ColumnValue{Column: col, Value: v})
			} else if s, ok := plainString(e); ok {
				row = setRowValue(row, ColumnValue{Column: col, Str: s, IsStr: true})
			} else {
				row = dropRowValue(row, col)
				if isNull(e) {
					if w.Nulls == nil {
						w.Nulls = make([][]string, len(n.Lists))
					}
					w.Nulls[r] = append(w.Nulls[r], col)
				}
			}
		}
		if len(row) == 0 {
			row = nil // as a shape gives it
		}
		w.Rows = append(w.Rows, row)
	}
	for _, a := range n.OnDuplicate {
		if !readsOnly(alias, a.Expr) {
			return Writes{}, false
		}
		w.Set = append(w.Set, a.Column.Name.L)
	}
	return w, len(w.Rows) > 0
}

// singleTable reads a FROM-like clause that names one table, and returns
// its name and how the statement may qualify its columns.
func singleTable(cur string, refs *ast.TableRefsClause) (Writes, string, bool) {
	if refs == nil || refs.TableRefs == nil || refs.TableRefs.Right != nil {
		return Writes{}, "", false
	}
	src, ok := refs.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return Writes{}, "", false
	}
	tn, ok := src.Source.(*ast.TableName)
	if !ok {
		return Writes{}, "", false
	}
	n := TableName{Schema: tn.Schema.O, Name: tn.Name.O}
	if n.Schema == "" {
		n.Schema = cur
	}
	alias := tn.Name.L
	if src.AsName.L != "" {
		alias = src.AsName.L
	}
	return Writes{Table: n}, alias, true
}

// sameTable reports whether a column name refers to the statement's
// table (alias): unqualified, or qualified with it.
func sameTable(alias string, c *ast.ColumnName) bool {
	return c.Table.L == "" || c.Table.L == alias
}

// pinned reads the columns a WHERE clause's top-level conjunction pins
// to integer literals (c = 5, 5 = c, c IN (1, 2)) or plain strings (c =
// 'a', c IN ('a', 'b')). The first such condition on a column claims it;
// one of strings that are not all plain pins it to nothing (as a shape
// read does, which knows the first condition's place, not the strings).
func pinned(alias string, where ast.ExprNode) []ColumnValues {
	var out []ColumnValues
	var claimed []string
	claim := func(col string) bool {
		if slices.Contains(claimed, col) {
			return false
		}
		claimed = append(claimed, col)
		return true
	}
	var walk func(e ast.ExprNode)
	walk = func(e ast.ExprNode) {
		switch e := e.(type) {
		case *ast.ParenthesesExpr:
			walk(e.Expr)
		case *ast.BinaryOperationExpr:
			switch e.Op.String() {
			case "and":
				walk(e.L)
				walk(e.R)
			case "eq":
				col, val := e.L, e.R
				if _, ok := col.(*ast.ColumnNameExpr); !ok {
					col, val = val, col
				}
				c, ok := col.(*ast.ColumnNameExpr)
				if !ok || !sameTable(alias, c.Name) {
					return
				}
				if v, ok := intLiteral(val); ok && claim(c.Name.Name.L) {
					out = append(out, ColumnValues{Column: c.Name.Name.L, Values: []int64{v}})
				} else if s, ok := stringLiteral(val); ok && claim(c.Name.Name.L) && plain(s) {
					out = append(out, ColumnValues{Column: c.Name.Name.L, Strs: []string{s}})
				}
			}
		case *ast.PatternInExpr:
			c, ok := e.Expr.(*ast.ColumnNameExpr)
			if !ok || e.Not || e.Sel != nil || !sameTable(alias, c.Name) || len(e.List) == 0 {
				return
			}
			cv := ColumnValues{Column: c.Name.Name.L}
			strs := true // every string plain
			for _, x := range e.List {
				if v, ok := intLiteral(x); ok && cv.Strs == nil {
					cv.Values = append(cv.Values, v)
				} else if s, ok := stringLiteral(x); ok && cv.Values == nil {
					cv.Strs = append(cv.Strs, s)
					strs = strs && plain(s)
				} else {
					return
				}
			}
			if claim(cv.Column) && strs {
				out = append(out, cv)
			}
		}
	}
	if where != nil {
		walk(where)
	}
	return out
}

// isNull reports whether e is the literal NULL.
func isNull(e ast.ExprNode) bool {
	v, ok := e.(ast.ValueExpr)
	return ok && v.GetValue() == nil
}

// intLiteral is the value of an integer literal (or its negation).
func intLiteral(e ast.ExprNode) (int64, bool) {
	neg := false
	if u, ok := e.(*ast.UnaryOperationExpr); ok && u.Op.String() == "minus" {
		neg, e = true, u.V
	}
	v, ok := e.(ast.ValueExpr)
	if !ok {
		return 0, false
	}
	var n int64
	switch x := v.GetValue().(type) {
	case int64:
		n = x
	case uint64:
		if x > 1<<63-1 {
			return 0, false
		}
		n = int64(x)
	default:
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// plainString is the value of a string literal that reads the same in
// every ASCII-compatible character set and whatever escapes its text
// used: printable ASCII, no backslash or quote (clients escape those, and
// the bytes a line break or NUL is written with), no trailing blank (which
// a PAD SPACE collation ignores and a CHAR column drops). A key of such
// strings hashes as a row image's does (deptrack); anything else is not
// a literal to Writes.
func plainString(e ast.ExprNode) (string, bool) {
	s, ok := stringLiteral(e)
	if !ok || !plain(s) {
		return "", false
	}
	return s, true
}

// stringLiteral is the value of a string literal.
func stringLiteral(e ast.ExprNode) (string, bool) {
	v, ok := e.(ast.ValueExpr)
	if !ok {
		return "", false
	}
	s, ok := v.GetValue().(string)
	return s, ok
}

// plain reports whether s is a plainString's value.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainBytes[s[i]] {
			return false
		}
	}
	return len(s) == 0 || s[len(s)-1] != ' '
}

// plainBytes are the bytes a plain string may hold: printable ASCII but
// a backslash and the quotes.
var plainBytes = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = !strings.ContainsRune("\\'\"`", rune(c))
	}
	return t
}()

// readsOnly reports whether expression e reads nothing but the row of
// the statement's table (alias) and the session: see StatementWrites.
func readsOnly(alias string, e ast.ExprNode) bool {
	if e == nil {
		return true
	}
	v := &rowReader{alias: alias}
	e.Accept(v)
	return !v.other
}

// rowReader walks an expression and notes anything that may read beyond
// the row.
type rowReader struct {
	alias string
	other bool
}

func (v *rowReader) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case ast.ValueExpr, *ast.BinaryOperationExpr, *ast.UnaryOperationExpr, *ast.ParenthesesExpr,
		*ast.IsNullExpr, *ast.IsTruthExpr, *ast.PatternLikeOrIlikeExpr, *ast.BetweenExpr, *ast.CaseExpr,
		*ast.WhenClause, *ast.FuncCastExpr, *ast.VariableExpr, *ast.DefaultExpr, *ast.TimeUnitExpr,
		*ast.TrimDirectionExpr, *ast.ColumnName, *ast.PatternRegexpExpr:
	case *ast.PatternInExpr:
		v.other = v.other || n.Sel != nil
	case *ast.ColumnNameExpr:
		v.other = v.other || !sameTable(v.alias, n.Name)
	case *ast.ValuesExpr:
		// VALUES(c) of ON DUPLICATE KEY UPDATE: the row being inserted.
	case *ast.FuncCallExpr:
		v.other = v.other || n.Schema.L != "" || !builtins[n.FnName.L]
	default:
		v.other = true // a subquery, an aggregate, anything not listed
	}
	return n, v.other
}

func (v *rowReader) Leave(n ast.Node) (ast.Node, bool) { return n, !v.other }

// builtins are the built-in functions an expression may call and still
// read only its row and its session (the clock, RAND, UUID come from the
// session's context).
var builtins = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(`abs ceil ceiling floor round truncate mod greatest least coalesce ifnull if nullif isnull
		concat concat_ws upper lower ucase lcase substring substr left right length char_length character_length trim ltrim rtrim
		replace repeat lpad rpad reverse locate instr position field elt format hex unhex conv md5 sha1 sha sha2 crc32
		now current_timestamp localtime localtimestamp curdate current_date curtime current_time sysdate utc_timestamp utc_date
		unix_timestamp from_unixtime date_add date_sub adddate subdate addtime subtime datediff timestampdiff timestampadd
		date time year month day dayofmonth hour minute second microsecond week weekday dayofweek dayofyear quarter
		date_format str_to_date makedate maketime last_day to_days from_days sec_to_time time_to_sec
		uuid uuid_short rand last_insert_id connection_id row_count found_rows database schema user current_user
		json_set json_insert json_replace json_remove json_object json_array json_extract json_unquote json_quote
		json_array_append json_merge_patch json_merge_preserve json_valid json_contains json_length
		inet_aton inet_ntoa inet6_aton inet6_ntoa bin oct ascii char ord space strcmp`) {
		m[f] = true
	}
	return m
}()
