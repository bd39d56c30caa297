package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/status"
)

func replicateCmd() *cobra.Command {
	cfg := replicate.Default()
	var (
		sourceURL, targetURL, mode string
		sourcePwFile, targetPwFile string
		configFile, logLevel       string
		httpAddr                   string
		httpAllowRemote            bool
		sourceTLS, targetTLS       tlsFlags
	)
	cmd := &cobra.Command{
		Use:   "replicate --source mysql://USER@HOST:PORT --target mysql://USER@HOST:PORT",
		Short: "Replicate a live source into a target with many workers, exactly once",
		Long: `replicate connects to the source as a replica (GTID), keeps what it receives
in a relay log, computes which transactions are independent, and applies them
on the target with --workers sessions, recording every applied GTID on the
target in the same transaction (schema paraply). It survives SIGKILL at any
moment: a restart resumes from the target's checkpoint and skips what is
already applied.

Passwords come from PARAPLY_SOURCE_PASSWORD / PARAPLY_TARGET_PASSWORD or from
--source-password-file / --target-password-file, never from logs.

--source-tls and --target-tls turn on TLS: "on" verifies the server's
certificate against --*-tls-ca (else the system's roots) and the host name;
"skip-verify" accepts any certificate (tests only). --*-tls-cert and
--*-tls-key give a client certificate.`,
		Args: cobra.NoArgs,
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			if configFile != "" {
				return config.ApplyFile(cmd.Flags(), configFile)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Source, err = endpoint(sourceURL, "PARAPLY_SOURCE_PASSWORD", sourcePwFile); err != nil {
				return fmt.Errorf("--source: %w", err)
			}
			if cfg.Target, err = endpoint(targetURL, "PARAPLY_TARGET_PASSWORD", targetPwFile); err != nil {
				return fmt.Errorf("--target: %w", err)
			}
			if cfg.SourceTLS, err = sourceTLS.config(cfg.Source.Host); err != nil {
				return fmt.Errorf("--source-tls: %w", err)
			}
			if cfg.TargetTLS, err = targetTLS.config(cfg.Target.Host); err != nil {
				return fmt.Errorf("--target-tls: %w", err)
			}
			if cfg.Mode, err = deptrack.ParseMode(mode); err != nil {
				return err
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			tuneGC()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			workers := metrics.NewWorkers(cfg.Workers)
			cfg.Observer = workers
			rep := replicate.New(cfg)
			if httpAddr != "" {
				l, err := status.Listen(httpAddr, httpAllowRemote)
				if err != nil {
					return err
				}
				srv := status.NewServer(rep, workers)
				go srv.Serve(ctx, l)
				cfg.Logger.Info("status and metrics", "url", "http://"+l.Addr().String()+"/")
			}
			return rep.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sourceURL, "source", "", "source server, mysql://USER@HOST:PORT")
	f.StringVar(&targetURL, "target", "", "target server, mysql://USER@HOST:PORT")
	f.StringVar(&sourcePwFile, "source-password-file", "", "file holding the source password")
	f.StringVar(&targetPwFile, "target-password-file", "", "file holding the target password")
	sourceTLS.add(f, "source")
	targetTLS.add(f, "target")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "parallel apply sessions on the target")
	f.StringVar(&mode, "dependency", cfg.Mode.String(), "serial|database|commit-order|writeset|writeset-session")
	f.BoolVar(&cfg.PreserveOrder, "preserve-commit-order", cfg.PreserveOrder, "commit on the target in source order")
	f.StringVar(&cfg.RelayDir, "relay-dir", cfg.RelayDir, "directory of the relay log")
	f.Int64Var(&cfg.RelayMaxBytes, "relay-max-bytes", cfg.RelayMaxBytes, "disk the relay log may use; receiving pauses when it is full")
	f.Uint32Var(&cfg.ServerID, "server-id", cfg.ServerID, "replica server_id presented to the source (unique among its replicas)")
	f.StringVar(&cfg.StartGTID, "start-gtid", "", "GTID position to start from when the target has no checkpoint (default: the source's current position)")
	f.BoolVar(&cfg.UntilCaughtUp, "until-caught-up", false, "exit 0 once the target has applied everything the source had at start")
	f.IntVar(&cfg.BatchTxns, "batch-max-txns", cfg.BatchTxns, "source transactions combined into one target transaction at most")
	f.StringVar(&cfg.Apply, "apply", cfg.Apply, "how rows are applied: binlog (the target's own row applier: exact, needs BINLOG REPLAY on a MariaDB target) | sql (SQL statements) | auto (binlog when source and target are MariaDB and the account may, else sql)")
	f.BoolVar(&cfg.NoCompact, "no-compact", false, "apply every row change as its own statement (default: merge each row's changes and group rows, on tables with only a primary key)")
	f.DurationVar(&cfg.BatchDelay, "batch-max-delay", 0, "how long a ready transaction may wait for its batch to fill (0: never)")
	f.IntVar(&cfg.History, "history-size", 0, "writeset history size in keys (default 25000)")
	f.IntVar(&cfg.Window, "window", cfg.Window, "look-ahead: transactions admitted and not yet committed, at most")
	f.DurationVar(&cfg.Heartbeat, "heartbeat", cfg.Heartbeat, "source heartbeat period (a silent stream is reconnected after 3)")
	f.StringVar(&cfg.HeartbeatTable, "heartbeat-table", "", "db.table on the source where paraply writes a heartbeat row (as pt-heartbeat; needs CREATE and INSERT there) to date the lag to the heartbeat interval even for transactions received late (default: date by receive times)")
	f.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", 100*time.Millisecond, "how often --heartbeat-table is written")
	f.DurationVar(&cfg.ConnectWait, "connect-wait", cfg.ConnectWait, "how long to wait at start for a source or target that does not answer")
	f.StringVar(&configFile, "config", "", "file of flag settings, one 'name = value' per line (command-line flags win)")
	f.StringVar(&logLevel, "log-level", "info", "debug|info|warn|error")
	f.StringVar(&httpAddr, "http", "127.0.0.1:9104", "serve /metrics, /status.json and a status page here (\"\" = off)")
	f.BoolVar(&httpAllowRemote, "http-allow-remote", false, "allow --http on a non-loopback address (the endpoint has no authentication)")
	return cmd
}

// tlsFlags are the TLS flags of one endpoint: --ROLE-tls, --ROLE-tls-ca,
// --ROLE-tls-cert and --ROLE-tls-key.
type tlsFlags struct {
	mode, ca, cert, key string
}

func (t *tlsFlags) add(f *pflag.FlagSet, role string) {
	f.StringVar(&t.mode, role+"-tls", "off", "TLS to the "+role+": off | on (verify the CA and host name) | skip-verify (tests only)")
	f.StringVar(&t.ca, role+"-tls-ca", "", "PEM file of the CA that signs the "+role+"'s certificate (default: the system's roots)")
	f.StringVar(&t.cert, role+"-tls-cert", "", "PEM file of a client certificate for the "+role)
	f.StringVar(&t.key, role+"-tls-key", "", "PEM file of the key of --"+role+"-tls-cert")
}

// config is the tls.Config for connecting to host; nil when TLS is off.
func (t *tlsFlags) config(host string) (*tls.Config, error) {
	mode, err := config.ParseTLSMode(t.mode)
	if err != nil {
		return nil, err
	}
	return config.TLSOptions{Mode: mode, CA: t.ca, Cert: t.cert, Key: t.key}.Config(host)
}

// tuneGC trades memory for CPU unless GOGC or GOMEMLIMIT say otherwise:
// the pipeline allocates per event (decoding, SQL text) while its live
// heap stays small (bounded queues), so collecting a quarter as often
// costs little memory and saved a quarter of paraply's CPU on the
// write_only benchmark; the soft limit keeps the heap bounded anyway.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(192 << 20)
	}
}

// endpoint parses a --source/--target URL and resolves its password.
func endpoint(url, envVar, pwFile string) (config.Endpoint, error) {
	ep, err := config.ParseEndpoint(url)
	if err != nil {
		return ep, err
	}
	return ep.ResolvePassword(envVar, pwFile)
}
