package deptrack

import (
	"hash/maphash"
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/deptrack/collation"
	"github.com/paraply/paraply/internal/schema"
)

// tablePlan is what the extractor needs to know about one table, derived
// once from the catalog.
type tablePlan struct {
	token        uint64    // this table's token
	keyless      bool      // no primary key nor unique key on NOT NULL columns: writers are exclusive
	cascadeChild bool      // a parent's cascading foreign key can change its rows
	cascades     []uint64  // tokens of tables an update or delete here can cascade into
	keys         []keyPlan // unique keys, referenced column lists, parent keys of foreign keys
	columns      []bool    // the columns keys reads (see Extractor.Columns), once asked
	// For statements (see statementKeys): uniques is set when the table
	// has unique keys besides the primary key, parent when it has
	// children. A statement that keeps them gets keys then: one that
	// assigns none of kept (their columns, lower case), on a table where
	// keepable (no such key holds a generated column, every child
	// references the primary key); and where uniques, an UPDATE, or an
	// INSERT that gives those keys' values.
	uniques, parent, keepable bool
	kept                      []string
	// uniqueKeys are the indexes in keys of the other unique keys (-1 for
	// one not hashed), which an INSERT's rows key by their values.
	uniqueKeys []int
	// pk is the primary key's columns as statements key them, and pkKey
	// its index in keys; pkKey is -1 where statements cannot key the table
	// by it (no primary key, a prefix or WITHOUT OVERLAPS part, a column
	// that is generated or of no literal kind).
	pk    []pkPart
	pkKey int
	// fkKeys is, for each of the table's foreign keys, the index in keys
	// of the parent key its columns hash to (-1 for none).
	fkKeys []int
}

// keyPlan describes one key hashed for each row image.
type keyPlan struct {
	table  string     // quoted name of the table owning the key (the parent for a foreign key)
	name   string     // index name
	prefix []byte     // hash input identifying table and index
	cols   []int      // positions in the row image
	parts  []partPlan // how each value folds
}

// pkPart is a primary key column: its position, its name (lower case),
// the literals that key it (literalKind), and, for a key of one column,
// whether stmtmerge may merge statements by it (mergeableKey).
type pkPart struct {
	pos    int
	name   string
	kind   int
	merges bool
}

type partPlan struct {
	coll   *collation.Collation // how string values key
	prefix int                  // a prefix index's length, 0 for the whole value
	// unsigned is the width of an UNSIGNED integer column: a row image
	// whose table map leaves signedness out (binlog_row_metadata=NO_LOG,
	// MariaDB's default) decodes the upper half of its range negative, one
	// that says it does not, and a statement's literal is neither (see
	// appendInteger).
	unsigned int
}

func (x *Extractor) plan(t *schema.Table) *tablePlan {
	if p, ok := x.plans[t]; ok {
		return p
	}
	name := schema.TableName{Schema: t.Schema, Name: t.Name}
	p := &tablePlan{token: tableToken(name)}
	// A row is known by its keys only if one of them can never be NULL: a
	// unique key with a NULL part holds any number of such rows, which
	// then have no key at all (MySQL falls back to commit order for them).
	// Without such a key the table is keyless.
	// A WITHOUT OVERLAPS key hashes only its parts before the period: two
	// rows whose periods overlap conflict through it without being equal
	// in every part (see schema.Index.ConflictColumns).
	p.keyless = true
	for _, ix := range t.Indexes {
		cols, prefix := ix.ConflictColumns()
		if ix.Primary || !slices.ContainsFunc(cols, func(c int) bool { return t.Columns[c].Nullable }) {
			p.keyless = false
		}
		p.keys = append(p.keys, newKeyPlan(t, ix.Name, cols, prefix, t, cols))
	}
	// Column lists other tables' foreign keys reference without a unique
	// index on them: hash them too, or a child row could miss its parent.
	children := x.catalog.Children(name)
	for _, ch := range children {
		cols := positions(t, ch.ForeignKey.RefColumns)
		if cols == nil {
			continue
		}
		if _, ok := matchUnique(t, cols); ok {
			continue
		}
		kn, sorted := refListName(t, cols)
		if !slices.ContainsFunc(p.keys, func(k keyPlan) bool { return k.name == kn }) {
			p.keys = append(p.keys, newKeyPlan(t, kn, sorted, nil, t, sorted))
		}
	}
	p.forStatements(t, children)
	for _, fk := range t.ForeignKeys {
		if fk.Cascades() {
			p.cascadeChild = true
		}
		k := -1
		if kp, ok := x.parentKey(t, fk); ok {
			k = len(p.keys)
			p.keys = append(p.keys, kp)
		}
		p.fkKeys = append(p.fkKeys, k)
	}
	for _, c := range x.catalog.CascadeReach(name) {
		p.cascades = append(p.cascades, tableToken(c))
	}
	x.plans[t] = p
	return p
}

// forStatements sets what statementKeys needs to know of t beyond its
// primary key: its other unique keys and its children. A child that
// references the primary key hashes a row's reference as the parent row's
// key (see parentKey), so a child row's change and an UPDATE of the parent
// row, whose locks meet in the target's foreign key check, run in order; a
// reference to other columns hashes values a statement's text does not
// say.
func (p *tablePlan) forStatements(t *schema.Table, children []schema.ChildRef) {
	p.keepable = true
	for _, ix := range t.Indexes {
		if ix.Primary {
			continue
		}
		p.uniques = true
		p.uniqueKeys = append(p.uniqueKeys, slices.IndexFunc(p.keys, func(k keyPlan) bool { return k.name == ix.Name }))
		for _, c := range ix.Columns {
			p.kept = append(p.kept, strings.ToLower(t.Columns[c].Name))
			p.keepable = p.keepable && !t.Columns[c].Generated
		}
	}
	p.pkKey = -1
	if ix := t.PrimaryKey(); ix != nil {
		p.pkKey = slices.IndexFunc(p.keys, func(k keyPlan) bool { return k.name == ix.Name })
		for _, c := range ix.Columns {
			col := &t.Columns[c]
			part := pkPart{pos: c, name: strings.ToLower(col.Name), kind: literalKind(col), merges: len(ix.Columns) == 1 && mergeableKey(col)}
			if part.kind == 0 || col.Generated {
				p.pkKey = -1
			}
			p.pk = append(p.pk, part)
		}
		if ix.WithoutOverlaps || slices.ContainsFunc(ix.Prefix, func(n int) bool { return n != 0 }) {
			p.pkKey = -1
		}
	}
	for _, ref := range children {
		p.parent = true
		p.keepable = p.keepable && len(p.pk) > 0 && slices.EqualFunc(ref.ForeignKey.RefColumns, p.pk, func(r string, c pkPart) bool { return strings.EqualFold(r, c.name) })
	}
}

// parentKey is the key a child row's foreign key columns hash to: the same
// hash the parent row's matching unique key (or referenced list) has.
func (x *Extractor) parentKey(child *schema.Table, fk schema.ForeignKey) (keyPlan, bool) {
	parent := x.catalog.Table(fk.Ref.Schema, fk.Ref.Name)
	if parent == nil || len(fk.Columns) != len(fk.RefColumns) {
		// Writes to an unknown parent are barriers anyway; hash with the
		// child's own columns so that child rows still conflict by parent.
		name := "fk(" + strings.Join(fk.RefColumns, ",") + ")"
		return newKeyPlanFor(fk.Ref, name, fk.Columns, child, fk.Columns), len(fk.Columns) > 0
	}
	pcols := positions(parent, fk.RefColumns)
	if pcols == nil {
		return keyPlan{}, false
	}
	// childOf maps a parent column position to the child column holding it.
	childOf := map[int]int{}
	for i, pc := range pcols {
		childOf[pc] = fk.Columns[i]
	}
	var name string
	var order []int
	if ix, ok := matchUnique(parent, pcols); ok {
		name, order = ix.Name, ix.Columns
	} else {
		name, order = refListName(parent, pcols)
	}
	ccols := make([]int, len(order))
	for i, pc := range order {
		ccols[i] = childOf[pc]
	}
	return newKeyPlan(parent, name, ccols, nil, parent, order), true
}

// newKeyPlan builds a key owned by table owner, read from positions cols of
// the row image, folding values as owner's columns ocols do.
func newKeyPlan(owner *schema.Table, name string, cols []int, prefixes []int, fold *schema.Table, ocols []int) keyPlan {
	k := newKeyPlanFor(schema.TableName{Schema: owner.Schema, Name: owner.Name}, name, cols, fold, ocols)
	for i := range k.parts {
		if i < len(prefixes) {
			k.parts[i].prefix = prefixes[i]
		}
	}
	return k
}

func newKeyPlanFor(owner schema.TableName, name string, cols []int, fold *schema.Table, ocols []int) keyPlan {
	k := keyPlan{table: owner.String(), name: name, cols: cols}
	k.prefix = append(k.prefix, owner.Schema...)
	k.prefix = append(k.prefix, 0)
	k.prefix = append(k.prefix, owner.Name...)
	k.prefix = append(k.prefix, 0)
	k.prefix = append(k.prefix, name...)
	k.prefix = append(k.prefix, 0)
	k.parts = make([]partPlan, len(cols))
	for i := range k.parts {
		k.parts[i].coll = collation.Lookup("binary", "binary")
	}
	for i, oc := range ocols {
		if oc >= 0 && oc < len(fold.Columns) {
			k.parts[i] = partPlan{coll: columnCollation(fold.Columns[oc]), unsigned: unsignedBits(fold.Columns[oc])}
		}
	}
	return k
}

// unsignedBits is partPlan.unsigned for column c.
func unsignedBits(c schema.Column) int {
	if !c.Unsigned {
		return 0
	}
	return integerBits(c.Type)
}

// columnCollation is how a column's string values compare: by their
// collation for character columns, byte for byte for the others (binary
// strings, and DECIMAL or temporal values, which the row images carry as
// canonical strings).
func columnCollation(c schema.Column) *collation.Collation {
	if c.Charset == "" {
		return collation.Lookup("binary", "binary")
	}
	return collation.Lookup(c.Charset, c.Collation)
}

// matchUnique finds a unique index over exactly the columns cols (in any
// order, without prefixes) whose key hashes them all: not a WITHOUT
// OVERLAPS key, which hashes fewer.
func matchUnique(t *schema.Table, cols []int) (schema.Index, bool) {
	for _, ix := range t.Indexes {
		if ix.WithoutOverlaps || len(ix.Columns) != len(cols) || slices.ContainsFunc(ix.Prefix, func(p int) bool { return p > 0 }) {
			continue
		}
		if sameSet(ix.Columns, cols) {
			return ix, true
		}
	}
	return schema.Index{}, false
}

// refListName names a referenced column list canonically (sorted), so that
// parent and child sides agree; it returns the positions in that order.
func refListName(t *schema.Table, cols []int) (string, []int) {
	sorted := slices.Clone(cols)
	slices.SortFunc(sorted, func(a, b int) int { return strings.Compare(t.Columns[a].Name, t.Columns[b].Name) })
	names := make([]string, len(sorted))
	for i, c := range sorted {
		names[i] = t.Columns[c].Name
	}
	return "fk(" + strings.Join(names, ",") + ")", sorted
}

func positions(t *schema.Table, names []string) []int {
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = t.ColumnIndex(n)
		if out[i] < 0 {
			return nil
		}
	}
	return out
}

func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func tableToken(n schema.TableName) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString("table\x00")
	h.WriteString(n.Schema)
	h.WriteByte(0)
	h.WriteString(n.Name)
	return h.Sum64()
}
