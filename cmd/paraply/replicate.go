package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/replicate"
)

func replicateCmd() *cobra.Command {
	cfg := replicate.Default()
	var (
		src  sourceFlags
		pipe pipelineFlags
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := src.resolve(&cfg); err != nil {
				return err
			}
			if err := pipe.resolve(&cfg); err != nil {
				return err
			}
			return pipe.run(cmd.Context(), cfg, replicate.New, nil)
		},
	}
	f := cmd.Flags()
	src.add(f, &cfg)
	pipe.add(f, &cfg, "127.0.0.1:9104")
	f.StringVar(&cfg.StartGTID, "start-gtid", "", "GTID position the target's data was taken at, for the first start (no checkpoint yet); \"current\": the source's position now. Required when the target holds tables; refused when it disagrees with the target's checkpoint")
	f.BoolVar(&cfg.UntilCaughtUp, "until-caught-up", false, "exit 0 once the target has applied everything the source had at start")
	f.StringVar(&cfg.UntilGTID, "until-gtid", "", "exit 0 once the transaction at this GTID position is applied, applying nothing after it (as START SLAVE UNTIL master_gtid_pos)")
	f.StringVar(&cfg.HeartbeatTable, "heartbeat-table", "", "db.table on the source where paraply writes a heartbeat row (as pt-heartbeat; needs CREATE and INSERT there) to date the lag to the heartbeat interval even for transactions received late (default: date by receive times)")
	f.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", 100*time.Millisecond, "how often --heartbeat-table is written")
	f.DurationVar(&cfg.Delay, "delay", 0, "apply each transaction no earlier than its source commit time plus this (as MASTER_DELAY), e.g. 1h")
	return cmd
}

// sourceFlags are the flags of the source endpoint and of receiving from
// it, which replicate and handover share.
type sourceFlags struct {
	url, pwFile string
	tls         tlsFlags
}

func (s *sourceFlags) add(f *pflag.FlagSet, cfg *replicate.Config) {
	f.StringVar(&s.url, "source", "", "source server, mysql://USER@HOST:PORT")
	f.StringVar(&s.pwFile, "source-password-file", "", "file holding the source password")
	s.tls.add(f, "source")
	f.StringVar(&cfg.RelayDir, "relay-dir", cfg.RelayDir, "directory of the relay log (default paraply-relay, paraply-relay-NAME for stream NAME)")
	f.Int64Var(&cfg.RelayMaxBytes, "relay-max-bytes", cfg.RelayMaxBytes, "disk the relay log may use; receiving pauses when it is full")
	f.Uint32Var(&cfg.ServerID, "server-id", cfg.ServerID, "replica server_id presented to the source (unique among its replicas)")
	f.DurationVar(&cfg.Heartbeat, "heartbeat", cfg.Heartbeat, "source heartbeat period (a silent stream is reconnected after 3)")
}

// resolve fills cfg's source from the flags ("" leaves it unset).
func (s *sourceFlags) resolve(cfg *replicate.Config) error {
	if s.url == "" {
		return nil
	}
	var err error
	if cfg.Source, err = endpoint(s.url, "PARAPLY_SOURCE_PASSWORD", s.pwFile); err != nil {
		return fmt.Errorf("--source: %w", err)
	}
	if cfg.SourceTLS, err = s.tls.config(cfg.Source.Host); err != nil {
		return fmt.Errorf("--source-tls: %w", err)
	}
	return nil
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
// costs little memory and saves much of paraply's CPU (docs/benchmark.md,
// "The measurements behind the defaults"); the soft limit keeps the heap
// bounded anyway.
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
