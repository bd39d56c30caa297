package stmtmerge

import (
	"strconv"
	"strings"
)

// Merger collects recognized statements in order and writes them merged.
// The zero value is ready; Flush empties it.
type Merger struct {
	items []item
	// last is the level of the last statement that wrote each row.
	last map[row]int
	n    int // statements added since the last Flush
}

// row is a row of a table: the table's identity (Add) and its key, an
// integer or a string's lower-case text.
type row struct {
	table string
	key   int64
	text  string
}

type item struct {
	f     *Form
	text  string // the statement as logged, for one that merges with none
	level int
}

// Add adds statement text, which Recognize read as f, of the table whose
// identity (database and name, however the statement spells them) is
// table.
func (m *Merger) Add(f *Form, text, table string) {
	if m.last == nil {
		m.last = map[row]int{}
	}
	r := row{table: table, key: f.KeyValue}
	if f.KeyText != "" {
		r.text = strings.ToLower(f.KeyText)
	}
	lv := 0
	if l, ok := m.last[r]; ok {
		lv = l + 1
	}
	m.last[r] = lv
	m.items = append(m.items, item{f: f, text: text, level: lv})
	m.n++
}

// Len is the number of statements added since the last Flush.
func (m *Merger) Len() int { return m.n }

// Flush returns the statements added, merged, in an order that leaves
// the rows as the statements in their order would, and empties m.
func (m *Merger) Flush() []string {
	if len(m.items) == 0 {
		return nil
	}
	top := 0
	for _, it := range m.items {
		top = max(top, it.level)
	}
	var out []string
	var groups [][]*item // of one level, in order of their first statement
	for lv := 0; lv <= top; lv++ {
		groups = groups[:0]
	items:
		for k := range m.items {
			it := &m.items[k]
			if it.level != lv {
				continue
			}
			// A level holds a few shapes (tables times statements of the
			// application's): a scan finds the group without a key to
			// build for every statement.
			for g := range groups {
				if mergeable(groups[g][0].f, it.f) {
					groups[g] = append(groups[g], it)
					continue items
				}
			}
			groups = append(groups, []*item{it})
		}
		for _, g := range groups {
			out = append(out, render(g))
		}
	}
	m.items = m.items[:0]
	clear(m.last)
	m.n = 0
	return out
}

// mergeable reports whether b may merge with a: the same kind, table,
// key and columns, and for an UPDATE, per column, the same kind of
// literal, or the same expression where it is not one literal.
func mergeable(a, b *Form) bool {
	if a.Kind != b.Kind || a.Table != b.Table || a.Key != b.Key || (a.KeyText == "") != (b.KeyText == "") || len(a.Columns) != len(b.Columns) {
		return false
	}
	for i := range a.Columns {
		if a.Columns[i] != b.Columns[i] {
			return false
		}
	}
	if a.Kind != Update {
		return true
	}
	for i := range a.Exprs {
		if a.literal[i] != b.literal[i] || a.literal[i] == 0 && a.Exprs[i] != b.Exprs[i] {
			return false
		}
	}
	return true
}

// render writes one statement for the items of one group.
func render(its []*item) string {
	if len(its) == 1 {
		return its[0].text
	}
	f := its[0].f
	var b strings.Builder
	size := 64
	for _, it := range its {
		size += len(it.text)
	}
	b.Grow(size)
	var num [20]byte
	key := func(it *item) {
		if it.f.KeyText != "" {
			b.WriteString(it.f.KeyText)
			return
		}
		b.Write(strconv.AppendInt(num[:0], it.f.KeyValue, 10))
	}
	whereIn := func() {
		b.WriteString(" WHERE ")
		b.WriteString(f.Key)
		b.WriteString(" IN (")
		for k, it := range its {
			if k > 0 {
				b.WriteByte(',')
			}
			key(it)
		}
		b.WriteByte(')')
	}
	switch f.Kind {
	case Delete:
		b.WriteString("DELETE FROM ")
		b.WriteString(f.Table)
		whereIn()
	case Insert:
		b.WriteString("INSERT INTO ")
		b.WriteString(f.Table)
		b.WriteString(" (")
		writeList(&b, f.Columns)
		b.WriteString(") VALUES ")
		for k, it := range its {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			writeList(&b, it.f.Exprs)
			b.WriteByte(')')
		}
	case Update:
		b.WriteString("UPDATE ")
		b.WriteString(f.Table)
		b.WriteString(" SET ")
		for j, col := range f.Columns {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(col)
			b.WriteByte('=')
			if same(its, j) {
				b.WriteString(f.Exprs[j])
				continue
			}
			b.WriteString("CASE ")
			b.WriteString(f.Key)
			for _, it := range its {
				b.WriteString(" WHEN ")
				key(it)
				b.WriteString(" THEN ")
				b.WriteString(it.f.Exprs[j])
			}
			// No ELSE: the WHERE takes only the rows the WHENs name, and
			// an ELSE of the column would add its type to the CASE's,
			// which the statements' literals alone make.
			b.WriteString(" END")
		}
		whereIn()
	}
	return b.String()
}

// writeList writes list to b, ", " between its items.
func writeList(b *strings.Builder, list []string) {
	for j, s := range list {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
	}
}

// same reports whether the items' j-th expressions are the same text.
func same(its []*item, j int) bool {
	for _, it := range its[1:] {
		if it.f.Exprs[j] != its[0].f.Exprs[j] {
			return false
		}
	}
	return true
}
