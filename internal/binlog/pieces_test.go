package binlog

import (
	"errors"
	"io"
	"testing"
)

// TestDecodePieces reads real binlogs twice, whole and in pieces of a few
// KB: the same transactions, GTIDs, clocks, statements and row counts;
// the ones larger than a piece come without their row images.
func TestDecodePieces(t *testing.T) {
	for _, path := range []string{sharedPath("rust-us__mysql-cdc-rs/binlog.000693"), "testdata/mariadb-10.11-fidelity.000001"} {
		whole := readAll(path)
		if whole.err != nil {
			t.Fatal(whole.err)
		}
		fr := NewFileReader(path)
		r := NewReader(fr)
		r.SetPartBytes(4 << 10)
		large := 0
		for i := 0; ; i++ {
			got, err := r.Next()
			if errors.Is(err, io.EOF) {
				if i != len(whole.txns) {
					t.Fatalf("%s: %d transactions in pieces, %d whole", path, i, len(whole.txns))
				}
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			want := whole.txns[i]
			if got.GTID != want.GTID || got.Clock != want.Clock || got.RowCount() != want.RowCount() ||
				got.DDL != want.DDL || got.StatementDML != want.StatementDML || len(got.Statements) != len(want.Statements) ||
				got.Start != want.Start || got.End != want.End || got.Bytes != want.Bytes || got.XA != want.XA {
				t.Fatalf("%s: transaction %d differs in pieces:\n%s\nwhole:\n%s", path, i+1, renderTxn(got), renderTxn(want))
			}
			if got.Bytes > 4<<10 {
				large++
				if !got.Large || len(got.Rows) != 0 || (want.RowCount() > 0 && len(got.LargeTables) == 0) {
					t.Fatalf("%s: transaction %d of %d bytes: large %t, %d rows events kept, %d tables", path, i+1, got.Bytes, got.Large, len(got.Rows), len(got.LargeTables))
				}
			}
		}
		fr.Close()
		if path != "testdata/mariadb-10.11-fidelity.000001" && large == 0 {
			t.Fatalf("%s: no transaction was large", path)
		}
	}
}
