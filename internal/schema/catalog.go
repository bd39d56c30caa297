package schema

import (
	"maps"
	"slices"
	"strings"
)

// Catalog holds every known table, the default character set of every known
// database, and the tables whose definition is uncertain (Unknown).
//
// Concurrency: the read methods (Table, Tables, Children, CascadeReach,
// Unknown, Schema, Clone, ...) may run concurrently with each other, but not
// with a method that mutates the catalog (Put, ApplyDDL, Set...). The owner
// of a catalog that keeps applying DDL hands readers a Clone: clones are
// independent, and cheap because tables are shared (a *Table in a catalog is
// never modified, only replaced).
type Catalog struct {
	tables  map[TableName]*Table
	unknown map[TableName]bool
	schemas map[string]Schema
	// children maps a parent table name to the foreign keys that reference
	// it, whether or not the parent exists. Each slice is sorted by child,
	// then constraint name, and is replaced, never modified in place, so
	// clones may share it.
	children map[TableName][]ChildRef
	// server is the server's default character set and collation, for
	// databases the catalog has not seen created.
	server    Schema
	serverSet bool
	// complete holds the databases whose every table the catalog has
	// (loaded from a server, or created since); allSchemas is set when
	// the catalog has every database (loaded from a whole server).
	complete   map[string]bool
	allSchemas bool
	// charsetDefault overrides the default collation of a character set
	// (MySQL 8: utf8mb4 → utf8mb4_0900_ai_ci).
	charsetDefault map[string]string
	flavor         Flavor
}

// Flavor is the kind of server whose DDL a catalog follows, where MariaDB
// and MySQL read the same statement differently.
type Flavor int

const (
	// MariaDB: JSON is LONGTEXT with utf8mb4_bin; a column-level REFERENCES
	// creates a foreign key.
	MariaDB Flavor = iota
	// MySQL 8: JSON is its own type without a character set; a column-level
	// REFERENCES is ignored; utf8mb4 defaults to utf8mb4_0900_ai_ci.
	MySQL
)

// Schema is a database and its default character set and collation.
type Schema struct {
	Name, Charset, Collation string
}

// NewCatalog returns an empty catalog. Its server defaults are MariaDB's
// compiled-in ones (latin1, latin1_swedish_ci); see SetServerCollation.
func NewCatalog() *Catalog {
	return &Catalog{
		tables:         map[TableName]*Table{},
		unknown:        map[TableName]bool{},
		schemas:        map[string]Schema{},
		children:       map[TableName][]ChildRef{},
		complete:       map[string]bool{},
		server:         Schema{Charset: "latin1", Collation: "latin1_swedish_ci"},
		charsetDefault: map[string]string{},
	}
}

// Table returns the table schema.name (exact case), or nil if the catalog
// does not have it. A table can be Unknown and still be returned: its last
// known definition, which may be wrong.
func (c *Catalog) Table(schema, name string) *Table {
	return c.tables[TableName{schema, name}]
}

// Put stores t, replacing any table of the same name, and clears its Unknown
// mark. The catalog takes t over: the caller must not modify it afterwards.
func (c *Catalog) Put(t *Table) {
	name := t.TableName()
	if old := c.tables[name]; old != nil {
		c.unlink(old)
	}
	c.tables[name] = t
	delete(c.unknown, name)
	c.link(t)
}

// remove drops a table and its Unknown mark. The foreign keys of other
// tables that reference it stay, as they do on the server.
func (c *Catalog) remove(name TableName) {
	if old := c.tables[name]; old != nil {
		c.unlink(old)
		delete(c.tables, name)
	}
	delete(c.unknown, name)
}

// MarkUnknown records that the definition of schema.name is uncertain (a
// row event disagrees with it, say). The table, if the catalog has it,
// stays as it was; Put clears the mark.
func (c *Catalog) MarkUnknown(schema, name string) {
	c.markUnknown(TableName{schema, name})
}

func (c *Catalog) markUnknown(name TableName) {
	c.unknown[name] = true
}

// Tables returns every table, sorted by schema and name.
func (c *Catalog) Tables() []*Table {
	out := make([]*Table, 0, len(c.tables))
	for _, t := range c.tables {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Table) int { return a.TableName().Compare(b.TableName()) })
	return out
}

// Children returns the foreign keys of tables that reference parent, sorted
// by child table and constraint name. Foreign keys referencing a table that
// does not exist (created with foreign_key_checks=0, or whose parent was
// dropped) are included: they come back to life with the parent.
func (c *Catalog) Children(parent TableName) []ChildRef {
	return slices.Clone(c.children[parent])
}

// CascadeReach returns the tables whose rows the engine can change by itself
// when rows of t change: the children of t through foreign keys with ON
// DELETE or ON UPDATE CASCADE, SET NULL or SET DEFAULT, their children
// through such keys, and so on. t itself is included only when a cycle of
// such keys (a self-reference, say) leads back to it. The result is sorted,
// and empty (nil) if there is none.
func (c *Catalog) CascadeReach(t TableName) []TableName {
	seen := map[TableName]bool{}
	queue := []TableName{t}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, ref := range c.children[p] {
			if ref.ForeignKey.Cascades() && !seen[ref.Child] {
				seen[ref.Child] = true
				queue = append(queue, ref.Child)
			}
		}
	}
	if len(seen) == 0 {
		return nil
	}
	out := slices.Collect(maps.Keys(seen))
	slices.SortFunc(out, TableName.Compare)
	return out
}

// Unknown reports whether a DDL statement touched schema.name and could not
// be understood, or did not fit what the catalog knew: the table's columns
// and keys may be wrong, or the catalog may not have the table at all.
// Put, a later CREATE TABLE and DROP TABLE clear the mark.
func (c *Catalog) Unknown(schema, name string) bool {
	return c.unknown[TableName{schema, name}]
}

// UnknownTables returns every table marked Unknown, sorted.
func (c *Catalog) UnknownTables() []TableName {
	out := slices.Collect(maps.Keys(c.unknown))
	slices.SortFunc(out, TableName.Compare)
	return out
}

// Schema returns the database name and its default character set and
// collation, if the catalog knows it (from Load, a dump or CREATE DATABASE).
func (c *Catalog) Schema(name string) (Schema, bool) {
	s, ok := c.schemas[name]
	return s, ok
}

// SetServerCollation sets the server's default collation (collation_server),
// which a database created without a character set gets. The character set
// follows from the collation.
func (c *Catalog) SetServerCollation(collation string) {
	collation = normCollation(collation)
	c.server = Schema{Charset: charsetOf(collation), Collation: collation}
	c.serverSet = true
}

// unknownCharset stands for a character set or collation a statement
// inherited from its session on the source that the catalog cannot name.
// A table that would inherit it is marked Unknown; a column that does
// anyway keys every value alike (it names no collation paraply weighs).
const unknownCharset = "?"

// useSession puts a statement's session settings in force and returns what
// restores the catalog's own.
func (c *Catalog) useSession(s Session) (restore func()) {
	server := c.server
	utf8, hadUTF8 := c.charsetDefault["utf8mb4"]
	if s.CollationServer != 0 {
		co := collationByID(c.flavor, s.CollationServer)
		c.server = Schema{Charset: charsetOf(co), Collation: co}
		if c.server.Charset == "" {
			c.server = Schema{Charset: unknownCharset, Collation: unknownCharset}
		}
	}
	if s.DefaultUTF8MB4 != 0 {
		co := collationByID(c.flavor, s.DefaultUTF8MB4)
		if charsetOf(co) != "utf8mb4" {
			co = unknownCharset
		}
		c.charsetDefault["utf8mb4"] = co
	}
	return func() {
		c.server = server
		if hadUTF8 {
			c.charsetDefault["utf8mb4"] = utf8
		} else {
			delete(c.charsetDefault, "utf8mb4")
		}
	}
}

// HasServerCollation reports whether SetServerCollation (or Load, which
// reads the server's) set the server's default collation.
func (c *Catalog) HasServerCollation() bool { return c.serverSet }

// Flavor is the kind of server whose DDL the catalog follows.
func (c *Catalog) Flavor() Flavor { return c.flavor }

// SetFlavor sets the kind of server whose DDL the catalog follows (MariaDB
// by default). MySQL also makes utf8mb4 default to utf8mb4_0900_ai_ci.
func (c *Catalog) SetFlavor(f Flavor) {
	c.flavor = f
	if f == MySQL {
		c.SetCharsetDefault("utf8mb4", "utf8mb4_0900_ai_ci")
	} else {
		delete(c.charsetDefault, "utf8mb4")
	}
}

// SetCharsetDefault sets the collation that columns and tables declared with
// character set charset but no collation get. The built-in defaults are
// MariaDB's (utf8mb4 → utf8mb4_general_ci); a MySQL 8 source wants utf8mb4 →
// utf8mb4_0900_ai_ci.
func (c *Catalog) SetCharsetDefault(charset, collation string) {
	c.charsetDefault[normCharset(charset)] = normCollation(collation)
}

// Clone returns an independent copy of c. Tables are shared, which is safe
// because the catalog never modifies a *Table.
func (c *Catalog) Clone() *Catalog {
	return &Catalog{
		tables:         maps.Clone(c.tables),
		unknown:        maps.Clone(c.unknown),
		schemas:        maps.Clone(c.schemas),
		children:       maps.Clone(c.children),
		server:         c.server,
		serverSet:      c.serverSet,
		complete:       maps.Clone(c.complete),
		allSchemas:     c.allSchemas,
		charsetDefault: maps.Clone(c.charsetDefault),
		flavor:         c.flavor,
	}
}

// defaultCollation returns the collation of charset cs when none is named.
func (c *Catalog) defaultCollation(cs string) string {
	if co, ok := c.charsetDefault[cs]; ok {
		return co
	}
	return defaultCollation(cs)
}

// schemaDefaults returns the default character set and collation of a
// database, or the server's if the catalog does not know the database.
func (c *Catalog) schemaDefaults(schema string) (charset, collation string) {
	if s, ok := c.schemas[schema]; ok && s.Charset != "" {
		return s.Charset, s.Collation
	}
	return c.server.Charset, c.server.Collation
}

// link adds the foreign keys of t to the children index.
func (c *Catalog) link(t *Table) {
	child := t.TableName()
	for _, fk := range t.ForeignKeys {
		refs := append(slices.Clip(c.children[fk.Ref]), ChildRef{Child: child, ForeignKey: fk.clone()})
		slices.SortStableFunc(refs, func(a, b ChildRef) int {
			if x := a.Child.Compare(b.Child); x != 0 {
				return x
			}
			return strings.Compare(a.ForeignKey.Name, b.ForeignKey.Name)
		})
		c.children[fk.Ref] = refs
	}
}

// unlink removes the foreign keys of t from the children index.
func (c *Catalog) unlink(t *Table) {
	child := t.TableName()
	for _, fk := range t.ForeignKeys {
		old, ok := c.children[fk.Ref]
		if !ok {
			continue // a second key to the same parent, already done
		}
		var refs []ChildRef
		for _, r := range old {
			if r.Child != child {
				refs = append(refs, r)
			}
		}
		if len(refs) == 0 {
			delete(c.children, fk.Ref)
		} else {
			c.children[fk.Ref] = refs
		}
	}
}

// rename moves table from to to, as RENAME TABLE does: the foreign keys of
// other tables (and its own) that reference from now reference to, and its
// generated constraint names follow, as InnoDB updates them. The Unknown
// mark moves along. It returns the other tables whose foreign keys changed,
// and false if the catalog has no table from (the caller decides what that
// means).
func (c *Catalog) rename(from, to TableName) ([]TableName, bool) {
	wasUnknown := c.unknown[from]
	t := c.tables[from]
	if t == nil {
		delete(c.unknown, from)
		return nil, false
	}
	c.remove(from)
	nt := t.Clone()
	nt.Schema, nt.Name = to.Schema, to.Name
	for i := range nt.ForeignKeys {
		fk := &nt.ForeignKeys[i]
		if fk.Ref == from {
			fk.Ref = to
		}
		// InnoDB renames generated constraint names along: t_ibfk_1 → u_ibfk_1.
		if suffix, ok := strings.CutPrefix(fk.Name, from.Name+"_ibfk_"); ok {
			fk.Name = to.Name + "_ibfk_" + suffix
		}
	}
	slices.SortFunc(nt.ForeignKeys, func(a, b ForeignKey) int { return strings.Compare(a.Name, b.Name) })
	// Children of the old name follow the rename.
	var changed []TableName
	for _, child := range childTables(c.children[from]) {
		ct := c.tables[child]
		if ct == nil {
			continue
		}
		changed = append(changed, child)
		ct = ct.Clone()
		for i := range ct.ForeignKeys {
			if ct.ForeignKeys[i].Ref == from {
				ct.ForeignKeys[i].Ref = to
			}
		}
		unknown := c.unknown[child]
		c.Put(ct)
		if unknown {
			c.markUnknown(child)
		}
	}
	c.remove(to)
	c.Put(nt)
	if wasUnknown {
		c.markUnknown(to)
	}
	return changed, true
}

// dropSchema removes a database and all its tables.
func (c *Catalog) dropSchema(schema string) []TableName {
	var dropped []TableName
	for name := range c.tables {
		if name.Schema == schema {
			dropped = append(dropped, name)
		}
	}
	for name := range c.unknown {
		if name.Schema == schema && c.tables[name] == nil {
			dropped = append(dropped, name)
		}
	}
	for _, name := range dropped {
		c.remove(name)
	}
	delete(c.schemas, schema)
	delete(c.complete, schema)
	slices.SortFunc(dropped, TableName.Compare)
	return dropped
}

// childTables returns the distinct child tables of refs, in order.
func childTables(refs []ChildRef) []TableName {
	var out []TableName
	for _, r := range refs {
		if len(out) == 0 || out[len(out)-1] != r.Child {
			out = append(out, r.Child)
		}
	}
	return out
}

// TemporalPrecision gives the decoder (binlog.PrecisionFunc) the
// precision of the columns of a table (Table.TemporalPrecision), nil when
// the catalog has no such table. A table the catalog marks unknown (DDL it
// could not follow) still gives its columns: their precision changes only
// with DDL that names the columns, and a column whose position no longer
// holds a temporal column gives -1.
func (c *Catalog) TemporalPrecision(db, table string) (digits []int, skip bool) {
	t := c.Table(db, table)
	if t == nil {
		return nil, false
	}
	return t.TemporalPrecision(), false
}
