package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// draft is a table being built or altered. Keys and foreign keys name their
// columns, so that columns can be added, dropped, moved and renamed freely;
// table() turns names into positions at the end.
type draft struct {
	schema, name       string
	charset, collation string
	triggers           bool // see Table.Triggers
	cols               []Column
	keys               []draftKey
	fks                []draftFK
}

type draftKey struct {
	name    string
	primary bool
	cols    []string
	prefix  []int
	hash    bool // USING HASH: MariaDB lists such keys after the others
	// overlaps: the key is over a period WITHOUT OVERLAPS, whose end and
	// start are its last two cols (see Index.WithoutOverlaps).
	overlaps bool
}

type draftFK struct {
	name     string
	cols     []string
	ref      TableName
	refCols  []string
	onDelete Action
	onUpdate Action
}

// draftOf returns a draft of t.
func draftOf(t *Table) *draft {
	d := &draft{schema: t.Schema, name: t.Name, charset: t.Charset, collation: t.Collation, triggers: t.Triggers}
	d.cols = slices.Clone(t.Columns)
	for _, ix := range t.Indexes {
		k := draftKey{name: ix.Name, primary: ix.Primary, prefix: slices.Clone(ix.Prefix), overlaps: ix.WithoutOverlaps}
		for _, p := range ix.Columns {
			k.cols = append(k.cols, t.Columns[p].Name)
		}
		d.keys = append(d.keys, k)
	}
	for _, fk := range t.ForeignKeys {
		f := draftFK{name: fk.Name, ref: fk.Ref, refCols: slices.Clone(fk.RefColumns), onDelete: fk.OnDelete, onUpdate: fk.OnUpdate}
		for _, p := range fk.Columns {
			f.cols = append(f.cols, t.Columns[p].Name)
		}
		d.fks = append(d.fks, f)
	}
	return d
}

// col returns the position of the column named name (case-insensitive), or -1.
func (d *draft) col(name string) int {
	for i := range d.cols {
		if strings.EqualFold(d.cols[i].Name, name) {
			return i
		}
	}
	return -1
}

// key returns the position of the key named name (case-insensitive), or -1.
func (d *draft) key(name string) int {
	for i := range d.keys {
		if strings.EqualFold(d.keys[i].name, name) {
			return i
		}
	}
	return -1
}

func (d *draft) primary() int {
	for i := range d.keys {
		if d.keys[i].primary {
			return i
		}
	}
	return -1
}

// fk returns the position of the foreign key named name, or -1. InnoDB
// compares constraint names case-insensitively.
func (d *draft) fk(name string) int {
	for i := range d.fks {
		if strings.EqualFold(d.fks[i].name, name) {
			return i
		}
	}
	return -1
}

// keyName returns the name the server gives an unnamed key whose first
// column is first: the column name, or name_2, name_3, ... if taken.
func (d *draft) keyName(first string) string {
	if d.key(first) < 0 && !strings.EqualFold(first, "PRIMARY") {
		return first
	}
	for i := 2; ; i++ {
		n := first + "_" + strconv.Itoa(i)
		if d.key(n) < 0 {
			return n
		}
	}
}

// fkName returns the name InnoDB gives the next unnamed foreign key of the
// table: <table>_ibfk_<n>, n one more than the highest such n in use.
func (d *draft) fkName() string {
	prefix := d.name + "_ibfk_"
	n := 0
	for _, fk := range d.fks {
		if rest, ok := strings.CutPrefix(strings.ToLower(fk.name), strings.ToLower(prefix)); ok {
			if i, err := strconv.Atoi(rest); err == nil && i > n {
				n = i
			}
		}
	}
	return prefix + strconv.Itoa(n+1)
}

// addKey adds a PRIMARY or UNIQUE key, naming it as the server would if it
// has no name. It fails on a second primary key.
func (d *draft) addKey(k draftKey) error {
	if k.primary {
		if d.primary() >= 0 {
			return fmt.Errorf("%w: %s already has a primary key", ErrMismatch, d.tableName())
		}
		k.name = "PRIMARY"
	} else if k.name == "" {
		k.name = d.keyName(k.cols[0])
	}
	d.keys = append(d.keys, k)
	return nil
}

// addFK adds a foreign key, naming it as InnoDB would if it has no name.
func (d *draft) addFK(f draftFK) {
	if f.name == "" {
		f.name = d.fkName()
	}
	d.fks = append(d.fks, f)
}

// renameColumn renames a column in the keys and foreign keys that use it.
func (d *draft) renameColumn(from, to string) {
	for i := range d.keys {
		for j, c := range d.keys[i].cols {
			if strings.EqualFold(c, from) {
				d.keys[i].cols[j] = to
			}
		}
	}
	for i := range d.fks {
		for j, c := range d.fks[i].cols {
			if strings.EqualFold(c, from) {
				d.fks[i].cols[j] = to
			}
		}
		// A self-referencing key names the column as parent too.
		if d.fks[i].ref == d.tableName() {
			for j, c := range d.fks[i].refCols {
				if strings.EqualFold(c, from) {
					d.fks[i].refCols[j] = to
				}
			}
		}
	}
}

// dropColumn removes a column and removes it from keys; a key left without
// columns is dropped, as MySQL does. (MariaDB refuses to drop a column of a
// multi-column unique key, so such a statement never reaches the binlog.)
func (d *draft) dropColumn(name string) {
	i := d.col(name)
	d.cols = slices.Delete(d.cols, i, i+1)
	keys := d.keys[:0]
	for _, k := range d.keys {
		for j := 0; j < len(k.cols); j++ {
			if strings.EqualFold(k.cols[j], name) {
				k.cols = slices.Delete(k.cols, j, j+1)
				k.prefix = slices.Delete(k.prefix, j, j+1)
				j--
			}
		}
		if len(k.cols) > 0 {
			keys = append(keys, k)
		}
	}
	d.keys = keys
	d.fks = slices.DeleteFunc(d.fks, func(f draftFK) bool {
		return slices.ContainsFunc(f.cols, func(c string) bool { return strings.EqualFold(c, name) })
	})
}

func (d *draft) tableName() TableName { return TableName{d.schema, d.name} }

// table resolves the draft into a Table: key columns become positions,
// primary key columns become NOT NULL, keys are ordered as the server
// orders them and foreign keys sorted by name.
func (d *draft) table() (*Table, error) {
	t := &Table{Schema: d.schema, Name: d.name, Charset: d.charset, Collation: d.collation, Triggers: d.triggers}
	t.Columns = slices.Clone(d.cols)
	if p := d.primary(); p >= 0 {
		for _, c := range d.keys[p].cols {
			if i := d.col(c); i >= 0 {
				t.Columns[i].Nullable = false
			}
		}
	}
	for _, k := range d.keys {
		ix := Index{Name: k.name, Primary: k.primary, Prefix: slices.Clone(k.prefix), WithoutOverlaps: k.overlaps}
		for _, c := range k.cols {
			i := d.col(c)
			if i < 0 {
				return nil, fmt.Errorf("%w: key %s of %s names unknown column %s", ErrMismatch, QuoteIdent(k.name), d.tableName(), QuoteIdent(c))
			}
			ix.Columns = append(ix.Columns, i)
		}
		t.Indexes = append(t.Indexes, ix)
	}
	sortIndexes(t, func(name string) bool {
		k := d.key(name)
		return k >= 0 && d.keys[k].hash
	})
	for _, f := range d.fks {
		fk := ForeignKey{Name: f.name, Ref: f.ref, RefColumns: slices.Clone(f.refCols), OnDelete: f.onDelete, OnUpdate: f.onUpdate}
		for _, c := range f.cols {
			i := d.col(c)
			if i < 0 {
				return nil, fmt.Errorf("%w: foreign key %s of %s names unknown column %s", ErrMismatch, QuoteIdent(f.name), d.tableName(), QuoteIdent(c))
			}
			fk.Columns = append(fk.Columns, i)
		}
		t.ForeignKeys = append(t.ForeignKeys, fk)
	}
	slices.SortFunc(t.ForeignKeys, func(a, b ForeignKey) int { return strings.Compare(a.Name, b.Name) })
	return t, nil
}

// sortIndexes orders keys as MariaDB does (sort_keys in sql_table.cc):
// PRIMARY, then unique keys on NOT NULL columns (whole columns before
// prefixes), then unique keys with a nullable column (likewise), then
// "long unique" hash keys; the definition order otherwise. MariaDB also turns
// unique keys that are too long for the engine into hash keys; that is not
// modelled, so such a key may come earlier here than on the server. The
// order carries no meaning for replication. usingHash, if not nil, tells
// which keys were declared USING HASH.
func sortIndexes(t *Table, usingHash func(name string) bool) {
	rank := func(ix Index) int {
		if ix.Primary {
			return 0
		}
		hash := usingHash != nil && usingHash(ix.Name)
		nullable, partial := false, false
		for j, c := range ix.Columns {
			col := t.Columns[c]
			nullable = nullable || col.Nullable
			if ix.Prefix[j] > 0 {
				partial = true
			} else if isLOB(col.Type) {
				hash = true
			}
		}
		switch {
		case hash:
			return 5
		case nullable && partial:
			return 4
		case nullable:
			return 3
		case partial:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(t.Indexes, func(a, b Index) int { return rank(a) - rank(b) })
}

// isLOB reports whether a type is one of the TEXT or BLOB types.
func isLOB(typ string) bool {
	return strings.HasSuffix(typ, "text") || strings.HasSuffix(typ, "blob")
}
