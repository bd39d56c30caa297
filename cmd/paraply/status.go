package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/status"
)

func statusCmd() *cobra.Command {
	var (
		addr     string
		target   targetFlags
		watch    bool
		asJSON   bool
		interval time.Duration
		snapshot int64
	)
	cmd := &cobra.Command{
		Use:   "status [--http 127.0.0.1:PORT] [--watch]",
		Short: "Show a running replicate's lag, worker progress, coordinator statistics and a diagnosis",
		Long: `status asks a running 'paraply replicate --http ADDR' for its state: lag,
positions, the coordinator statistics of the last interval (transactions
assigned, waits on dependencies, with all workers busy, on a full window and
on commit order, and idle time waiting for the source), per-worker progress,
the hottest tables, and a diagnosis in words: that it keeps up, or why it
lags and what to change. The lag line says how the lag is dated
(receive-time, or heartbeat with replicate --heartbeat-table), and with
--delay how much of the lag the delay is.

Every figure is of one snapshot of replicate's state, numbered, over the
window --interval (10 s) that ends at it: the status page, /status.json
and /metrics (paraply_status_snapshot) of the same snapshot show the same
figures. --snapshot N prints snapshot N again (kept 10 minutes).

With --target, status lists instead every stream on that target (one per
source, see replicate --name): its checkpoint's position, when it was
saved, and whether a paraply process runs it. The target's password and
TLS settings come from the flags replicate has for them, or from a stream's
--config (whose target and name status does not read: --target says
which server, and every stream on it is listed).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if target.url != "" {
				return listStreams(cmd, &target)
			}
			client := &http.Client{Timeout: 5 * time.Second}
			out := cmd.OutOrStdout()
			for n := 0; ; n++ {
				rep, raw, err := status.Fetch(client, addr, interval, snapshot)
				if err != nil {
					return err
				}
				if watch {
					fmt.Fprint(out, watchSeparator(out, n))
				}
				if asJSON {
					out.Write(raw)
				} else if err := status.WriteText(out, rep); err != nil {
					return err
				}
				if !watch {
					return nil
				}
				time.Sleep(time.Second)
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "http", "127.0.0.1:9104", "address of the running replicate's --http endpoint")
	f.BoolVar(&watch, "watch", false, "refresh every second")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.DurationVar(&interval, "interval", status.DefaultWindow, "window of the rates, shares and coordinator statistics")
	target.add(f)
	// A stream's --config names its target: that must not turn status
	// from asking the stream's process into listing the target's streams.
	for _, name := range []string{"target", "name"} {
		_ = f.SetAnnotation(name, config.NotFromFile, []string{"true"})
	}
	f.Int64Var(&snapshot, "snapshot", 0, "print this snapshot (its number is in the output, the page and paraply_status_snapshot) instead of the newest")
	return cmd
}

// listStreams prints every stream the target holds the bookkeeping of.
func listStreams(cmd *cobra.Command, t *targetFlags) error {
	var cfg replicate.Config
	if err := t.resolve(&cfg); err != nil {
		return err
	}
	ep := cfg.Target.WithTLS(cfg.TargetTLS)
	db, err := ep.Open(nil)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.PingContext(cmd.Context()); err != nil {
		return fmt.Errorf("connect to %s: %w", ep, ep.ExplainDenied("target", err))
	}
	streams, err := checkpoint.Streams(cmd.Context(), db)
	if err != nil {
		return fmt.Errorf("target %s: %w", cfg.Target, err)
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "STREAM\tSTATE\tCOMMAND\tLAG AT SAVE\tCHECKPOINT SAVED\tPOSITION")
	for _, s := range streams {
		state, saved, origin, lag := "stopped", "never", "-", "-"
		if s.LagKnown {
			lag = s.Lag.Round(time.Millisecond).String()
		}
		if s.Running {
			state = "running"
		}
		if s.Origin != 0 {
			saved = s.Saved.UTC().Format(time.DateTime) + " UTC (" + time.Since(s.Saved).Round(time.Second).String() + " ago)"
			origin = strings.TrimPrefix(s.Origin.String(), "paraply ")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, state, origin, lag, saved, s.Position)
	}
	if len(streams) == 0 {
		fmt.Fprintf(w, "(no paraply stream on %s)\n", cfg.Target)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	writers, err := checkpoint.Writers(cmd.Context(), db)
	if err != nil {
		return fmt.Errorf("target %s: %w", cfg.Target, err)
	}
	if shared := checkpoint.Shared(writers); len(shared) > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "\nTables more than one stream writes (their sources' changes mix there):\n  %s\n", strings.Join(shared, "\n  "))
	}
	return nil
}

// watchSeparator is what --watch writes before report n (from 0): on a
// terminal the codes that clear it, so that the report stays in place;
// into a pipe or a file, where those codes are noise, an empty line
// between reports.
func watchSeparator(w io.Writer, n int) string {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return "\033[H\033[2J"
	}
	if n == 0 {
		return ""
	}
	return "\n"
}
