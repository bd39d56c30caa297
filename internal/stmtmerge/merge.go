package stmtmerge

import (
	"strconv"
	"strings"
)

// Merger collects recognized statements in order and writes them merged.
// The zero value is ready; Flush empties it.
type Merger struct {
	items []item
	// last is the level of the last statement that wrote each row, by
	// Row.
	last map[string]int
	n    int // statements added since the last Flush
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
		m.last = map[string]int{}
	}
	row := table + "\x00" + strconv.FormatInt(f.KeyValue, 10)
	lv := 0
	if l, ok := m.last[row]; ok {
		lv = l + 1
	}
	m.last[row] = lv
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
	for lv := 0; lv <= top; lv++ {
		var order []string
		groups := map[string][]*item{}
		for k := range m.items {
			it := &m.items[k]
			if it.level != lv {
				continue
			}
			g := it.f.group() + "\x01" + it.f.signature()
			if groups[g] == nil {
				order = append(order, g)
			}
			groups[g] = append(groups[g], it)
		}
		for _, g := range order {
			out = append(out, render(groups[g]))
		}
	}
	m.items = m.items[:0]
	clear(m.last)
	m.n = 0
	return out
}

// signature is what an UPDATE's members must also share: per column,
// the kind of its literal, or its expression when it is not one literal
// (which then must be the same text in every member).
func (f *Form) signature() string {
	if f.Kind != Update {
		return ""
	}
	var b strings.Builder
	for i, e := range f.Exprs {
		if f.literal[i] != 0 {
			b.WriteByte(f.literal[i])
		} else {
			b.WriteByte('e')
			b.WriteString(e)
		}
		b.WriteByte(0)
	}
	return b.String()
}

// render writes one statement for the items of one group.
func render(its []*item) string {
	if len(its) == 1 {
		return its[0].text
	}
	f := its[0].f
	var b strings.Builder
	switch f.Kind {
	case Delete:
		b.WriteString("DELETE FROM " + f.Table + " WHERE " + f.Key + " IN (")
		keys(&b, its)
		b.WriteString(")")
	case Insert:
		b.WriteString("INSERT INTO " + f.Table + " (" + strings.Join(f.Columns, ", ") + ") VALUES ")
		for k, it := range its {
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString("(" + strings.Join(it.f.Exprs, ", ") + ")")
		}
	case Update:
		b.WriteString("UPDATE " + f.Table + " SET ")
		for j, col := range f.Columns {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(col + "=")
			if same(its, j) {
				b.WriteString(f.Exprs[j])
				continue
			}
			b.WriteString("CASE " + f.Key)
			for _, it := range its {
				b.WriteString(" WHEN " + it.f.keyText() + " THEN " + it.f.Exprs[j])
			}
			b.WriteString(" ELSE " + col + " END")
		}
		b.WriteString(" WHERE " + f.Key + " IN (")
		keys(&b, its)
		b.WriteString(")")
	}
	return b.String()
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

func keys(b *strings.Builder, its []*item) {
	for k, it := range its {
		if k > 0 {
			b.WriteString(",")
		}
		b.WriteString(it.f.keyText())
	}
}
