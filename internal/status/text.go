package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paraply/paraply/internal/replicate"
)

// WriteText prints the report the way `paraply status` shows it.
func WriteText(w io.Writer, r Report) error {
	st, iv := r.Status, r.Interval
	var b strings.Builder
	fmt.Fprintf(&b, "paraply: %s -> %s, %s dependencies, %s, commit order preserved: %v\n",
		st.Source, st.Target, st.Dependency, workersText(st), st.PreserveOrder)
	if st.Delay > 0 {
		held := ""
		if u := st.Dependencies.DelayedUntil; !u.IsZero() {
			held = ", the next transaction is held until " + u.UTC().Format(time.DateTime+" MST")
		}
		fmt.Fprintf(&b, "delay: transactions are applied %s after the source committed them%s\n", st.Delay, held)
	}
	if f := st.Filters; f != nil {
		fmt.Fprintf(&b, "filters: %s; left out so far: %d transactions (recorded as applied), %d row changes, %d statements\n",
			f.Rules, f.Transactions, f.Rows, f.Statements)
	}
	conn := "connected"
	if !st.Receiver.Connected {
		conn = "DISCONNECTED"
		if st.Receiver.LastError != "" {
			conn += " (" + st.Receiver.LastError + ")"
		}
	}
	fmt.Fprintf(&b, "source %s, received up to %s (%s:%d)\n", conn, orDash(st.Receiver.Position), orDash(st.Receiver.SourceFile), st.Receiver.SourceOffset)
	fmt.Fprintf(&b, "target has everything up to %s (checkpoint %s ago)\n", orDash(st.Checkpoint.Position), age(st.Now, st.CheckpointSaved))
	fmt.Fprintf(&b, "lag %s (%s), %d transactions received and not applied, %d queued, relay log %.1f MB\n\n",
		duration(st.Lag.Seconds()), lagHow(st), st.Backlog, st.Scheduler.Pending, float64(st.Relay.Bytes)/1e6)

	fmt.Fprintf(&b, "coordinator statistics, last %.0f s:\n", iv.Seconds)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  events assigned\t%d\t(%.0f/s applied, %.0f/s received, %.1f per target transaction)\n", iv.Assigned, iv.AppliedRate, iv.ReceivedRate, iv.AvgBatch)
	for _, k := range []struct{ key, label string }{
		{"dependency", "waited at dependencies (clock conflicts)"},
		{"barrier", "waited at barriers (DDL, keyless tables)"},
		{"workers_busy", "waited when workers occupied"},
		{"queue_full", "waited due to a full queue (window)"},
		{"commit_order", "workers waited for commit order"},
		{"source", "idle: waited for the source"},
	} {
		wt := iv.Waits[k.key]
		fmt.Fprintf(tw, "  %s\t%d\t%.2f s\n", k.label, wt.Count, wt.Seconds)
	}
	fmt.Fprintf(tw, "  worker time\texec %.0f%%\tturn %.0f%%  commit %.0f%% (%.1f ms each)  idle %.0f%%  retries %d\n",
		100*iv.ExecShare, 100*iv.TurnShare, 100*iv.CommitShare, iv.AvgCommitMs, 100*iv.IdleShare, iv.Retries)
	tw.Flush()
	b.WriteString("\nworkers:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  worker\ttransactions\tcommits\texec s\tturn s\tcommit s\tretries\t\n")
	for _, wk := range r.Workers {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%d\t\n", wk.Worker, wk.Transactions, wk.Works, wk.ExecSeconds, wk.TurnSeconds, wk.CommitSeconds, wk.Retries)
	}
	tw.Flush()
	for _, wk := range r.Workers {
		if l := wk.Large; l != nil {
			// Why the lag grows while one transaction takes minutes.
			fmt.Fprintf(&b, "  worker %d applies a large transaction, %s: %d of %d pieces, %.0f of %.0f MB%s, path %s\n",
				wk.Worker, l.GTID, l.PiecesDone, l.Pieces, float64(l.BytesDone)/1e6, float64(l.Bytes)/1e6, rowsDone(l.RowsDone, l.Rows), l.Path)
		}
	}
	if len(r.HotTables) > 0 {
		b.WriteString("\nhot tables (transactions admitted while an earlier writer of their rows was running, since start):\n")
		for _, h := range r.HotTables {
			fmt.Fprintf(&b, "  %8d  %s\n", h.Count, h.Name)
		}
	}
	b.WriteString("\ndiagnosis:\n")
	for _, f := range r.Diagnosis {
		fmt.Fprintf(&b, "  [%s] %s.\n         %s\n", f.Severity, f.Title, f.Advice)
	}
	if len(r.Diagnosis) == 0 {
		b.WriteString("  (no interval yet: the statistics need two samples, a second apart)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rowsDone says how many rows of a large transaction are applied, when
// that is counted.
func rowsDone(done, total int64) string {
	if done == 0 {
		return fmt.Sprintf(", %d rows", total)
	}
	return fmt.Sprintf(", %d of %d rows", done, total)
}

// lagHow says how the lag was dated.
func lagHow(st replicate.Status) string {
	how := "dated by " + orDash(st.LagMethod)
	if st.ClockOffset != nil {
		how += fmt.Sprintf(", source clock offset %+.1f ms", float64(st.ClockOffset.Microseconds())/1000)
	}
	if st.HeartbeatError != "" {
		how += "; heartbeat not in use: " + st.HeartbeatError
	}
	return how
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return now.Sub(t).Round(100 * time.Millisecond).String()
}

// workersText says how many workers apply: the fixed count, or what
// --workers auto chose and why.
func workersText(st replicate.Status) string {
	if !st.AutoWorkers {
		return fmt.Sprintf("%d workers", st.Workers)
	}
	why := ""
	if r := st.Scheduler.LimitReason; r != "" {
		why = " (" + r + ")"
	}
	return fmt.Sprintf("workers auto: %d of %d at once%s", st.Scheduler.Limit, st.Workers, why)
}
