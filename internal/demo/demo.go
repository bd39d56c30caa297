// Package demo runs paraply end to end on sandboxed MariaDB servers that it
// starts and stops itself, so that a newcomer sees the product work with one
// command.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/paraply/paraply/internal/analyze"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/workload"
)

// Options size the demo.
type Options struct {
	Tables     int // sysbench tables
	TableSize  int // rows per table
	Events     int // transactions per sysbench run
	Threads    []int
	Out        io.Writer
	KeepServer bool
}

// Defaults are small enough for a laptop and a two-core CI machine.
func Defaults() Options {
	return Options{Tables: 4, TableSize: 10000, Events: 4000, Threads: []int{1, 16}, Out: os.Stdout}
}

// Analyze starts a sandboxed source, runs sysbench oltp_write_only with each
// thread count, and analyzes the binlog each run wrote.
func Analyze(ctx context.Context, o Options) (err error) {
	src, err := sandbox.Start(ctx, sandbox.Options{Name: "demo-source", Binlog: true, Durable: true, BufferPoolMB: 128})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, src.Remove()) }() // a server left behind is an error
	fmt.Fprintf(o.Out, "source: MariaDB sandbox on %s (binlog ROW, durable)\n", src.URL())
	if err := src.CreateDatabase(ctx, "sbtest"); err != nil {
		return err
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_write_only", o.Tables, o.TableSize, 1, 0); err != nil {
		return err
	}
	for _, threads := range o.Threads {
		files, cat, err := Backlog(ctx, src, "oltp_write_only", o, threads)
		if err != nil {
			return err
		}
		r, err := analyze.Run(analyze.Options{Files: files, Catalog: cat})
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "\n=== sysbench oltp_write_only, %d client thread(s), %d transactions ===\n", threads, o.Events)
		if err := analyze.WriteText(o.Out, r); err != nil {
			return err
		}
	}
	return nil
}

// Backlog runs a sysbench workload on src between two binlog rotations and
// returns the binlog files holding it and the schema as it was before.
func Backlog(ctx context.Context, src *sandbox.Server, script string, o Options, threads int) ([]string, *schema.Catalog, error) {
	db, err := src.DB("")
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	cat, err := schema.Load(ctx, db, "sbtest")
	if err != nil {
		return nil, nil, err
	}
	before, err := rotate(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	if err := workload.Sysbench(ctx, src, "run", script, o.Tables, o.TableSize, threads, o.Events); err != nil {
		return nil, nil, err
	}
	after, err := rotate(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	files := []string{before[len(before)-1]}
	for _, f := range after[:len(after)-1] {
		if !slices.Contains(before, f) {
			files = append(files, f)
		}
	}
	return files, cat, nil
}

func rotate(ctx context.Context, src *sandbox.Server) ([]string, error) {
	if err := src.Exec(ctx, "FLUSH BINARY LOGS"); err != nil {
		return nil, err
	}
	return src.BinlogFiles(ctx)
}
