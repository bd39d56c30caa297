package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/status"
)

// pipelineFlags are the flags replicate and apply share, since they run
// one pipeline: the target, how it is applied to, logging and the status
// endpoint.
type pipelineFlags struct {
	targetURL, targetPwFile  string
	mode, logLevel, httpAddr string
	httpAllowRemote          bool
	targetTLS                tlsFlags
	filters                  filterFlags
}

// add declares the flags; the ones that are replicate.Config fields write
// into cfg.
func (p *pipelineFlags) add(f *pflag.FlagSet, cfg *replicate.Config) {
	f.StringVar(&p.targetURL, "target", "", "target server, mysql://USER@HOST:PORT")
	f.StringVar(&p.targetPwFile, "target-password-file", "", "file holding the target password")
	p.targetTLS.add(f, "target")
	f.Var((*workersValue)(cfg), "workers", fmt.Sprintf("parallel apply sessions on the target: a count, or auto (a pool of %d, of which paraply finds while it runs how many apply fastest)", replicate.AutoWorkersPool))
	f.StringVar(&p.mode, "dependency", cfg.Mode.String(), "serial|database|commit-order|writeset|writeset-session")
	f.BoolVar(&cfg.PreserveOrder, "preserve-commit-order", cfg.PreserveOrder, "commit on the target in source order")
	f.IntVar(&cfg.BatchTxns, "batch-max-txns", cfg.BatchTxns, "source transactions combined into one target transaction at most")
	f.BoolVar(&cfg.PreserveGTIDs, "preserve-gtids", false, "commit each source transaction on the target under its source GTID, as a native replica with log_slave_updates (MariaDB source and target; the target needs log-bin, binlog_format=ROW, binlog-ignore-db=paraply and BINLOG REPLAY; one source transaction per target transaction)")
	f.StringVar(&cfg.Apply, "apply", cfg.Apply, "how rows are applied: sql (SQL statements: fastest; tables with triggers on the target, system-versioned tables and sequences are refused) | binlog (the target's own row applier: exact as a native replica, slower; needs BINLOG REPLAY on a MariaDB target) | auto (sql, and binlog for what sql cannot apply exactly, when source and target are MariaDB and the account may)")
	f.IntVar(&cfg.PieceBytes, "large-txn-piece", cfg.PieceBytes, "a transaction larger than this many bytes is received, stored and applied in pieces of this size, in bounded memory")
	f.BoolVar(&cfg.NoCompact, "no-compact", false, "apply every row change as its own statement (default: merge each row's changes and group rows, on tables with only a primary key)")
	f.DurationVar(&cfg.BatchDelay, "batch-max-delay", 0, "how long a ready transaction may wait for its batch to fill (0: never)")
	f.IntVar(&cfg.History, "history-size", 0, "writeset history size in keys (default 25000)")
	f.IntVar(&cfg.Window, "window", cfg.Window, "look-ahead: transactions admitted and not yet committed, at most")
	f.DurationVar(&cfg.ConnectWait, "connect-wait", cfg.ConnectWait, "how long to wait at start for a server that does not answer")
	f.StringVar(&p.logLevel, "log-level", "info", "debug|info|warn|error")
	f.StringVar(&p.httpAddr, "http", "127.0.0.1:9104", "serve /metrics, /status.json and a status page here (\"\" = off)")
	f.BoolVar(&p.httpAllowRemote, "http-allow-remote", false, "allow --http on a non-loopback address (the endpoint has no authentication)")
	p.filters.add(f)
}

// resolve fills cfg's target, dependency mode and logger from the flags.
func (p *pipelineFlags) resolve(cfg *replicate.Config) error {
	var err error
	if cfg.Target, err = endpoint(p.targetURL, "PARAPLY_TARGET_PASSWORD", p.targetPwFile); err != nil {
		return fmt.Errorf("--target: %w", err)
	}
	if cfg.TargetTLS, err = p.targetTLS.config(cfg.Target.Host); err != nil {
		return fmt.Errorf("--target-tls: %w", err)
	}
	if cfg.Mode, err = deptrack.ParseMode(p.mode); err != nil {
		return err
	}
	if err := p.filters.resolve(cfg); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(p.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	return nil
}

// run runs the pipeline newPipeline makes of cfg until it ends or SIGINT
// or SIGTERM stops it, with metrics and, if --http, the status endpoint.
// during, if not nil, runs beside the pipeline with its context, the
// pipeline and the workers' counters; run returns once both have.
func (p *pipelineFlags) run(ctx context.Context, cfg replicate.Config, newPipeline func(replicate.Config) *replicate.Replica,
	during func(context.Context, *replicate.Replica, *metrics.Workers)) error {
	tuneGC()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	workers := metrics.NewWorkers(cfg.Pool())
	cfg.Observer = workers
	rep := newPipeline(cfg)
	if p.httpAddr != "" {
		l, err := status.Listen(p.httpAddr, p.httpAllowRemote)
		if err != nil {
			return err
		}
		srv := status.NewServer(rep, workers)
		go func() {
			// Replication goes on without the status page, but say so.
			if err := srv.Serve(ctx, l); err != nil {
				cfg.Logger.Error("the status and metrics server stopped", "err", err)
			}
		}()
		cfg.Logger.Info("status and metrics", "url", "http://"+l.Addr().String()+"/")
	}
	if during == nil {
		return rep.Run(ctx)
	}
	dctx, cancel := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		during(dctx, rep, workers)
	}()
	err := rep.Run(ctx)
	cancel()
	<-followed
	return err
}

// workersValue is --workers: "auto" or a fixed count.
type workersValue replicate.Config

func (w *workersValue) String() string {
	if (*replicate.Config)(w).Auto() {
		return "auto"
	}
	return strconv.Itoa(w.Workers)
}

func (w *workersValue) Set(s string) error {
	if s == "auto" {
		w.Workers = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("%q: want auto or a count of at least 1", s)
	}
	w.Workers = n
	return nil
}

func (w *workersValue) Type() string { return "auto|N" }
