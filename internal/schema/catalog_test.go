package schema

import (
	"reflect"
	"testing"
)

func mustApply(t *testing.T, c *Catalog, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.ApplyDDL("db", q); err != nil {
			t.Fatalf("ApplyDDL(%q): %v", q, err)
		}
	}
}

func names(ns ...string) []TableName {
	var out []TableName
	for _, n := range ns {
		out = append(out, parseName(n))
	}
	return out
}

func TestCascadeReach(t *testing.T) {
	c := NewCatalog()
	mustApply(t, c,
		// a → b (CASCADE) → c (SET NULL) → d (RESTRICT only): d is not reached.
		"CREATE TABLE a (id INT PRIMARY KEY)",
		"CREATE TABLE b (id INT PRIMARY KEY, a_id INT, FOREIGN KEY (a_id) REFERENCES a (id) ON DELETE CASCADE)",
		"CREATE TABLE c (id INT PRIMARY KEY, b_id INT, FOREIGN KEY (b_id) REFERENCES b (id) ON UPDATE SET NULL)",
		"CREATE TABLE d (id INT PRIMARY KEY, c_id INT, FOREIGN KEY (c_id) REFERENCES c (id))",
		// b → e through ON UPDATE SET DEFAULT, in another database.
		"CREATE TABLE other.e (b_id INT, FOREIGN KEY (b_id) REFERENCES db.b (id) ON UPDATE SET DEFAULT)",
		// A cycle x → y → x, and a self-reference s → s.
		"CREATE TABLE x (id INT PRIMARY KEY, y_id INT)",
		"CREATE TABLE y (id INT PRIMARY KEY, x_id INT, FOREIGN KEY (x_id) REFERENCES x (id) ON DELETE CASCADE)",
		"ALTER TABLE x ADD FOREIGN KEY (y_id) REFERENCES y (id) ON DELETE SET NULL",
		"CREATE TABLE s (id INT PRIMARY KEY, parent INT, FOREIGN KEY (parent) REFERENCES s (id) ON DELETE CASCADE)",
	)
	for _, tc := range []struct {
		from string
		want []TableName
	}{
		{"db.a", names("db.b", "db.c", "other.e")},
		{"db.b", names("db.c", "other.e")},
		{"db.c", nil},
		{"db.d", nil},
		{"db.x", names("db.x", "db.y")},
		{"db.y", names("db.x", "db.y")},
		{"db.s", names("db.s")},
		{"db.nosuch", nil},
	} {
		if got := c.CascadeReach(parseName(tc.from)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("CascadeReach(%s) = %v, want %v", tc.from, got, tc.want)
		}
	}
	// Dropping the cascading key of b cuts a off from c and e.
	mustApply(t, c, "ALTER TABLE b DROP FOREIGN KEY b_ibfk_1, ADD FOREIGN KEY (a_id) REFERENCES a (id)")
	if got := c.CascadeReach(parseName("db.a")); got != nil {
		t.Errorf("after dropping the cascade, CascadeReach(a) = %v", got)
	}
	checkInvariants(t, c)
}

func TestChildrenFollowRenameAndDrop(t *testing.T) {
	c := NewCatalog()
	mustApply(t, c,
		"CREATE TABLE p (id INT PRIMARY KEY)",
		"CREATE TABLE c1 (p_id INT, CONSTRAINT k1 FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE CASCADE)",
		"CREATE TABLE c2 (p_id INT, FOREIGN KEY (p_id) REFERENCES p (id))",
	)
	child := func(child, fk string, cols ...int) ChildRef {
		return ChildRef{Child: parseName(child), ForeignKey: ForeignKey{Name: fk, Columns: cols, Ref: parseName("db.p2"),
			RefColumns: []string{"id"}, OnDelete: Restrict, OnUpdate: Restrict}}
	}

	// Renaming the parent: the children now reference the new name.
	mustApply(t, c, "RENAME TABLE p TO p2")
	want := []ChildRef{child("db.c1", "k1", 0), child("db.c2", "c2_ibfk_1", 0)}
	want[0].ForeignKey.OnDelete = Cascade
	if got := c.Children(parseName("db.p2")); !reflect.DeepEqual(got, want) {
		t.Errorf("Children(p2) = %+v\nwant %+v", got, want)
	}
	if got := c.Children(parseName("db.p")); got != nil {
		t.Errorf("Children(p) = %+v after rename", got)
	}
	checkInvariants(t, c)

	// Renaming a child, across databases: its generated key name follows.
	mustApply(t, c, "RENAME TABLE c2 TO other.c3")
	want[1] = child("other.c3", "c3_ibfk_1", 0)
	if got := c.Children(parseName("db.p2")); !reflect.DeepEqual(got, want) {
		t.Errorf("Children(p2) = %+v\nwant %+v", got, want)
	}

	// Dropping a child removes its keys; dropping the parent keeps the others'.
	mustApply(t, c, "DROP TABLE c1", "DROP TABLE p2")
	if got := c.Children(parseName("db.p2")); !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("Children(p2) after drops = %+v\nwant %+v", got, want[1:])
	}
	// A new parent under the old name gets the dangling child back.
	mustApply(t, c, "CREATE TABLE p2 (id INT PRIMARY KEY)")
	if got := c.Children(parseName("db.p2")); len(got) != 1 {
		t.Errorf("Children(p2) after re-create = %+v", got)
	}
	mustApply(t, c, "DROP DATABASE other")
	if got := c.Children(parseName("db.p2")); got != nil {
		t.Errorf("Children(p2) after DROP DATABASE = %+v", got)
	}
	checkInvariants(t, c)
}

func TestCatalogCloneIsIndependent(t *testing.T) {
	c := NewCatalog()
	mustApply(t, c, "CREATE TABLE p (id INT PRIMARY KEY)", "CREATE TABLE c (p_id INT REFERENCES p (id))")
	clone := c.Clone()
	before := describe(c.Table("db", "c"))
	mustApply(t, clone, "ALTER TABLE c ADD x INT", "RENAME TABLE p TO q", "CREATE TABLE z (a INT)")
	clone.MarkUnknown("db", "c")
	if got := describe(c.Table("db", "c")); got != before {
		t.Errorf("original changed: %s", got)
	}
	if c.Table("db", "z") != nil || c.Table("db", "p") == nil || c.Unknown("db", "c") || len(c.Children(parseName("db.p"))) != 1 {
		t.Error("original catalog changed by its clone")
	}
	checkInvariants(t, c)
	checkInvariants(t, clone)
}

func TestPutAndTables(t *testing.T) {
	c := NewCatalog()
	c.MarkUnknown("b", "t")
	c.Put(&Table{Schema: "b", Name: "t", Columns: []Column{{Name: "X", Type: "int"}}})
	c.Put(&Table{Schema: "a", Name: "z"})
	c.Put(&Table{Schema: "a", Name: "Z"})
	var got []TableName
	for _, tb := range c.Tables() {
		got = append(got, tb.TableName())
	}
	if want := names("a.Z", "a.z", "b.t"); !reflect.DeepEqual(got, want) {
		t.Errorf("Tables() = %v, want %v", got, want)
	}
	if c.Unknown("b", "t") {
		t.Error("Put did not clear Unknown")
	}
	tb := c.Table("b", "t")
	if tb.ColumnIndex("x") != 0 || tb.ColumnIndex("y") != -1 || tb.PrimaryKey() != nil {
		t.Errorf("ColumnIndex/PrimaryKey wrong on %+v", tb)
	}
	if c.Table("B", "t") != nil {
		t.Error("schema names must be case-sensitive")
	}
}

func TestNamesAndActions(t *testing.T) {
	if got := (TableName{"we`ird db", "t ü"}).String(); got != "`we``ird db`.`t ü`" {
		t.Errorf("String() = %s", got)
	}
	for a, want := range map[Action]string{NoAction: "NO ACTION", Restrict: "RESTRICT", Cascade: "CASCADE",
		SetNull: "SET NULL", SetDefault: "SET DEFAULT", Action(9): "Action(9)"} {
		if a.String() != want {
			t.Errorf("%d.String() = %s, want %s", int(a), a.String(), want)
		}
		if a != Action(9) && parseAction(want) != a {
			t.Errorf("parseAction(%s) = %v", want, parseAction(want))
		}
	}
}
