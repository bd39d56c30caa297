package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/buildinfo"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/status"
)

// targetFlags are the target endpoint's flags, and the stream on it:
// every command that connects to the target has them.
type targetFlags struct {
	url, pwFile, name string
	tls               tlsFlags
}

func (t *targetFlags) add(f *pflag.FlagSet) {
	f.StringVar(&t.url, "target", "", "target server, mysql://USER@HOST:PORT")
	f.StringVar(&t.name, "name", checkpoint.DefaultStream, "the stream on the target: one paraply process per source, each stream with its own checkpoint (database paraply for default, paraply_stream_NAME otherwise), lock, metrics label and log field, as MariaDB's multi-source connection names")
	f.StringVar(&t.pwFile, "target-password-file", "", "file holding the target password")
	t.tls.add(f, "target")
}

// resolve fills cfg's target from the flags.
func (t *targetFlags) resolve(cfg *replicate.Config) error {
	if err := checkpoint.ValidStream(t.name); err != nil {
		return fmt.Errorf("--name: %w", err)
	}
	cfg.Name = t.name
	var err error
	if cfg.Target, err = endpoint(t.url, "PARAPLY_TARGET_PASSWORD", t.pwFile); err != nil {
		return fmt.Errorf("--target: %w", err)
	}
	if cfg.TargetTLS, err = t.tls.config(cfg.Target.Host); err != nil {
		return fmt.Errorf("--target-tls: %w", err)
	}
	return nil
}

// logFlags is --log-level.
type logFlags struct{ level string }

func (l *logFlags) add(f *pflag.FlagSet) {
	f.StringVar(&l.level, "log-level", "info", "debug|info|warn|error")
}

// resolve sets cfg.Logger: text on stderr at the level asked.
func (l *logFlags) resolve(cfg *replicate.Config) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	cfg.Logger = newLogger(os.Stderr, level)
	return nil
}

// newLogger writes text lines at level and above to w.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: errorText}))
}

// errorText writes an error attribute as its message: the text handler
// formats values with %+v, with which the errors of go-mysql's client
// (pingcap/errors) print their Go stack trace into the line.
func errorText(_ []string, a slog.Attr) slog.Attr {
	if err, ok := a.Value.Any().(error); ok && a.Value.Kind() == slog.KindAny {
		a.Value = slog.StringValue(err.Error())
	}
	return a
}

// httpFlags are --http and --http-allow-remote: where a pipeline serves
// its status page and metrics.
type httpFlags struct {
	addr        string
	allowRemote bool
}

// add declares the flags with def as --http's default ("" = off).
func (h *httpFlags) add(f *pflag.FlagSet, def string) {
	f.StringVar(&h.addr, "http", def, "serve /metrics, /status.json and a status page here (\"\" = off)")
	f.BoolVar(&h.allowRemote, "http-allow-remote", false, "allow --http on a non-loopback address (the endpoint has no authentication)")
}

// addPreserveGTIDs declares --preserve-gtids, which replicate, apply and
// handover's gap fill share.
func addPreserveGTIDs(f *pflag.FlagSet, cfg *replicate.Config) {
	f.BoolVar(&cfg.PreserveGTIDs, "preserve-gtids", false, "commit each source transaction on the target under its source GTID, as a native replica with log_slave_updates (MariaDB source and target; the target needs log-bin, binlog_format=ROW, binlog-ignore-db=paraply and BINLOG REPLAY; one source transaction per target transaction)")
}

// pipelineFlags are the flags replicate and apply share, since they run
// one pipeline: the target, how it is applied to, the filters, logging
// and the status endpoint.
type pipelineFlags struct {
	target  targetFlags
	filters filterFlags
	log     logFlags
	http    httpFlags
}

// add declares the flags, with httpDefault as --http's default; the ones
// that are replicate.Config fields write into cfg.
func (p *pipelineFlags) add(f *pflag.FlagSet, cfg *replicate.Config, httpDefault string) {
	p.target.add(f)
	f.Var((*workersValue)(cfg), "workers", fmt.Sprintf("parallel apply sessions on the target: a count, or auto (a pool of %d, of which paraply finds while it runs how many apply fastest)", replicate.AutoWorkersPool))
	f.Var(enumFlag[deptrack.Mode]{&cfg.Mode, deptrack.ParseMode}, "dependency", "serial|database|commit-order|writeset|writeset-session")
	f.BoolVar(&cfg.PreserveOrder, "preserve-commit-order", cfg.PreserveOrder, "commit on the target in source order")
	f.IntVar(&cfg.BatchTxns, "batch-max-txns", cfg.BatchTxns, "source transactions combined into one target transaction at most")
	addPreserveGTIDs(f, cfg)
	f.Var(enumFlag[applier.Path]{&cfg.Apply, applier.ParsePath}, "apply", "how rows are applied: sql (SQL statements: fastest; tables with triggers on the target, system-versioned tables and sequences are refused) | binlog (the target's own row applier: exact as a native replica, slower; needs BINLOG REPLAY on a MariaDB target) | auto (sql, and binlog for what sql cannot apply exactly, when source and target are MariaDB and the account may)")
	f.IntVar(&cfg.PieceBytes, "large-txn-piece", cfg.PieceBytes, "a transaction larger than this many bytes is received, stored and applied in pieces of this size, in bounded memory")
	f.BoolVar(&cfg.NoCompact, "no-compact", false, "apply every row change as its own statement (default: merge each row's changes and group rows, on tables with only a primary key)")
	f.DurationVar(&cfg.BatchDelay, "batch-max-delay", 0, "how long a ready transaction may wait for its batch to fill (0: never)")
	f.IntVar(&cfg.History, "history-size", 0, "writeset history size in keys (default 25000)")
	f.IntVar(&cfg.Window, "window", cfg.Window, "look-ahead: transactions admitted and not yet committed, at most")
	f.DurationVar(&cfg.ConnectWait, "connect-wait", cfg.ConnectWait, "how long to wait at start for a server that does not answer")
	p.log.add(f)
	p.http.add(f, httpDefault)
	p.filters.add(f)
}

// resolve fills cfg's target, filters and logger from the flags.
func (p *pipelineFlags) resolve(cfg *replicate.Config) error {
	if err := p.target.resolve(cfg); err != nil {
		return err
	}
	if err := p.filters.resolve(cfg); err != nil {
		return err
	}
	return p.log.resolve(cfg)
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
	if p.http.addr != "" {
		l, err := listenStatus(p.http.addr, p.http.allowRemote)
		if err != nil {
			return err
		}
		srv := status.NewServer(rep, workers)
		srv.SetVersion(buildinfo.Version())
		go func() {
			// Replication goes on without the status page, but say so.
			if err := srv.Serve(ctx, l); err != nil {
				cfg.Logger.Error("the status and metrics server stopped", "err", err)
			}
		}()
		cfg.Logger.Info("status and metrics", "url", "http://"+l.Addr().String()+"/")
	}
	if during == nil {
		return stopped(ctx, rep, rep.Run(ctx))
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
	return stopped(ctx, rep, err)
}

// stopped logs where a pipeline that SIGINT or SIGTERM stopped (ctx done,
// err nil) left the target: the operator, or a service's journal, learns
// the final position from the last line. It returns err.
func stopped(ctx context.Context, rep *replicate.Replica, err error) error {
	if err == nil && ctx.Err() != nil {
		st := rep.Status()
		pos := st.Checkpoint.Position
		if pos == "" {
			pos = "(nothing applied yet)"
		}
		rep.Logger().Info("stopped on a signal: the target has everything up to the position; a restart resumes there",
			"position", pos, "target", st.Target)
	}
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

// enumFlag is a flag whose text is parsed once, as it is set, into the
// type the pipeline takes (--dependency, --apply): a wrong value is an
// error naming the flag before anything runs.
type enumFlag[T fmt.Stringer] struct {
	v     *T
	parse func(string) (T, error)
}

func (e enumFlag[T]) String() string {
	if e.v == nil {
		return ""
	}
	return (*e.v).String()
}

func (e enumFlag[T]) Set(s string) error {
	v, err := e.parse(s)
	if err != nil {
		return err
	}
	*e.v = v
	return nil
}

func (e enumFlag[T]) Type() string { return "string" }
