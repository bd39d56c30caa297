package binlog

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/paraply/paraply/internal/fixtures"
)

// TestSetColumns: a decoder asked for some columns gives those values as
// a decoder of every column does, and for the others the same or nil (nil
// where it reads the images itself); the images, their columns present
// and the rows counted stay the same.
func TestSetColumns(t *testing.T) {
	raws, err := FrameFile(filepath.Join(fixtures.Root(), "internal", "binlog", "testdata", "mariadb-10.11-fidelity.000001"))
	if err != nil {
		t.Fatal(err)
	}
	full, some := NewDecoder(), NewDecoder()
	// Every other column, and none of a table called none.
	some.SetColumns(func(schema, table string, columns int) []bool {
		keep := make([]bool, columns)
		for i := range keep {
			keep[i] = i%2 == 0 && table != "none"
		}
		return keep
	})
	left := 0
	for _, rt := range raws {
		a, errA := full.Decode(rt)
		b, errB := some.Decode(rt)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("at %s: every column: %v; some: %v", rt.Events[0].Pos, errA, errB)
		}
		if errA != nil {
			continue
		}
		if a.RowCount() != b.RowCount() || len(a.Rows) != len(b.Rows) {
			t.Fatalf("at %s: %d rows in %d events, with some columns %d in %d", rt.Events[0].Pos, a.RowCount(), len(a.Rows), b.RowCount(), len(b.Rows))
		}
		for i, ra := range a.Rows {
			rb := b.Rows[i]
			if len(ra.Images) != len(rb.Images) {
				t.Fatalf("at %s, rows event %d: %d images, with some columns %d", rt.Events[0].Pos, i, len(ra.Images), len(rb.Images))
			}
			for j, img := range ra.Images {
				for c, v := range img {
					after := ra.Op == Insert || ra.Op == Update && j%2 == 1
					if ra.Present(c, after) != rb.Present(c, after) {
						t.Errorf("at %s: column %d present %v, with some columns %v", rt.Events[0].Pos, c, ra.Present(c, after), rb.Present(c, after))
					}
					switch got := rb.Images[j][c]; {
					case c%2 == 1 && got == nil && v != nil:
						left++
					case !reflect.DeepEqual(got, v):
						t.Errorf("at %s, %s.%s column %d: %#v, with some columns %#v", rt.Events[0].Pos, ra.Schema(), ra.Name(), c, v, got)
					}
				}
			}
		}
	}
	if some.rowsDec.direct == 0 || left == 0 {
		t.Errorf("%d events read directly, %d values left out: the file exercises nothing", some.rowsDec.direct, left)
	}
}
