package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/paraply/paraply/internal/analyze"
	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/schema"
)

func analyzeCmd() *cobra.Command {
	var (
		schemaDSN, schemaFile, htmlPath string
		asJSON, partial                 bool
		opts                            analyze.Options
		passwordFile                    string
	)
	cmd := &cobra.Command{
		Use:   "analyze [--schema DSN | --schema-file FILE] FILE...",
		Short: "Measure how parallel binlog files could be applied, and what serializes them",
		Long: `analyze reads binlog files (MariaDB 10.x, MySQL 5.7 to 9.x, compressed
transaction payloads included) and reports, for each dependency mode, the
critical path, the average parallelism, a simulated apply speedup for several
worker counts, what serialized the stream, the hottest rows and tables, and a
recommendation.

The speedups are for a target of --target-cores cores (this machine's by
default), and each mode says what caps its speedup: the dependencies,
batching, commit order or the target's cores.

Unique and foreign keys are not in the binlog: give the schema as it was at
the start of the first file, from a live server (--schema) or from a
mariadb-dump/mysqldump --no-data file (--schema-file). Tables created in the
stream are learned from their CREATE TABLE.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			cat, err := loadSchema(cmd.Context(), schemaDSN, schemaFile, passwordFile)
			if err != nil {
				return err
			}
			opts.Catalog = cat
			if term.IsTerminal(int(os.Stderr.Fd())) {
				opts.Progress = progressBar(os.Stderr)
			}
			rep, runErr := analyze.Run(opts)
			if opts.Progress != nil {
				fmt.Fprint(os.Stderr, "\r\033[K")
			}
			if runErr != nil && !partial {
				return fmt.Errorf("%w (use --partial to see the analysis of what was read before it)", runErr)
			}
			if err := writeReport(cmd.OutOrStdout(), rep, asJSON, htmlPath); err != nil {
				return err
			}
			if runErr != nil {
				fmt.Fprintln(os.Stderr, "paraply:", runErr)
				return errSilent
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&schemaDSN, "schema", "", "read keys from a live server: mysql://USER@HOST:PORT (password from PARAPLY_SCHEMA_PASSWORD or --schema-password-file)")
	f.StringVar(&passwordFile, "schema-password-file", "", "file holding the password for --schema")
	f.StringVar(&schemaFile, "schema-file", "", "read keys from CREATE TABLE statements (mariadb-dump/mysqldump --no-data output)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.StringVar(&htmlPath, "html", "", "also write a self-contained HTML report to this file")
	f.BoolVar(&partial, "partial", false, "on damaged input, still print the analysis of what was read before it (exit status stays 1)")
	f.IntVar(&opts.HistorySize, "history-size", 0, "writeset history size in keys (default 25000, as MySQL)")
	f.IntSliceVar(&opts.Workers, "workers", nil, "worker counts to simulate (default 1,2,4,8,16,32)")
	f.Float64Var(&opts.Model.PerTxn, "cost-per-txn", analyze.DefaultCostModel.PerTxn, "simulation: fixed cost of a transaction")
	f.Float64Var(&opts.Model.PerRow, "cost-per-row", analyze.DefaultCostModel.PerRow, "simulation: cost of one row change")
	f.Float64Var(&opts.Model.PerStatement, "cost-per-statement", analyze.DefaultCostModel.PerStatement, "simulation: cost of one statement-format DML statement (MIXED, STATEMENT)")
	f.Float64Var(&opts.Model.StatementWork, "cost-per-statement-work", analyze.DefaultCostModel.StatementWork, "simulation: what a batch holding statement-format transactions adds (the source session's settings set on the target and the worker's back)")
	f.Float64Var(&opts.Model.StatementGain, "statement-gain", analyze.DefaultCostModel.StatementGain, "simulation: the most workers gain on statement-format transactions as paraply applies them (0: no such bound)")
	f.Float64Var(&opts.Model.Commit, "cost-per-commit", analyze.DefaultCostModel.Commit, "simulation: cost of one commit on the target (round trip and log flush), shared by the transactions of a batch")
	f.IntVar(&opts.Model.Batch, "batch-max-txns", analyze.DefaultCostModel.Batch, "simulation: source transactions applied in one target transaction at most, as replicate's flag")
	f.BoolVar(&opts.Model.PreserveOrder, "preserve-commit-order", true, "simulation: commit in source order (the report also gives the speedups without)")
	f.IntVar(&opts.Model.Window, "window", analyze.DefaultCostModel.Window, "simulation: transactions looked ahead, as replicate's flag (with a backlog, N workers get batches of at most window/N)")
	f.IntVar(&opts.Model.Cores, "target-cores", analyze.DefaultCostModel.Cores, "simulation: the target's CPU cores, shared with paraply (default: this machine's, as the source or a replica the binlogs are read on is most often sized like the target; 0: unlimited, what the dependencies and batching alone allow)")
	f.Float64Var(&opts.Model.Capacity, "capacity", 0, "simulation: transactions the target applies at once, instead of what --target-cores gives")
	f.IntVar(&opts.TopN, "top", 10, "how many hot rows and tables to list")
	cmd.MarkFlagsMutuallyExclusive("schema", "schema-file")
	return cmd
}

func loadSchema(ctx context.Context, dsn, file, passwordFile string) (*schema.Catalog, error) {
	switch {
	case file != "":
		cat, warnings, err := schema.ParseFile(file)
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			fmt.Fprintf(os.Stderr, "paraply: schema file: %v\n", w)
		}
		return cat, nil
	case dsn != "":
		ep, err := config.ParseEndpoint(dsn)
		if err != nil {
			return nil, err
		}
		if ep, err = ep.ResolvePassword("PARAPLY_SCHEMA_PASSWORD", passwordFile); err != nil {
			return nil, err
		}
		db, err := sql.Open("mysql", ep.DriverDSN(""))
		if err != nil {
			return nil, err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cat, err := schema.Load(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("reading the schema from %s: %w", ep, err)
		}
		return cat, nil
	}
	return nil, nil
}

func writeReport(w io.Writer, rep *analyze.Report, asJSON bool, htmlPath string) error {
	if htmlPath != "" {
		f, err := os.Create(htmlPath)
		if err != nil {
			return err
		}
		if err := analyze.WriteHTML(f, rep); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return analyze.WriteText(w, rep)
}

// progressBar returns a Progress callback drawing a bar on w (a terminal).
func progressBar(w io.Writer) func(done, total int64) {
	began := time.Now()
	return func(done, total int64) {
		if total <= 0 {
			return
		}
		frac := float64(done) / float64(total)
		const width = 30
		n := int(frac * width)
		bar := make([]byte, width)
		for i := range bar {
			bar[i] = ' '
			if i < n {
				bar[i] = '='
			}
		}
		mbps := float64(done) / 1e6 / max(time.Since(began).Seconds(), 1e-3)
		fmt.Fprintf(w, "\r[%s] %5.1f%%  %.1f/%.1f MB  %.0f MB/s", bar, 100*frac, float64(done)/1e6, float64(total)/1e6, mbps)
	}
}
