package schema

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// checkInvariants checks what must hold after any change: tables are
// stored under their own names, keys and foreign keys point at existing
// columns, PRIMARY comes first, and the children index is exactly what the
// tables' foreign keys say.
func checkInvariants(t testing.TB, c *Catalog) {
	t.Helper()
	want := map[TableName][]ChildRef{}
	for name, tb := range c.tables {
		if tb.TableName() != name {
			t.Fatalf("table %s stored as %s", tb.TableName(), name)
		}
		for i, ix := range tb.Indexes {
			if len(ix.Columns) == 0 || len(ix.Columns) != len(ix.Prefix) {
				t.Fatalf("%s: index %+v malformed", name, ix)
			}
			if ix.Primary && i != 0 {
				t.Fatalf("%s: PRIMARY is index %d", name, i)
			}
			for _, p := range ix.Columns {
				if p < 0 || p >= len(tb.Columns) {
					t.Fatalf("%s: index %s column %d out of range", name, ix.Name, p)
				}
			}
		}
		for _, fk := range tb.ForeignKeys {
			for _, p := range fk.Columns {
				if p < 0 || p >= len(tb.Columns) {
					t.Fatalf("%s: foreign key %s column %d out of range", name, fk.Name, p)
				}
			}
			want[fk.Ref] = append(want[fk.Ref], ChildRef{Child: name, ForeignKey: fk})
		}
		for _, c := range tb.Columns {
			if c.Charset != charsetOf(c.Collation) && !(c.Charset == "" && c.Collation == "") {
				t.Fatalf("%s: column %s has charset %q but collation %q", name, c.Name, c.Charset, c.Collation)
			}
		}
		if !slices.IsSortedFunc(tb.ForeignKeys, func(a, b ForeignKey) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatalf("%s: foreign keys not sorted", name)
		}
	}
	for p, refs := range want {
		slices.SortStableFunc(refs, func(a, b ChildRef) int {
			if x := a.Child.Compare(b.Child); x != 0 {
				return x
			}
			return strings.Compare(a.ForeignKey.Name, b.ForeignKey.Name)
		})
		if got := c.Children(p); !reflect.DeepEqual(got, refs) {
			t.Fatalf("Children(%s) = %+v, want %+v", p, got, refs)
		}
	}
	for p, refs := range c.children {
		if len(refs) == 0 || want[p] == nil {
			t.Fatalf("children index has stale entry for %s: %+v", p, refs)
		}
	}
}

// describe renders a table compactly for table tests:
// "(a int, b varchar latin1_swedish_ci null) PRIMARY(a) u(b:3) fk(b)->`db`.`p`(id) del:CASCADE".
// The table's default collation comes first, in braces, unless it is
// latin1_swedish_ci. A column shows its type, unsigned, collation, null and
// gen(erated); a key its columns with :prefix; a foreign key its actions
// other than RESTRICT.
func describe(tb *Table) string {
	var b strings.Builder
	if tb.Collation != "latin1_swedish_ci" {
		b.WriteString("{" + tb.Collation + "}")
	}
	var cols []string
	for _, c := range tb.Columns {
		s := c.Name + " " + c.Type
		if c.Unsigned {
			s += " unsigned"
		}
		if c.Collation != "" {
			s += " " + c.Collation
		}
		if c.Nullable {
			s += " null"
		}
		if c.Generated {
			s += " gen"
		}
		cols = append(cols, s)
	}
	b.WriteString("(" + strings.Join(cols, ", ") + ")")
	for _, ix := range tb.Indexes {
		var parts []string
		for i, p := range ix.Columns {
			s := tb.Columns[p].Name
			if ix.Prefix[i] > 0 {
				s += ":" + strconv.Itoa(ix.Prefix[i])
			}
			parts = append(parts, s)
		}
		if ix.WithoutOverlaps {
			parts[len(parts)-2] = "period " + parts[len(parts)-2]
		}
		b.WriteString(" " + ix.Name + "(" + strings.Join(parts, ",") + ")")
	}
	for _, fk := range tb.ForeignKeys {
		var parts []string
		for _, p := range fk.Columns {
			parts = append(parts, tb.Columns[p].Name)
		}
		b.WriteString(" " + fk.Name + "(" + strings.Join(parts, ",") + ")->" + fk.Ref.String() + "(" + strings.Join(fk.RefColumns, ",") + ")")
		if fk.OnDelete != Restrict {
			b.WriteString(" del:" + fk.OnDelete.String())
		}
		if fk.OnUpdate != Restrict {
			b.WriteString(" upd:" + fk.OnUpdate.String())
		}
	}
	return b.String()
}

// parseName turns "db.t" into a TableName (test shorthand; no dots in names).
func parseName(s string) TableName {
	schema, name, _ := strings.Cut(s, ".")
	return TableName{schema, name}
}
