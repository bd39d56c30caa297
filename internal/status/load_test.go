package status

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/workload"
)

// steadyLoad prepares sysbench's oltp_write_only in database sbtest on src,
// two tables of size rows, and runs it at 200 transactions a second (four
// threads, seeded) until the test ends. It returns what sysbench prints,
// for a failing test's log.
func steadyLoad(t *testing.T, ctx context.Context, src *sandbox.Server, size, seed int) *bytes.Buffer {
	t.Helper()
	if err := src.CreateDatabase(ctx, "sbtest"); err != nil {
		t.Fatal(err)
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_write_only", 2, size, 2, 0); err != nil {
		t.Fatal(err)
	}
	loadCtx, stop := context.WithCancel(ctx)
	bench := src.Sysbench(loadCtx, "oltp_write_only", "--tables=2", fmt.Sprintf("--table-size=%d", size), "--threads=4", "--rate=200",
		"--time=0", "--events=0", "--report-interval=0", fmt.Sprintf("--rand-seed=%d", seed), "run")
	var out bytes.Buffer
	bench.Stdout, bench.Stderr = &out, &out
	if err := bench.Start(); err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		bench.Wait()
		if t.Failed() {
			t.Logf("sysbench:\n%s", out.String())
		}
	})
	return &out
}
