package sqlgen

import (
	"reflect"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
)

// TestPacket: the packets of a batch, joined, are the batch; each holds
// whole statements and stays within the limit unless one statement alone
// exceeds it.
func TestPacket(t *testing.T) {
	var b Batch
	b.Raw("START TRANSACTION")
	for i := range 50 {
		b.Raw("INSERT INTO t VALUES (?, ?)", int64(i), strings.Repeat("x", i*7))
	}
	b.Raw("SELECT ?", strings.Repeat("y", 500)) // alone beyond the limit
	b.Raw("COMMIT")
	for _, limit := range []int{1, 60, 200, 1000, 1 << 20} {
		var texts []string
		var args []any
		packets := 0
		for i := 0; i < b.Len(); packets++ {
			q, a, next := b.Packet(i, limit)
			checkPacket(t, limit, i, next, q, a)
			if next < b.Len() && strings.HasSuffix(q, ";") || strings.HasPrefix(q, ";") {
				t.Errorf("limit %d: packet %q carries a separator at an end", limit, q)
			}
			texts = append(texts, q)
			args = append(args, a...)
			i = next
		}
		checkCover(t, &b, limit, texts, args, packets)
	}
}

// checkPacket checks packet i..next of a batch made for limit: it holds
// a statement at least, as many placeholders as arguments, and no more
// than limit bytes unless it holds one statement.
func checkPacket(t *testing.T, limit, i, next int, q string, args []any) {
	t.Helper()
	if next <= i {
		t.Fatalf("limit %d: packet %d ends at %d", limit, i, next)
	}
	if n := strings.Count(q, "?"); n != len(args) {
		t.Errorf("limit %d: packet %d..%d has %d placeholders and %d arguments", limit, i, next, n, len(args))
	}
	size := len(q)
	for _, x := range args {
		size += argSize(x)
	}
	if size > limit && next-i > 1 {
		t.Errorf("limit %d: packet of %d statements is %d bytes", limit, next-i, size)
	}
}

// checkCover checks that the statements of a batch's packets for limit,
// joined, and their arguments are the batch's, and that there is a
// packet per statement at a limit of 1 byte and one at 1 MiB.
func checkCover(t *testing.T, b *Batch, limit int, stmts []string, args []any, packets int) {
	t.Helper()
	if got := strings.Join(stmts, ";"); got != b.SQL() {
		t.Errorf("limit %d: the packets' statements differ from the batch:\n%s\n%s", limit, got, b.SQL())
	}
	if !reflect.DeepEqual(args, b.Args()) {
		t.Errorf("limit %d: arguments differ", limit)
	}
	switch {
	case limit == 1 && packets != b.Len():
		t.Errorf("limit 1: %d packets for %d statements", packets, b.Len())
	case limit == 1<<20 && packets != 1:
		t.Errorf("limit 1 MiB: %d packets, want 1", packets)
	}
	t.Logf("limit %d: %d packets", limit, packets)
}

// TestPacketRows: packets of row statements (multi-row INSERTs whose
// rows' arguments are pushed before the statement starts, UPDATEs,
// DELETEs; compacted or not) carry exactly their statements' arguments.
func TestPacketRows(t *testing.T) {
	for _, compact := range []bool{false, true} {
		b := rowsBatch(t, compact)
		b.Raw("COMMIT")
		var texts []string
		var args []any
		for i := 0; i < b.Len(); {
			q, a, next := b.Packet(i, 700)
			if n := strings.Count(q, "?"); n != len(a) {
				t.Fatalf("compact %v: packet %d..%d has %d placeholders and %d arguments", compact, i, next, n, len(a))
			}
			texts, args = append(texts, q), append(args, a...)
			i = next
		}
		if len(texts) < 3 {
			t.Errorf("compact %v: %d packets; the test wants several", compact, len(texts))
		}
		if strings.Join(texts, ";") != b.SQL() || !reflect.DeepEqual(args, b.Args()) {
			t.Errorf("compact %v: packets joined differ from the batch", compact)
		}
	}
}

// rowsBatch is a batch of 40 transactions on one table, each inserting
// three rows, updating one and deleting one, after START TRANSACTION;
// statements stop growing at 300 bytes.
func rowsBatch(t *testing.T, compact bool) *Batch {
	t.Helper()
	tt := compactTable(t, "db", "t", tCols, primary(0))
	row := func(id int32, c string) []any { return []any{id, c, int32(0), nil} }
	b := &Batch{Compact: compact, MaxStatement: 300}
	b.Raw("START TRANSACTION")
	for i := range int32(40) {
		if err := b.Add(tt, rows(tt, binlog.Insert, row(3*i, "a"), row(3*i+1, "b"), row(3*i+2, "c")), int(i)); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(tt, rows(tt, binlog.Update, row(1000+i, "x"), row(1000+i, "y")), int(i)); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(tt, rows(tt, binlog.Delete, row(2000+i, "z")), int(i)); err != nil {
			t.Fatal(err)
		}
	}
	return b
}
