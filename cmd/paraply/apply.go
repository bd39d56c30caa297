package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/source"
)

func applyCmd() *cobra.Command {
	cfg := replicate.Default()
	cfg.RelayMaxBytes = 256 << 20
	var (
		pipe                                 pipelineFlags
		startPos, stopGTID, stopTime, stopAt string
		schemaDSN, schemaFile, schemaPwFile  string
		spoolDir                             string
		progressEvery                        time.Duration
	)
	cmd := &cobra.Command{
		Use: "apply --target mysql://USER@HOST:PORT [--start-gtid G | --start-position FILE:OFFSET] " +
			"[--stop-gtid G | --stop-datetime T | --stop-position FILE:OFFSET] FILE...",
		Short: "Apply binlog files to a target with many workers, exactly once (point-in-time recovery)",
		Long: `apply reads binlog files in the order given (MariaDB, or MySQL with GTIDs) and
applies their transactions to the target with the pipeline of replicate: the
same dependencies, workers, apply paths and exactly-once checkpoint on the
target (its own row in paraply.progress). It exits 0 once every transaction
from the start point up to the stop point is applied (SIGINT or SIGTERM stop
it cleanly before that, with status 1). A second run with the same arguments,
after SIGKILL too, resumes where the first stopped and applies nothing twice.

Point-in-time recovery: restore the backup, then apply the binlogs from the
backup's position (--start-gtid: the gtid_slave_pos that mariadb-dump --gtid
writes, or mariabackup's xtrabackup_binlog_info) up to just before the
accident: --stop-gtid (the accident's GTID), --stop-datetime (local time,
'YYYY-MM-DD HH:MM:SS', or RFC 3339) or --stop-position (FILE:OFFSET, as SHOW
BINLOG EVENTS shows them). apply stops before the first transaction at or past
the point; the accident is not applied.

The target's password comes from PARAPLY_TARGET_PASSWORD or
--target-password-file. Keys come from the target's tables, or, on a target
where apply has not started yet, from --schema / --schema-file (the tables as
they are at the start point).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipe.resolve(&cfg); err != nil {
				return err
			}
			in := replicate.Files{FilesConfig: source.FilesConfig{Paths: args}}
			var err error
			if in.Start, err = parseFilePos("--start-position", startPos); err != nil {
				return err
			}
			if in.Stop, err = parseStop(stopGTID, stopTime, stopAt); err != nil {
				return err
			}
			if schemaDSN != "" || schemaFile != "" {
				in.Schema = func(ctx context.Context) (*schema.Catalog, error) {
					return loadSchema(ctx, schemaDSN, schemaFile, schemaPwFile)
				}
			}
			// The spool is this run's alone: it is made empty and removed
			// at exit (a SIGKILL leaves it behind, in --spool-dir).
			if cfg.RelayDir, err = os.MkdirTemp(spoolDir, "paraply-apply-"); err != nil {
				return fmt.Errorf("--spool-dir: %w", err)
			}
			defer os.RemoveAll(cfg.RelayDir)
			// SIGINT and SIGTERM stop the pipeline cleanly, but apply is not
			// done then: a script that goes on after it must not.
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			progress := &applyProgress{w: os.Stderr, every: progressEvery}
			err = pipe.run(ctx, cfg, func(c replicate.Config) *replicate.Replica { return replicate.NewApply(c, in) }, progress.follow)
			switch {
			case err == nil && ctx.Err() != nil:
				return errors.New("stopped before the end: run it again with the same arguments to resume")
			case err == nil:
				progress.summary()
			}
			return err
		},
	}
	f := cmd.Flags()
	pipe.add(f, &cfg, "") // beside a running replicate, which has 127.0.0.1:9104
	f.StringVar(&cfg.StartGTID, "start-gtid", "", "GTID position the target holds already (the backup's): the files' transactions it includes are skipped (used when apply has no checkpoint on the target yet)")
	f.StringVar(&startPos, "start-position", "", "FILE:OFFSET: skip the files before FILE and the transactions of FILE that begin before OFFSET")
	f.StringVar(&stopGTID, "stop-gtid", "", "stop before the first transaction at or past this GTID (same domain, or same source UUID, and a sequence number as high); a comma-separated list stops at the first of them")
	f.StringVar(&stopTime, "stop-datetime", "", "stop before the first transaction with an event stamped at or after this time (local time 'YYYY-MM-DD HH:MM:SS', or RFC 3339)")
	f.StringVar(&stopAt, "stop-position", "", "FILE:OFFSET: stop before the first transaction that does not end at or before OFFSET in FILE")
	f.StringVar(&schemaDSN, "schema", "", "read keys from a live server instead of the target: mysql://USER@HOST:PORT (password from PARAPLY_SCHEMA_PASSWORD or --schema-password-file)")
	f.StringVar(&schemaPwFile, "schema-password-file", "", "file holding the password for --schema")
	f.StringVar(&schemaFile, "schema-file", "", "read keys from CREATE TABLE statements (mariadb-dump --no-data output) instead of the target")
	f.StringVar(&spoolDir, "spool-dir", "", "where the bounded spool between the files and the workers goes (default $TMPDIR)")
	f.Int64Var(&cfg.RelayMaxBytes, "spool-max-bytes", cfg.RelayMaxBytes, "disk the spool may use; reading pauses when it is full")
	f.DurationVar(&progressEvery, "progress", 5*time.Second, "print a progress line on stderr this often (0: only at the end)")
	cmd.MarkFlagsMutuallyExclusive("start-gtid", "start-position")
	cmd.MarkFlagsMutuallyExclusive("stop-gtid", "stop-datetime", "stop-position")
	cmd.MarkFlagsMutuallyExclusive("schema", "schema-file")
	return cmd
}

// parseFilePos parses FILE:OFFSET ("" is no position).
func parseFilePos(flag, s string) (binlog.Pos, error) {
	if s == "" {
		return binlog.Pos{}, nil
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return binlog.Pos{}, fmt.Errorf("%s %q: want FILE:OFFSET", flag, s)
	}
	off, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || off < 0 {
		return binlog.Pos{}, fmt.Errorf("%s %q: the offset must be a byte offset", flag, s)
	}
	return binlog.Pos{File: s[:i], Offset: off}, nil
}

// stopTimeLayouts are the forms --stop-datetime takes: mariadb-binlog's,
// in local time as it reads it, and RFC 3339.
var stopTimeLayouts = []string{time.DateTime, "2006-01-02T15:04:05", time.RFC3339}

// parseStop parses the stop flags.
func parseStop(gtids, at, pos string) (source.Stop, error) {
	var s source.Stop
	for _, g := range strings.Split(gtids, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		gt, err := binlog.ParseGTID(g)
		if err != nil {
			return s, fmt.Errorf("--stop-gtid: %w", err)
		}
		s.GTIDs = append(s.GTIDs, gt)
	}
	if at != "" {
		var err error
		for _, layout := range stopTimeLayouts {
			if s.Time, err = time.ParseInLocation(layout, at, time.Local); err == nil {
				break
			}
		}
		if err != nil {
			return s, fmt.Errorf("--stop-datetime %q: want 'YYYY-MM-DD HH:MM:SS' (local time) or RFC 3339", at)
		}
	}
	var err error
	s.Pos, err = parseFilePos("--stop-position", pos)
	return s, err
}
