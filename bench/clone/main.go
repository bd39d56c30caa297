// Command clone benchmarks seeding a target and catching up, in one run on
// the same durable target, three ways (docs/clone.md, "Benchmark"):
//
//   - clone: paraply clone --until-caught-up (and clone-2readers, with
//     --copy-readers 2);
//   - dump: mariadb-dump --single-transaction --gtid --master-data=2 |
//     mariadb, then paraply replicate --start-gtid <the dump's> --until-caught-up;
//   - mydumper: mydumper --trx-consistency-only, then myloader (each with the
//     same thread count as clone's workers, myloader logging to the target's
//     binlog as the others do), then paraply replicate from its metadata.
//
// The source is a sysbench database under a light write load, whose writes
// a probe times: the longest a write waited on the source during each way
// is how long it was locked. Each way is checked with paraply verify.
//
//	go run ./bench/clone [-quick] [-tables 8] [-rows 1000000] [-threads 4] [-rate 20]
//	    [-methods clone,clone-2readers,dump,mydumper] [-paraply bin/paraply] [-out bench/results/DATE-clone]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// config is what one benchmark run measures.
type config struct {
	tables, rows, threads, rate int
	methods                     []string
	paraply, out, baseDir       string
	bufferPoolMB                int
	// cloneArgs are more arguments for paraply clone (comparing settings).
	cloneArgs []string
}

func main() {
	var cfg config
	var methods string
	quick := flag.Bool("quick", false, "a sanity run: 8 tables of 20,000 rows")
	flag.IntVar(&cfg.tables, "tables", 8, "sysbench tables")
	flag.IntVar(&cfg.rows, "rows", 1000000, "rows per table")
	flag.IntVar(&cfg.threads, "threads", 4, "clone's --copy-workers, mydumper's and myloader's --threads")
	flag.IntVar(&cfg.rate, "rate", 20, "the source's write load, sysbench oltp_write_only transactions per second")
	flag.StringVar(&methods, "methods", "clone,clone-2readers,dump,mydumper", "the ways to seed, in order: clone, clone-2readers (--copy-readers 2), dump, mydumper")
	flag.StringVar(&cfg.paraply, "paraply", "bin/paraply", "paraply binary")
	flag.StringVar(&cfg.out, "out", "", "output directory (default bench/results/DATE-clone)")
	flag.StringVar(&cfg.baseDir, "base-dir", "", "directory for the servers and the dump (default $TMPDIR)")
	flag.IntVar(&cfg.bufferPoolMB, "buffer-pool-mb", 256, "innodb_buffer_pool_size of both servers, MiB (at most 256)")
	cloneArgs := flag.String("clone-args", "", "more arguments for paraply clone, space-separated (e.g. \"--copy-readers 2\")")
	rewrite := flag.String("rewrite", "", "read DIR/results.json of a run and write DIR/results.md again as this build writes it, then exit")
	flag.Parse()
	if *rewrite != "" {
		if err := rewriteResults(*rewrite); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	cfg.cloneArgs = strings.Fields(*cloneArgs)
	if *quick {
		cfg.rows = 20000
	}
	cfg.methods = strings.Split(methods, ",")
	if cfg.out == "" {
		suffix := "-clone"
		if *quick {
			suffix += "-quick"
		}
		cfg.out = filepath.Join("bench", "results", time.Now().UTC().Format("2006-01-02")+suffix)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	defer sandbox.HandleSignals()()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run runs the benchmark and writes its results.
func run(ctx context.Context, cfg config) error {
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	res := &results{Started: time.Now().UTC(), Tables: cfg.tables, Rows: cfg.rows, Threads: cfg.threads, Rate: cfg.rate, LoadBefore: loadAverage()}
	env, err := setUp(ctx, cfg)
	if env != nil {
		defer env.tearDown()
	}
	if err != nil {
		return err
	}
	res.DataMB = env.dataMB(ctx)
	logf("source ready: %d tables of %d rows, %.0f MB of data and indexes", cfg.tables, cfg.rows, res.DataMB)
	for _, m := range cfg.methods {
		r, err := env.measure(ctx, m)
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		logf("%s: %s", m, r.summary())
		res.Runs = append(res.Runs, r)
	}
	res.LoadAfter = loadAverage()
	res.Finished = time.Now().UTC()
	j, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.out, "results.json"), j, 0o644); err != nil {
		return err
	}
	md := res.markdown()
	fmt.Print(md)
	return os.WriteFile(filepath.Join(cfg.out, "results.md"), []byte(md), 0o644)
}

// rewriteResults writes dir/results.md again from dir/results.json.
func rewriteResults(dir string) error {
	j, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	var res results
	if err := json.Unmarshal(j, &res); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(res.markdown()), 0o644)
}

// logf prints a progress line on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

// loadAverage reads /proc/loadavg's three figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
