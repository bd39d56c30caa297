package main

import (
	"log/slog"
	"strings"
	"testing"

	pingcaperrors "github.com/pingcap/errors"
	"github.com/spf13/pflag"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/replicate"
)

// TestEnumFlagsParsedOnce: --apply and --dependency are read into the
// pipeline's own types as they are set, the defaults show as the flags
// spell them, and a wrong value fails the command line, naming the flag.
func TestEnumFlagsParsedOnce(t *testing.T) {
	parse := func(args ...string) (replicate.Config, error) {
		cfg := replicate.Default()
		var p pipelineFlags
		f := pflag.NewFlagSet("replicate", pflag.ContinueOnError)
		f.SetOutput(new(strings.Builder))
		p.add(f, &cfg, "")
		return cfg, f.Parse(args)
	}
	cfg, err := parse()
	if err != nil || cfg.Apply != applier.AutoPath || cfg.Mode != deptrack.WritesetMode {
		t.Fatalf("defaults: apply %v, dependency %v, %v; want auto, writeset", cfg.Apply, cfg.Mode, err)
	}
	cfg, err = parse("--apply", "binlog", "--dependency", "commit-order")
	if err != nil || cfg.Apply != applier.BinlogPath || cfg.Mode != deptrack.CommitOrder {
		t.Fatalf("--apply binlog --dependency commit-order: %v, %v, %v", cfg.Apply, cfg.Mode, err)
	}
	for _, bad := range [][]string{{"--apply", "rows"}, {"--dependency", "rows"}} {
		if _, err := parse(bad...); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want an error naming %s", bad, err, bad[0])
		}
	}
}

// TestLogsErrorsWithoutStack: an error in a log line is its message. The
// text handler formats values with %+v, which made go-mysql's errors
// (pingcap/errors) print a Go stack trace inside err=.
func TestLogsErrorsWithoutStack(t *testing.T) {
	var b strings.Builder
	newLogger(&b, slog.LevelInfo).Warn("source stream broke", "err", pingcaperrors.New("connection refused"))
	if out := b.String(); !strings.Contains(out, `err="connection refused"`) || strings.Contains(out, ".go:") {
		t.Errorf("the log line is %q, want the error's message alone", out)
	}
}
