// Command replication benchmarks paraply against MariaDB's own replica
// (single-threaded and parallel) on the same backlogs in the same run, with
// the target's own throughput as the ceiling. See internal/bench for the
// method; `make bench` and `make bench-quick` run it.
//
//	go run ./bench/replication [-quick] [-workloads write_only,hot_rows] [-clients 1,16]
//	    [-configs native-single,paraply-16-writeset,...] [-events 40000] [-tables 8]
//	    [-table-size 100000] [-durability both] [-out bench/results/DATE] [-paraply bin/paraply]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/paraply/paraply/internal/bench"
	"github.com/paraply/paraply/internal/sandbox"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		quick                                   bool
		workloads, clients, configs, durability string
		list                                    bool
	)
	def := bench.Default()
	flag.BoolVar(&quick, "quick", false, "sanity run of a few minutes: 8 x 10k rows, K=5000, write_only and hot_rows, durable, a few configurations (other flags override)")
	flag.StringVar(&workloads, "workloads", "", "workloads, comma-separated: "+strings.Join(bench.WorkloadNames(), ","))
	flag.StringVar(&clients, "clients", "", "source sysbench clients T, comma-separated (default 1,16)")
	flag.StringVar(&configs, "configs", "", "configurations, comma-separated (see -list)")
	flag.StringVar(&durability, "durability", "", "durable, nondurable or both (default both; quick: durable)")
	events := flag.Int("events", 0, "K: transactions per backlog (default 40000; quick: 5000)")
	eventsFor := flag.String("events-for", "", "K of some workloads instead of -events, comma-separated workload=K (e.g. update_index=60000,hot_rows=60000: runs of the workloads applied fastest last as long as the others')")
	tables := flag.Int("tables", 0, "sysbench tables (default 8)")
	tableSize := flag.Int("table-size", 0, "rows per table (default 100000; quick: 10000)")
	out := flag.String("out", "", "output directory (default bench/results/DATE, or DATE-quick)")
	paraply := flag.String("paraply", def.Paraply, "paraply binary")
	paraplyB := flag.String("paraply-b", "", "a second paraply binary, run by the configurations named ...@b (e.g. paraply-auto-writeset@b), to compare two builds in one run")
	rounds := flag.Int("rounds", 1, "run each backlog's configurations this many times, round after round; the tables use each configuration's median run")
	repeatUnder := flag.Duration("repeat-under", 0, "with -rounds: only configurations whose first run on a backlog took less than this run again in the later rounds (0: all)")
	timeout := flag.Duration("run-timeout", def.RunTimeout, "a run taking longer is recorded as failed")
	verify := flag.String("verify", def.Verify, "runs checked with paraply verify: first, all or none")
	bufferPool := flag.Int("buffer-pool-mb", def.BufferPoolMB, "innodb_buffer_pool_size of every server, MiB (at most 256)")
	binlogFormat := flag.String("binlog-format", "", "the source's binlog_format: ROW (default), MIXED or STATEMENT")
	noWarm := flag.Bool("no-warm", false, "do not read the tables into the buffer pool after each restore")
	profile := flag.Bool("profile", false, "keep a CPU profile of every paraply run, and its heap at the peak, in the output directory (cpu-*.pprof, heap-*.pprof; go tool pprof reads them)")
	baseDir := flag.String("base-dir", "", "directory for the servers and snapshots (default $TMPDIR)")
	rewrite := flag.String("rewrite", "", "read DIR/results.json of a benchmark already run and write it, results.md and the charts again as this build computes them (ratios, medians, reasons), then exit")
	flag.BoolVar(&list, "list", false, "list the workloads and the default configurations, then exit")
	flag.Parse()

	cfg := def
	if quick {
		cfg = bench.Quick()
	}
	if *rewrite != "" {
		if err := bench.Rewrite(*rewrite); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		return 0
	}
	if list {
		fmt.Println("workloads:", strings.Join(bench.WorkloadNames(), ", "))
		fmt.Println("configurations (full run):")
		for _, a := range def.Applies {
			fmt.Printf("  %-32s %s\n", a.Name(), a.Label())
		}
		fmt.Println("other forms: native-<threads>-<mode>, paraply-<workers>-<mode>[-nobatch|-batch<N>][-unordered], ceiling-<clients>;")
		fmt.Println("  a paraply or apply configuration followed by @b runs the -paraply-b binary")
		return 0
	}
	err := func() error {
		var err error
		if workloads != "" {
			if cfg.Workloads, err = bench.ParseWorkloads(workloads); err != nil {
				return err
			}
		}
		if clients != "" {
			if cfg.Clients, err = bench.ParseInts(clients); err != nil {
				return fmt.Errorf("-clients: %w", err)
			}
		}
		if configs != "" {
			if cfg.Applies, err = bench.ParseApplies(configs); err != nil {
				return err
			}
		}
		if durability != "" {
			if cfg.Durable, err = bench.ParseDurability(durability); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	if *events > 0 {
		cfg.Events = *events
	}
	if *eventsFor != "" {
		m, err := bench.ParseEventsFor(*eventsFor)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -events-for:", err)
			return 2
		}
		cfg.EventsFor = m
	}
	if *tables > 0 {
		cfg.Tables = *tables
	}
	if *tableSize > 0 {
		cfg.TableSize = *tableSize
	}
	cfg.Paraply, cfg.RunTimeout, cfg.Verify, cfg.BufferPoolMB = *paraply, *timeout, *verify, *bufferPool
	cfg.BinlogFormat = strings.ToUpper(*binlogFormat)
	cfg.Warm, cfg.BaseDir, cfg.Profile = !*noWarm, *baseDir, *profile
	cfg.ParaplyB, cfg.Rounds, cfg.RepeatUnder = *paraplyB, *rounds, *repeatUnder
	cfg.OutDir = *out
	if cfg.OutDir == "" {
		cfg.OutDir = defaultOutDir(quick)
	}

	uninstall := sandbox.HandleSignals()
	defer uninstall()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	_, err = bench.Run(ctx, cfg)
	fmt.Fprintf(os.Stderr, "bench: %s in %s; results in %s\n", outcome(err), time.Since(began).Round(time.Second), cfg.OutDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	return 0
}

// defaultOutDir is bench/results/<date>[-quick], with a suffix if a
// benchmark already wrote there.
func defaultOutDir(quick bool) string {
	name := time.Now().Format("2006-01-02")
	if quick {
		name += "-quick"
	}
	dir := filepath.Join("bench", "results", name)
	for i := 2; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, "results.json")); os.IsNotExist(err) {
			return dir
		}
		dir = filepath.Join("bench", "results", fmt.Sprintf("%s-%d", name, i))
	}
}

func outcome(err error) string {
	if err != nil {
		return "failed"
	}
	return "done"
}
