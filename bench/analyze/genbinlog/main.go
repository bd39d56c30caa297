// Command genbinlog writes the MariaDB binlog that bench/analyze/run.sh
// times paraply analyze and mariadb-binlog on. It starts a sandboxed
// MariaDB server, runs sysbench oltp_write_only on it (the workload of
// internal/binlog's BenchmarkReader: 4 tables of 10000 rows, then 60000
// transactions of two updates, a delete and an insert), copies the closed
// binlog files into -out and prints their paths, one a line. The server is
// removed when it is done, or on Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/paraply/paraply/internal/sandbox"
)

func main() {
	out := flag.String("out", "", "directory to copy the binlog files to (required)")
	events := flag.Int("events", 60000, "sysbench transactions")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: genbinlog -out DIR [-events N]")
		os.Exit(2)
	}
	uninstall := sandbox.HandleSignals()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	files, err := generate(ctx, *out, *events)
	stop()
	uninstall()
	if err != nil {
		fmt.Fprintln(os.Stderr, "genbinlog:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
}

func generate(ctx context.Context, dir string, events int) (files []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	srv, err := sandbox.Start(ctx, sandbox.Options{Name: "bench-analyze", Binlog: true, BufferPoolMB: 256})
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := srv.Remove(); err == nil {
			err = rerr
		}
	}()
	if err := srv.CreateDatabase(ctx, "sbtest"); err != nil {
		return nil, err
	}
	args := []string{"--tables=4", "--table-size=10000", "--threads=4", "--events=" + strconv.Itoa(events), "--time=0", "--rand-seed=1"}
	for _, cmd := range []string{"prepare", "run"} {
		if out, err := srv.Sysbench(ctx, "oltp_write_only", append(args, cmd)...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sysbench %s: %w\n%s", cmd, err, out)
		}
	}
	if err := srv.Exec(ctx, "FLUSH BINARY LOGS"); err != nil {
		return nil, err
	}
	logs, err := srv.BinlogFiles(ctx)
	if err != nil {
		return nil, err
	}
	for _, src := range logs[:len(logs)-1] { // the last one is new and empty
		dst := filepath.Join(dir, filepath.Base(src))
		if err := copyFile(src, dst); err != nil {
			return nil, err
		}
		files = append(files, dst)
	}
	return files, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
