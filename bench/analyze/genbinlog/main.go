// Command genbinlog writes the MariaDB binlog that bench/analyze/run.sh
// times paraply analyze and mariadb-binlog on. It starts a sandboxed
// MariaDB server with the binary log in -format, loads sysbench's tables
// (by default the workload of internal/binlog's BenchmarkReader: 4 tables
// of 10000 rows), rotates the binary log, runs sysbench -script for
// -events transactions (oltp_write_only: two updates, a delete and an
// insert each), copies the binlog files that hold exactly those into
// -out with the tables' schema (schema.sql, for analyze --schema-file),
// and prints the binlog files' paths, one a line. The server is removed
// when it is done, or on Ctrl-C.
//
// A day's worth (-events 1000000) is about 2.2 GB in ROW format: write it
// outside the repository.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/paraply/paraply/internal/sandbox"
)

func main() {
	var w workload
	out := flag.String("out", "", "directory to copy the binlog files and schema.sql to (required)")
	flag.IntVar(&w.events, "events", 60000, "sysbench transactions")
	flag.StringVar(&w.format, "format", "ROW", "the server's binlog_format: ROW, MIXED or STATEMENT")
	flag.StringVar(&w.script, "script", "oltp_write_only", "sysbench script")
	flag.IntVar(&w.threads, "threads", 4, "sysbench clients")
	flag.IntVar(&w.tables, "tables", 4, "sysbench tables")
	flag.IntVar(&w.size, "size", 10000, "rows a table")
	extra := flag.String("sysbench-args", "", "more options for sysbench's run, space-separated (e.g. --rand-type=pareto: a few hot rows)")
	flag.Parse()
	w.args = strings.Fields(*extra)
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: genbinlog -out DIR [-events N] [-format ROW|MIXED|STATEMENT] [-script S] [-threads N] [-tables N] [-size N]")
		os.Exit(2)
	}
	uninstall := sandbox.HandleSignals()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	files, err := generate(ctx, *out, w)
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

// workload is what genbinlog runs.
type workload struct {
	format, script                string
	events, threads, tables, size int
	args                          []string
}

func generate(ctx context.Context, dir string, w workload) (files []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	srv, err := sandbox.Start(ctx, sandbox.Options{Name: "bench-analyze", Binlog: true, BufferPoolMB: 256,
		ExtraArgs: []string{"--binlog-format=" + w.format, "--max-binlog-size=1073741824"}})
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
	args := []string{"--tables=" + strconv.Itoa(w.tables), "--table-size=" + strconv.Itoa(w.size), "--rand-seed=1"}
	if out, err := srv.Sysbench(ctx, "oltp_write_only", append(args, "--threads=2", "prepare")...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sysbench prepare: %w\n%s", err, out)
	}
	schema, err := exec.CommandContext(ctx, "mariadb-dump", "--no-defaults", "-h", srv.Host, "-P", strconv.Itoa(srv.Port),
		"-u", srv.User, "--no-data", "--databases", "sbtest").Output()
	if err != nil {
		return nil, fmt.Errorf("mariadb-dump: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "schema.sql"), schema, 0o644); err != nil {
		return nil, err
	}
	before, err := rotate(ctx, srv)
	if err != nil {
		return nil, err
	}
	run := append(append(args, "--threads="+strconv.Itoa(w.threads), "--events="+strconv.Itoa(w.events), "--time=0"), w.args...)
	run = append(run, "run")
	if out, err := srv.Sysbench(ctx, w.script, run...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sysbench run: %w\n%s", err, out)
	}
	after, err := rotate(ctx, srv)
	if err != nil {
		return nil, err
	}
	// The run went to the newest file before it and to those created
	// during it; the newest file after it is new and empty.
	for _, src := range after[len(before)-1 : len(after)-1] {
		dst := filepath.Join(dir, filepath.Base(src))
		if err := copyFile(src, dst); err != nil {
			return nil, err
		}
		files = append(files, dst)
	}
	return files, nil
}

// rotate starts a new binlog file and returns the files that exist then.
func rotate(ctx context.Context, srv *sandbox.Server) ([]string, error) {
	if err := srv.Exec(ctx, "FLUSH BINARY LOGS"); err != nil {
		return nil, err
	}
	return srv.BinlogFiles(ctx)
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
