package binlog

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/paraply/paraply/internal/fixtures"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// simpleBinlog returns a binlog written by a sandboxed MariaDB server whose
// table has every column type decodeSimple reads: integers of each width,
// signed and unsigned at their limits, CHAR (one length byte, and two for
// a CHAR of more than 255 bytes), VARCHAR likewise, BINARY, VARBINARY,
// NULLs, multi-row events, updates and deletes in full and minimal row
// images, with and without the signedness of binlog_row_metadata.
func simpleBinlog(t *testing.T) string {
	t.Helper()
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "binlog-simple", Binlog: true})
	q := []string{
		"CREATE DATABASE s",
		"CREATE TABLE s.t (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED," +
			" mi MEDIUMINT, mu MEDIUMINT UNSIGNED, ii INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED," +
			" c10 CHAR(10), c200 CHAR(200) CHARACTER SET utf8mb4, v20 VARCHAR(20), v300 VARCHAR(300) CHARACTER SET utf8mb4," +
			" vb VARBINARY(8), b4 BINARY(4))",
	}
	row := func(id int, lo bool) string {
		if lo {
			return fmt.Sprintf("(%d, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,"+
				" '', '', '', '', x'', x'00')", id)
		}
		return fmt.Sprintf("(%d, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,"+
			" 9223372036854775807, 18446744073709551615, 'ten chars!', REPEAT('é', 200), 'v%d', REPEAT('ü', 300),"+
			" x'00ff10', 'ab')", id, id)
	}
	for _, metadata := range []string{"NO_LOG", "MINIMAL"} {
		base := 100
		if metadata == "MINIMAL" {
			base = 200
		}
		q = append(q, "SET GLOBAL binlog_row_metadata = "+metadata,
			"SET SESSION binlog_row_image = 'FULL'",
			"BEGIN",
			"INSERT INTO s.t VALUES "+row(base+1, false)+", "+row(base+2, true),
			fmt.Sprintf("INSERT INTO s.t (id) VALUES (%d)", base+3), // NULLs
			fmt.Sprintf("UPDATE s.t SET ti = -1, tu = 128, v20 = NULL, c200 = 'x' WHERE id IN (%d, %d)", base+1, base+3),
			"COMMIT",
			"SET SESSION binlog_row_image = 'MINIMAL'",
			fmt.Sprintf("UPDATE s.t SET bu = 12345678901234567890, v300 = 'short' WHERE id = %d", base+2),
			fmt.Sprintf("DELETE FROM s.t WHERE id = %d", base+3))
	}
	q = append(q, "SET GLOBAL binlog_row_metadata = NO_LOG", "FLUSH BINARY LOGS")
	if err := srv.Exec(t.Context(), q...); err != nil {
		t.Fatal(err)
	}
	files, err := srv.BinlogFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "simple.000001")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimpleRowsAsGoMySQL decodes every transaction of real binlogs twice,
// with decodeSimple and with go-mysql's DecodeData alone: the rows must be
// the same values of the same types, and the errors the same.
func TestSimpleRowsAsGoMySQL(t *testing.T) {
	simple := simpleBinlog(t)
	paths := []string{simple, filepath.Join(fixtures.Root(), "internal", "binlog", "testdata", "mariadb-10.11-fidelity.000001")}
	for _, name := range globShared(t) {
		paths = append(paths, sharedPath(name))
	}
	total, direct, mariaGTIDs := 0, 0, 0
	for _, path := range paths {
		raws, err := FrameFile(path)
		if err != nil {
			continue // files the framer refuses are the shared-binlog tests' business
		}
		fast, slow := NewDecoder(), NewDecoder()
		slow.rowsDec.noSimple = true
		events := 0
		for _, rt := range raws {
			a, errA := fast.Decode(rt)
			b, errB := slow.Decode(rt)
			if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
				t.Errorf("%s at %s: decodeSimple: %v; go-mysql: %v", filepath.Base(path), rt.Events[0].Pos, errA, errB)
				continue
			}
			if errA != nil {
				continue
			}
			// RawTxn.GTID reads the GTID event without decoding it.
			if g, err := rt.GTID(); err != nil || g != a.GTID {
				t.Errorf("%s at %s: RawTxn.GTID %v (%v), decoded %v", filepath.Base(path), rt.Events[0].Pos, g, err, a.GTID)
			} else if g.Flavor == FlavorMariaDB {
				mariaGTIDs++
			}
			if len(a.Rows) != len(b.Rows) {
				t.Errorf("%s at %s: %d rows events, go-mysql %d", filepath.Base(path), rt.Events[0].Pos, len(a.Rows), len(b.Rows))
				continue
			}
			for i := range a.Rows {
				events++
				if !reflect.DeepEqual(a.Rows[i].Images, b.Rows[i].Images) {
					t.Errorf("%s at %s, rows event %d on %s.%s:\n decodeSimple %#v\n go-mysql     %#v", filepath.Base(path), rt.Events[0].Pos, i,
						a.Rows[i].Table.Schema, a.Rows[i].Table.Table, a.Rows[i].Images, b.Rows[i].Images)
				}
			}
		}
		if slow.rowsDec.simple != 0 {
			t.Errorf("%s: noSimple decoded %d events with decodeSimple", filepath.Base(path), slow.rowsDec.simple)
		}
		if path == simple && fast.rowsDec.simple != events {
			t.Errorf("%s: decodeSimple decoded %d of its %d rows events, want all", filepath.Base(path), fast.rowsDec.simple, events)
		}
		total += fast.rowsDec.simple
		direct += fast.rowsDec.direct
	}
	if total == 0 || direct == 0 {
		t.Errorf("decodeSimple decoded %d events, %d of them without go-mysql: want some of each", total, direct)
	}
	if mariaGTIDs == 0 {
		t.Error("no MariaDB GTID was read by RawTxn.GTID")
	}
	t.Logf("decodeSimple decoded %d rows events in %d files, %d without go-mysql; RawTxn.GTID read %d MariaDB GTIDs", total, len(paths), direct, mariaGTIDs)
}

// TestSimpleRowsDamagedAsGoMySQL drops one byte of a rows event, at every
// place in turn, and decodes the damaged transaction with and without
// decodeSimple: both must fail alike (decodeSimple leaves what does not add
// up to go-mysql, which reports it) or give the same rows.
func TestSimpleRowsDamagedAsGoMySQL(t *testing.T) {
	raws, err := FrameFile(simpleBinlog(t))
	if err != nil {
		t.Fatal(err)
	}
	failed, decoded, direct := 0, 0, 0
	for _, rt := range raws {
		for i, ev := range rt.Events {
			if !simpleEvent(ev.Type()) {
				continue
			}
			for at := HeaderSize; at < len(ev.Data); at++ {
				data := append(append([]byte(nil), ev.Data[:at]...), ev.Data[at+1:]...)
				binary.LittleEndian.PutUint32(data[9:], uint32(len(data))) // the header's event size
				damaged := *rt
				damaged.Events = slices.Clone(rt.Events)
				damaged.Events[i].Data = data
				fast, slow := NewDecoder(), NewDecoder()
				slow.rowsDec.noSimple = true
				a, errA := fast.Decode(&damaged)
				b, errB := slow.Decode(&damaged)
				direct += fast.rowsDec.direct
				switch {
				case (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error():
					t.Fatalf("event at %s without byte %d: decodeSimple: %v; go-mysql: %v", ev.Pos, at, errA, errB)
				case errA != nil:
					failed++
				case !reflect.DeepEqual(named(a.Rows), named(b.Rows)):
					t.Fatalf("event at %s without byte %d: decodeSimple and go-mysql decode different rows", ev.Pos, at)
				default:
					decoded++
				}
			}
		}
	}
	if failed == 0 || decoded == 0 || direct == 0 {
		t.Errorf("%d damaged events failed to decode, %d decoded, %d rows events without go-mysql: want some of each", failed, decoded, direct)
	}
	t.Logf("%d damaged events failed to decode alike, %d decoded alike; %d rows events decoded without go-mysql", failed, decoded, direct)
}

// named returns copies of rows whose names are their Schema and Name, so
// that rows whose names the Decoder converted once compare equal to those
// it did not when the names are the same.
func named(rows []*Rows) []Rows {
	out := make([]Rows, len(rows))
	for i, r := range rows {
		out[i] = *r
		out[i].names = &fullTableMap{tm: r.Table, schema: r.Schema(), table: r.Name()}
	}
	return out
}

// TestRowsNamesFollowTable: the names the Decoder keeps for a table map
// are the rows' names only while the rows still point at that table map; a
// filter that renames a database gives the rows a renamed copy.
func TestRowsNamesFollowTable(t *testing.T) {
	raws, err := FrameFile(simpleBinlog(t))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder()
	checked := 0
	for _, rt := range raws {
		txn, err := d.Decode(rt)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range txn.Rows {
			if r.names == nil {
				continue
			}
			if r.Schema() != string(r.Table.Schema) || r.Name() != string(r.Table.Table) {
				t.Fatalf("rows on %s.%s named %s.%s", r.Table.Schema, r.Table.Table, r.Schema(), r.Name())
			}
			renamed := *r.Table
			renamed.Schema, renamed.Table = []byte("renamed_db"), []byte("renamed_table")
			r.Table = &renamed
			if r.Schema() != "renamed_db" || r.Name() != "renamed_table" {
				t.Fatalf("rows on a renamed copy named %s.%s", r.Schema(), r.Name())
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no rows decoded with their names kept")
	}
}
