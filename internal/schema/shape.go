package schema

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A shape is what StatementSubjects and StatementWrites say of every
// statement of one shape (see shapeScan), learnt from its first: the
// subjects, and the writes with each value that a literal gives taken
// from that literal. Strings never change what either says but as the
// values Writes holds (a value's content is not parsed, see
// valueContext), and neither do integer literals: learnShape checks both
// on the statement it learns from.
type shape struct {
	key    string // shapeScan.key
	schema string // the current database
	// cacheable is false when statements of this shape must be parsed
	// each time (see learnShape); the fields below are then unset.
	cacheable bool
	subjects  Subjects
	writesOK  bool
	table     TableName
	insert    bool
	replace   bool
	set       []string
	rows      [][]colValue // nil where Writes.Rows is
	columns   []string     // Writes.Columns
	nulls     [][]string   // Writes.Nulls
	nRows     int          // the values of rows, together
	where     []colValues
	whereSet  bool // Writes.Where is not nil
	nWhere    int  // the values of where, together

	size       int // bytes held, about
	prev, next *shape
}

// litValue is a value of Writes: integer literal lit's value (negated if
// neg), or val where lit < 0 (TRUE, which is 1 whatever the literals); or,
// where str, string literal lit's (or sval).
type litValue struct {
	lit  int32
	neg  bool
	str  bool
	val  int64
	sval string
}

// literals are a statement's literals, as its shape scan found them: the
// integers, and the strings' spans in query.
type literals struct {
	ints  []int64
	strs  []strSpan
	query string
}

// strValue is string literal v's value; false when its text is not its
// value (not plain as written: it is not a literal to Writes).
func (v litValue) strValue(l literals) (string, bool) {
	if v.lit < 0 {
		return v.sval, true
	}
	return l.strs[v.lit].strValue(l.query)
}

func (v litValue) value(ints []int64) int64 {
	if v.lit < 0 {
		return v.val
	}
	if v.neg {
		return -ints[v.lit]
	}
	return ints[v.lit]
}

type colValue struct {
	col string
	v   litValue
}

type colValues struct {
	col string
	vs  []litValue // nil where the statement's list is
}

// sentinelBase is the value the probe gives its first integer literal,
// the next ones following: far from any value a statement's text gives
// other than through a literal, and small enough that each fits int64
// negated. The probe's strings are strSentinel and their number.
const (
	sentinelBase = 1 << 61
	strSentinel  = "~paraply~"
)

// maxShapeLiterals bounds the integer literals of a shape, and its strings.
const maxShapeLiterals = 1 << 20

// learnShape learns the shape sc scanned from the statement's full read.
// It parses a probe: the shape with each literal a distinct sentinel,
// whose Writes tell which literal gives which value. The shape is
// cacheable only if the probe and the statement both parse (no rewriting,
// no reading from leading words), say the same subjects and the same ok,
// and the probe's writes with the statement's literals in place of the
// sentinels are exactly the statement's.
func learnShape(currentSchema string, sc *shapeScan, full *statementRead, fullErr error) *shape {
	sh := &shape{key: string(sc.key), schema: strings.Clone(currentSchema)}
	sh.size = 2*len(sh.key) + 128
	if fullErr != nil || full.subjectsErr != nil || len(sc.ints) >= maxShapeLiterals || len(sc.strs) >= maxShapeLiterals {
		return sh
	}
	probeText := probe(sc.key[len(currentSchema)+1:])
	p := parseText(probeText)
	if p.err != nil {
		return sh
	}
	pr := readParsed(currentSchema, probeText, p)
	if pr.subjectsErr != nil || pr.writesOK != full.writesOK || !reflect.DeepEqual(pr.subjects, full.subjects) {
		return sh
	}
	sh.compile(pr.writes, len(sc.ints), len(sc.strs))
	sh.writesOK = full.writesOK
	if w, ok := sh.writes(sc.literals(full.query)); !reflect.DeepEqual(w, full.writes) || ok != full.writesOK {
		return &shape{key: sh.key, schema: sh.schema, size: 2*len(sh.key) + 128}
	}
	sh.cacheable = true
	sh.subjects = Subjects{Tables: cloneTables(full.subjects.Tables), Databases: cloneStrings(full.subjects.Databases)}
	return sh
}

// probe is the text of a shape with the literals sentinels.
func probe(shape []byte) string {
	b := make([]byte, 0, 2*len(shape))
	lit, str := int64(0), 0
	for i := 0; i < len(shape); i++ {
		switch c := shape[i]; c {
		case intMark:
			b = strconv.AppendInt(b, sentinelBase+lit, 10)
			lit++
		case strMark:
			i++
			b = append(b, shape[i])
			b = append(b, strSentinel...)
			b = strconv.AppendInt(b, int64(str), 10)
			b = append(b, shape[i])
			str++
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// compile keeps the probe's writes w, with each sentinel of n integers
// and ns strings as the literal it stands for.
func (sh *shape) compile(w Writes, n, ns int) {
	sval := func(s string) litValue {
		if d, ok := strings.CutPrefix(s, strSentinel); ok {
			if k, err := strconv.Atoi(d); err == nil && k >= 0 && k < ns && strconv.Itoa(k) == d {
				return litValue{lit: int32(k), str: true}
			}
		}
		return litValue{lit: -1, str: true, sval: strings.Clone(s)}
	}
	val := func(v int64) litValue {
		switch {
		case v >= sentinelBase && v < sentinelBase+int64(n):
			return litValue{lit: int32(v - sentinelBase)}
		case v <= -sentinelBase && v > -sentinelBase-int64(n):
			return litValue{lit: int32(-v - sentinelBase), neg: true}
		}
		return litValue{lit: -1, val: v}
	}
	sh.table = TableName{Schema: strings.Clone(w.Table.Schema), Name: strings.Clone(w.Table.Name)}
	sh.insert, sh.replace = w.Insert, w.Replace
	sh.set = slices.Clip(cloneStrings(w.Set))
	sh.columns = slices.Clip(cloneStrings(w.Columns))
	sh.size += 32 * len(sh.columns)
	if w.Nulls != nil {
		sh.nulls = make([][]string, len(w.Nulls))
		for i, cols := range w.Nulls {
			sh.nulls[i] = slices.Clip(cloneStrings(cols))
			sh.size += 24 + 32*len(cols)
		}
	}
	if w.Rows != nil {
		sh.rows = make([][]colValue, len(w.Rows))
		for i, row := range w.Rows {
			for _, c := range row {
				v := val(c.Value)
				if c.IsStr {
					v = sval(c.Str)
				}
				sh.rows[i] = append(sh.rows[i], colValue{col: strings.Clone(c.Column), v: v})
				sh.size += 64 + len(c.Column) + len(v.sval)
				sh.nRows++
			}
		}
	}
	if w.Where != nil {
		sh.whereSet = true
		for _, cv := range w.Where {
			c := colValues{col: strings.Clone(cv.Column)}
			if cv.Values != nil {
				c.vs = make([]litValue, len(cv.Values))
				for i, v := range cv.Values {
					c.vs[i] = val(v)
				}
			}
			if cv.Strs != nil {
				c.vs = make([]litValue, len(cv.Strs))
				for i, v := range cv.Strs {
					c.vs[i] = sval(v)
					sh.size += len(c.vs[i].sval)
				}
			}
			sh.where = append(sh.where, c)
			sh.nWhere += len(c.vs)
			sh.size += 48 + len(cv.Column) + 48*len(c.vs)
		}
	}
	sh.size += 32 * len(sh.set)
}

// writes are the Writes of the statement of this shape whose literals are
// l, and whether they are StatementWrites' ok. A string that is not plain
// as written is no literal value: its column goes unpinned, or without a
// value in its row, as the parse leaves it.
func (sh *shape) writes(l literals) (Writes, bool) {
	w := Writes{Table: sh.table, Insert: sh.insert, Replace: sh.replace, Set: sh.set, Columns: sh.columns, Nulls: sh.nulls}
	if sh.rows != nil {
		// One backing array for every row's values, one for the rows.
		w.Rows = make([][]ColumnValue, len(sh.rows))
		vals := make([]ColumnValue, sh.nRows)
		for i, row := range sh.rows {
			out := vals[:0:len(row)]
			vals = vals[len(row):]
			for _, c := range row {
				if !c.v.str {
					out = append(out, ColumnValue{Column: c.col, Value: c.v.value(l.ints)})
				} else if s, ok := c.v.strValue(l); ok {
					out = append(out, ColumnValue{Column: c.col, Str: s, IsStr: true})
				}
			}
			if len(out) > 0 {
				w.Rows[i] = out // nil for a row without literals, as the parse gives it
			}
		}
	}
	if !sh.whereSet {
		return w, sh.writesOK
	}
	w.Where = make([]ColumnValues, 0, len(sh.where))
	vals := make([]int64, sh.nWhere)
where:
	for _, c := range sh.where {
		cv := ColumnValues{Column: c.col}
		if len(c.vs) > 0 && c.vs[0].str {
			cv.Strs = make([]string, len(c.vs))
			for j, v := range c.vs {
				s, ok := v.strValue(l)
				if !ok {
					continue where
				}
				cv.Strs[j] = s
			}
		} else if c.vs != nil {
			cv.Values = vals[:len(c.vs):len(c.vs)]
			vals = vals[len(c.vs):]
			for j, v := range c.vs {
				cv.Values[j] = v.value(l.ints)
			}
		}
		w.Where = append(w.Where, cv)
	}
	if len(w.Where) == 0 && len(sh.where) > 0 {
		// Every pin was a string that is not plain: the parse pins nothing.
		w.Where = nil
		return w, false
	}
	return w, sh.writesOK
}

// read is what the statement query of this shape, with literals l, reads
// as. It keeps query, not a copy, and strings of it: a Go string does not
// change, and copying every statement of a stream cost more than the rest
// of reading a short one.
func (sh *shape) read(l literals) *statementRead {
	w, ok := sh.writes(l)
	return &statementRead{
		schema:   sh.schema,
		query:    l.query,
		subjects: sh.subjects,
		writes:   w,
		writesOK: ok,
	}
}

// cloneTables copies names that may point into a parsed text, which a
// shape would otherwise keep; the slice has no room to append into, as
// every statement of the shape shares it.
func cloneTables(ts []TableName) []TableName {
	if ts == nil {
		return nil
	}
	out := make([]TableName, len(ts))
	for i, t := range ts {
		out[i] = TableName{Schema: strings.Clone(t.Schema), Name: strings.Clone(t.Name)}
	}
	return out
}

func cloneStrings(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Clone(s)
	}
	return out
}
