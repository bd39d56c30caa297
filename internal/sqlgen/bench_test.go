package sqlgen

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
)

// charMeta is the table map metadata of a CHAR column of n bytes.
func charMeta(n int) uint16 {
	return uint16(mysql.MYSQL_TYPE_STRING^byte((n>>8)<<4))<<8 | uint16(n&0xff)
}

// BenchmarkBatch builds the statements of one sysbench oltp_write_only
// transaction: UPDATE of an int column, UPDATE of a char(120) column,
// DELETE by primary key, INSERT of 4 columns, with full row images.
func BenchmarkBatch(b *testing.B) {
	cols := []col{
		intCol("id"),
		intCol("k"),
		{name: "c", typ: "char", tp: mysql.MYSQL_TYPE_STRING, meta: charMeta(480), cs: "utf8mb4", co: "utf8mb4_general_ci"},
		{name: "pad", typ: "char", tp: mysql.MYSQL_TYPE_STRING, meta: charMeta(240), cs: "utf8mb4", co: "utf8mb4_general_ci"},
	}
	tab := newTable(b, "sbtest", "sbtest1", cols, primary(0))
	c1 := strings.Repeat("83868641912-28773972837-60736120486-", 4)[:119]
	c2 := strings.Repeat("54938497012-27349872373-29874502873-", 4)[:119]
	pad := strings.Repeat("22195207048-", 5)[:59]
	txn := []*binlog.Rows{
		rows(tab, binlog.Update, []any{int32(5012), int32(4991), c1, pad}, []any{int32(5012), int32(4992), c1, pad}),
		rows(tab, binlog.Update, []any{int32(4872), int32(5003), c1, pad}, []any{int32(4872), int32(5003), c2, pad}),
		rows(tab, binlog.Delete, []any{int32(5077), int32(5020), c1, pad}),
		rows(tab, binlog.Insert, []any{int32(5077), int32(4988), c2, pad}),
	}
	var batch Batch
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset()
		for _, r := range txn {
			if err := batch.Add(tab, r, 0); err != nil {
				b.Fatal(err)
			}
		}
		_ = batch.SQL()
	}
}

// BenchmarkBatchCompact builds the statements of 32 sysbench oltp_write_only
// transactions (ids of a 100000-row table) per batch, with and without
// compaction; ns/op is per transaction.
func BenchmarkBatchCompact(b *testing.B) {
	sb := newSysbench(rand.New(rand.NewPCG(1, 2)), 100000)
	def, _ := fixture("sbtest", "sbtest1", sb.cols, primary(0))
	tab, err := NewTableIn(refs{}, def, sb.tm)
	if err != nil {
		b.Fatal(err)
	}
	const perBatch = 32
	txns := make([][]*binlog.Rows, 64*perBatch)
	for i := range txns {
		txns[i] = sb.txn()
	}
	for _, compact := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "compact"}[compact], func(b *testing.B) {
			batch := Batch{Compact: compact}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%perBatch == 0 {
					_ = batch.SQL()
					batch.Reset()
				}
				for _, r := range txns[i%len(txns)] {
					if err := batch.Add(tab, r, i%perBatch); err != nil {
						b.Fatal(err)
					}
				}
				i++
			}
		})
	}
}
