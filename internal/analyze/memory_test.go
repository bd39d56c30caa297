package analyze

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/schema"
)

// TestMemoryBounded analyzes the same binlog given twice and given eight
// times (16,000 and 64,000 transactions: new rows, and updates of 50 hot
// ones; from the second time on, every row is one an earlier transaction
// wrote) and measures the live heap every 1,024 transactions: its peak
// must not grow with the stream, so that a day of binlogs is analyzed in
// the memory of a few seconds of it.
func TestMemoryBounded(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "analyze-mem", Binlog: true})
	ctx := context.Background()
	if err := src.Exec(ctx,
		"CREATE DATABASE mem",
		"CREATE TABLE mem.t (id INT PRIMARY KEY, v INT)",
		`CREATE PROCEDURE mem.fill(n INT)
		BEGIN
			DECLARE i INT DEFAULT 0;
			WHILE i < n DO
				INSERT INTO mem.t VALUES (i + 100, i);
				INSERT INTO mem.t VALUES (i MOD 50, 0) ON DUPLICATE KEY UPDATE v = v + 1;
				SET i = i + 1;
			END WHILE;
		END`); err != nil {
		t.Fatal(err)
	}
	db := sandboxtest.DB(t, src)
	cat, err := schema.Load(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	before := flush(t, src)
	if err := src.Exec(ctx, "CALL mem.fill(4000)"); err != nil {
		t.Fatal(err)
	}
	files := written(before, flush(t, src))

	// live analyzes the binlog given copies times and returns the median
	// of the live heap over the second half of the stream (what it holds
	// once every structure filled; the median leaves out a measurement
	// that caught a few more batches in flight), and the transactions.
	live := func(copies int) (uint64, int64) {
		var in []string
		for range copies {
			in = append(in, files...)
		}
		var heap []uint64
		var ms runtime.MemStats
		// A small writeset history: it fills within the first copy, as
		// the day's does within its first seconds.
		r, err := Run(Options{Files: in, Catalog: cat.Clone(), HistorySize: 1000, Progress: func(done, total int64) {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			heap = append(heap, ms.HeapAlloc)
		}})
		if err != nil {
			t.Fatal(err)
		}
		heap = heap[len(heap)/2:]
		slices.Sort(heap)
		return heap[len(heap)/2], r.Transactions
	}
	two, n2 := live(2)
	eight, n8 := live(8)
	t.Logf("live heap: %.1f MiB for %d transactions, %.1f MiB for %d", mib(two), n2, mib(eight), n8)
	if n2 < 16000 || n8 != 4*n2 {
		t.Fatalf("read %d and %d transactions, want 16,000 or more and four times that", n2, n8)
	}
	// 48,000 more transactions held at 32 bytes each would be 1.5 MiB.
	if eight > two+1<<20 {
		t.Errorf("the live heap grew from %.1f MiB to %.1f MiB with the stream", mib(two), mib(eight))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
