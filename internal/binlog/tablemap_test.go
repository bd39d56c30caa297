package binlog

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// tableMaps returns the format description and the table map events of a
// binlog file.
func tableMaps(t *testing.T, path string) (*Format, []Event) {
	t.Helper()
	var fm *Format
	var maps []Event
	for _, rt := range rawTxns(t, path) {
		for _, ev := range rt.Events {
			if ev.Type() == replication.TABLE_MAP_EVENT {
				fm = rt.Format
				maps = append(maps, Event{Data: slices.Clone(ev.Data), Pos: ev.Pos})
			}
		}
	}
	if fm == nil {
		t.Fatalf("%s: no table map", path)
	}
	return fm, maps
}

// parseChecked parses ev with go-mysql's parser, checksums verified.
func parseChecked(t *testing.T, fm *Format, ev Event) *replication.TableMapEvent {
	t.Helper()
	p := replication.NewBinlogParser()
	p.SetFlavor(fm.Flavor.String())
	p.SetVerifyChecksum(true)
	if _, err := p.Parse(fm.Event.Data); err != nil {
		t.Fatal(err)
	}
	be, err := p.Parse(ev.Data)
	if err != nil {
		t.Fatalf("go-mysql rejects the event: %v", err)
	}
	tm, ok := be.Event.(*replication.TableMapEvent)
	if !ok {
		t.Fatalf("parsed as %T", be.Event)
	}
	return tm
}

// TestRewriteTableMapSchema renames the schema of every table map of a
// MariaDB 10.11 binlog (CRC32, full row metadata) to names shorter,
// longer, with a backtick and in Unicode, and parses the result with
// go-mysql with checksums verified: the new schema, and everything else
// (table, table id, column types, metadata, names, keys) as before.
func TestRewriteTableMapSchema(t *testing.T) {
	fm, maps := tableMaps(t, "testdata/mariadb-10.11-fidelity.000001")
	if !fm.Checksum {
		t.Fatal("the fixture has no checksums: the CRC32 recomputation would go untested")
	}
	names := []string{"x", "a_much_longer_schema_name_than_before", "ü`ber", strings.Repeat("s", 64)}
	for _, ev := range maps {
		orig := parseChecked(t, fm, ev)
		schema, table, err := TableMapNames(ev)
		if err != nil || schema != string(orig.Schema) || table != string(orig.Table) {
			t.Fatalf("TableMapNames = %q, %q, %v; go-mysql says %q, %q", schema, table, err, orig.Schema, orig.Table)
		}
		if TableID(ev) != orig.TableID {
			t.Fatalf("TableID = %d, go-mysql says %d", TableID(ev), orig.TableID)
		}
		for _, name := range names {
			out, err := RewriteTableMapSchema(ev, name, true)
			if err != nil {
				t.Fatal(err)
			}
			if out.Size() != uint32(len(out.Data)) || out.LogPos() != ev.LogPos() || out.Pos != ev.Pos {
				t.Fatalf("header: size %d for %d bytes, log pos %d (was %d)", out.Size(), len(out.Data), out.LogPos(), ev.LogPos())
			}
			got := parseChecked(t, fm, out)
			if string(got.Schema) != name {
				t.Fatalf("schema %q, want %q", got.Schema, name)
			}
			if string(got.Table) != string(orig.Table) || got.TableID != orig.TableID || got.Flags != orig.Flags ||
				got.ColumnCount != orig.ColumnCount || !bytes.Equal(got.ColumnType, orig.ColumnType) ||
				!slices.Equal(got.ColumnMeta, orig.ColumnMeta) || !bytes.Equal(got.NullBitmap, orig.NullBitmap) ||
				!slices.EqualFunc(got.ColumnName, orig.ColumnName, bytes.Equal) || !slices.Equal(got.PrimaryKey, orig.PrimaryKey) {
				t.Fatalf("%s.%s renamed to %q: the rest of the event changed", orig.Schema, orig.Table, name)
			}
			if got.ColumnName == nil {
				t.Fatalf("%s.%s: no column names: the fixture should have full row metadata", orig.Schema, orig.Table)
			}
		}
	}
	// The original is untouched (rows events keep pointing at it).
	if again := parseChecked(t, fm, maps[0]); string(again.Schema) == names[len(names)-1] {
		t.Fatal("the original event was modified")
	}
}

// TestRewriteTableMapSchemaRefuses: names that do not fit, and damaged
// events, are errors, not panics.
func TestRewriteTableMapSchemaRefuses(t *testing.T) {
	_, maps := tableMaps(t, "testdata/mariadb-10.11-fidelity.000001")
	if _, err := RewriteTableMapSchema(maps[0], strings.Repeat("x", 256), true); err == nil {
		t.Fatal("a 256-byte schema name was accepted")
	}
	for n := 0; n < tableMapSchema+4; n++ {
		cut := Event{Data: maps[0].Data[:n]}
		if _, err := RewriteTableMapSchema(cut, "db", true); err == nil {
			t.Fatalf("a table map cut to %d bytes was rewritten", n)
		}
		if _, _, err := TableMapNames(cut); err == nil {
			t.Fatalf("names read from a table map cut to %d bytes", n)
		}
	}
}
