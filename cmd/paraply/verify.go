package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"

	_ "github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/verify"
)

func verifyCmd() *cobra.Command {
	var (
		sourceURL, targetURL       string
		sourcePWFile, targetPWFile string
		tables                     []string
		opts                       verify.Options
		asJSON                     bool
		sourceTLS, targetTLS       tlsFlags
		filters                    filterFlags
	)
	cmd := &cobra.Command{
		Use:   "verify --source DSN --target DSN [--tables db.t,...] [--schemas db,...]",
		Short: "Check that the target holds the same rows as the source",
		Long: `verify compares the tables of the source and the target chunk by chunk
(walking each table in primary-key order, as pt-table-checksum does) and
lists the differing chunks and rows. Run it once replication has caught up:
it takes no locks, but reads each table in a consistent snapshot.

By default every base table of every schema is compared, except mysql,
information_schema, performance_schema, sys and paraply. A table missing on
either side, or with different columns, is a difference.

With replicate's --include, --exclude and --rewrite-db (from --config too)
it compares what they replicate, each source table with the target table
it goes to. On a target of several sources, --name (from --config too)
says which stream's source this is: the tables of the target's other
streams are left out and listed, not reported missing on the source.

Passwords come from PARAPLY_SOURCE_PASSWORD and PARAPLY_TARGET_PASSWORD or
from --source-password-file and --target-password-file. The TLS flags are
those of replicate.

The exit status is 0 when the target equals the source, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Checked here, not by cobra: --config may give them.
			if sourceURL == "" || targetURL == "" {
				return fmt.Errorf("--source and --target are required")
			}
			rules, err := filter.NewRules(filters.include, filters.exclude, filters.rewrite)
			if err != nil {
				return err
			}
			if !rules.Empty() {
				opts.Filter = &rules
			}
			for _, s := range tables {
				names, err := verify.ParseTableNames(s)
				if err != nil {
					return err
				}
				opts.Tables = append(opts.Tables, names...)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			var src, tgt *sql.DB
			if src, opts.SourceName, err = openEndpoint(ctx, "source", sourceURL, "PARAPLY_SOURCE_PASSWORD", sourcePWFile, &sourceTLS, opts.Parallel); err != nil {
				return err
			}
			defer src.Close()
			if tgt, opts.TargetName, err = openEndpoint(ctx, "target", targetURL, "PARAPLY_TARGET_PASSWORD", targetPWFile, &targetTLS, opts.Parallel); err != nil {
				return err
			}
			defer tgt.Close()
			opts.Source, opts.Target = src, tgt

			rep, err := verify.Run(ctx, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				err = enc.Encode(rep)
			} else {
				err = rep.WriteText(out)
			}
			if err != nil {
				return err
			}
			if !rep.Equal() {
				return errSilent
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&sourceURL, "source", "", "source server: mysql://USER@HOST:PORT")
	f.StringVar(&targetURL, "target", "", "target server: mysql://USER@HOST:PORT")
	f.StringVar(&sourcePWFile, "source-password-file", "", "file holding the source's password (else PARAPLY_SOURCE_PASSWORD)")
	f.StringVar(&targetPWFile, "target-password-file", "", "file holding the target's password (else PARAPLY_TARGET_PASSWORD)")
	sourceTLS.add(f, "source")
	targetTLS.add(f, "target")
	f.StringArrayVar(&tables, "tables", nil, "compare only these tables: db.t,... (quote a part with backticks if it holds a dot or comma)")
	f.StringSliceVar(&opts.Schemas, "schemas", nil, "compare only the tables of these schemas: db,...")
	f.IntVar(&opts.ChunkSize, "chunk-size", verify.DefaultChunkSize, "source rows per chunk")
	f.IntVar(&opts.Parallel, "parallel", verify.DefaultParallel, "tables compared at a time")
	f.IntVar(&opts.MaxRows, "max-rows", verify.DefaultMaxRows, "differing rows listed per table")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	// replicate's: a table is compared with the one it is replicated into,
	// and what they leave out is not compared.
	filters.add(f)
	f.StringVar(&opts.Stream, "name", checkpoint.DefaultStream, "the stream whose source this is (replicate's --name): on a target of several sources, "+
		"the other streams' tables are left out, not reported missing on the source")
	cmd.MarkFlagsMutuallyExclusive("tables", "schemas")
	return cmd
}

// openEndpoint parses url, resolves its password and TLS settings and
// returns a checked connection pool, with the endpoint's redacted name for
// the report.
func openEndpoint(ctx context.Context, role, url, passwordEnv, passwordFile string, tf *tlsFlags, parallel int) (*sql.DB, string, error) {
	ep, err := config.ParseEndpoint(url)
	if err != nil {
		return nil, "", err
	}
	if ep, err = ep.ResolvePassword(passwordEnv, passwordFile); err != nil {
		return nil, "", err
	}
	tlsConfig, err := tf.config(ep.Host)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", ep, err)
	}
	ep = ep.WithTLS(tlsConfig)
	db, err := ep.Open(nil)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", ep, err)
	}
	// One connection per table being compared, one for information_schema.
	db.SetMaxIdleConns(max(parallel, 1) + 1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("connect to %s: %w", ep, redact(ep.ExplainDenied(role, err), ep.Password()))
	}
	return db, ep.String(), nil
}

// redact removes the password from an error text, in case a driver put it
// there.
func redact(err error, password string) error {
	if password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), password, "…"))
}
