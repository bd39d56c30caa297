package schema

import (
	"bytes"
	"context"
	"reflect"
	"testing"
)

// TestPrecisionFollowsDDL: CREATE TABLE, ALTER TABLE and CREATE TABLE ...
// LIKE give temporal columns their precision, and other columns none.
func TestPrecisionFollowsDDL(t *testing.T) {
	c := NewCatalog()
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE t (id INT PRIMARY KEY, a TIME, b TIME(3), c DATETIME(6), d TIMESTAMP(1) NULL, e DATE, f YEAR, g DECIMAL(10,4), h VARCHAR(5))",
		"CREATE TABLE u LIKE t",
		"ALTER TABLE u MODIFY a TIME(2), ADD x DATETIME(4) FIRST, CHANGE c c2 DATETIME, MODIFY b VARCHAR(3)",
	} {
		if _, err := c.ApplyDDL("d", q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, w := range []struct {
		table string
		want  []int
	}{
		{"t", []int{-1, 0, 3, 6, 1, -1, -1, -1, -1}},
		{"u", []int{4, -1, 2, -1, 0, 1, -1, -1, -1, -1}},
	} {
		if got := c.Table("d", w.table).TemporalPrecision(); !reflect.DeepEqual(got, w.want) {
			t.Errorf("%s: %v, want %v", w.table, got, w.want)
		}
	}
}

// TestLivePrecision: the precision of old-format (MariaDB 5.3) temporal
// columns, which SHOW CREATE TABLE shows as "time(1) /* mariadb-5.3 */",
// is the same from information_schema, from a dump and from following the
// DDL, and that of the current format's columns.
func TestLivePrecision(t *testing.T) {
	s := sharedServer(t)
	ctx := context.Background()
	const cols = "(id INT PRIMARY KEY, a TIME(1), b DATETIME(6), c TIMESTAMP(3) NULL, d TIME, e DATETIME, f TIMESTAMP NULL, g DATE, h VARCHAR(3))"
	s.Exec(t, "DROP DATABASE IF EXISTS prec; CREATE DATABASE prec; USE prec;\n"+
		"SET GLOBAL mysql56_temporal_format=OFF;\n"+
		"CREATE TABLE old "+cols+";\n"+
		"SET GLOBAL mysql56_temporal_format=ON;\n"+
		"CREATE TABLE new "+cols+";\n")
	want := []int{-1, 1, 6, 3, 0, 0, 0, -1, -1}
	dump := s.Dump(t, "--no-data", "prec")
	if !bytes.Contains(dump, []byte("/* mariadb-5.3 */")) {
		t.Fatalf("the dump shows no old-format column:\n%s", dump)
	}
	loaded, err := Load(ctx, s.DB(), "prec")
	if err != nil {
		t.Fatal(err)
	}
	parsed, warnings, err := Parse(bytes.NewReader(dump), "prec.sql")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Parse: %v %v", err, warnings)
	}
	followed := NewCatalog()
	for _, q := range []string{"CREATE DATABASE prec", "CREATE TABLE old " + cols, "CREATE TABLE new " + cols} {
		if _, err := followed.ApplyDDL("prec", q); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]*Catalog{"Load": loaded, "Parse": parsed, "ApplyDDL": followed} {
		for _, table := range []string{"old", "new"} {
			tb := c.Table("prec", table)
			if tb == nil {
				t.Errorf("%s: no table %s", name, table)
				continue
			}
			if got := tb.TemporalPrecision(); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s: %v, want %v", name, table, got, want)
			}
		}
	}
	if !reflect.DeepEqual(loaded.Table("prec", "old").Columns, parsed.Table("prec", "old").Columns) {
		t.Errorf("Load and Parse differ:\n%+v\n%+v", loaded.Table("prec", "old").Columns, parsed.Table("prec", "old").Columns)
	}
}
