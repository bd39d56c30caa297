package binlog

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// BenchmarkReader measures the Reader (file reading, framing, CRC checks and
// row decoding) in MB/s over a MariaDB binlog of about 150 MB that a
// sandbox writes once per benchmark run: sysbench oltp_write_only, 4
// tables of 10000 rows, 60000 transactions of two updates, a delete and
// an insert. Generating it takes a minute or less. (Without --time=0,
// sysbench would stop after its default 10 seconds, at a load-dependent
// number of transactions.)
//
//	go test -run x -bench BenchmarkReader ./internal/binlog/
func BenchmarkReader(b *testing.B) {
	files, size := sysbenchBinlog(b)
	b.Logf("%d files, %.1f MB", len(files), float64(size)/1e6)
	b.SetBytes(size)
	b.ReportAllocs()
	txns := 0
	for b.Loop() {
		fr := NewFileReader(files...)
		r := NewReader(fr)
		txns = 0
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			txns++
		}
		fr.Close()
	}
	b.ReportMetric(float64(txns), "txns/op")
}

// sysbenchBinlog runs the workload of BenchmarkReader in a sandbox and
// returns its closed binlog files and their total size.
func sysbenchBinlog(b *testing.B) ([]string, int64) {
	b.Helper()
	srv := sandboxtest.ForTest(b, sandbox.Options{Name: "binlog-bench", Binlog: true, BufferPoolMB: 256})
	ctx := b.Context()
	if err := srv.CreateDatabase(ctx, "sbtest"); err != nil {
		b.Fatal(err)
	}
	args := []string{"--tables=4", "--table-size=10000", "--threads=4", "--events=60000", "--time=0", "--rand-seed=1"}
	for _, cmd := range []string{"prepare", "run"} {
		if out, err := srv.Sysbench(ctx, "oltp_write_only", append(args, cmd)...).CombinedOutput(); err != nil {
			b.Fatalf("sysbench %s: %v\n%s", cmd, err, out)
		}
	}
	if err := srv.Exec(ctx, "FLUSH BINARY LOGS"); err != nil {
		b.Fatal(err)
	}
	files, err := srv.BinlogFiles(ctx)
	if err != nil {
		b.Fatal(err)
	}
	files = files[:len(files)-1] // the new, empty one
	var size int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	return files, size
}
