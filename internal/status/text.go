package status

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/replicate"
)

// WriteText prints the report the way `paraply status` shows it. Every
// figure is the report's: the page shows the same ones, formatted the
// same way (app.js's fmtRate, fmtPct and fmtLag follow rate, pct and
// lagText here).
func WriteText(w io.Writer, r Report) error {
	win := "over the last " + windowText(r.Interval)
	var b strings.Builder
	writeSummary(&b, r, win)
	writeProgress(&b, r, win)
	writeCoordinator(&b, r)
	writeWorkers(&b, r, win)
	writeHotTables(&b, r)
	writeDiagnosis(&b, r, win)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSummary prints what replicates where and how, which snapshot the
// report is of, and the delay and filters in effect. win says what the
// rates cover.
func writeSummary(b *strings.Builder, r Report, win string) {
	st, iv := r.Status, r.Interval
	stream := ""
	if st.Stream != "" && st.Stream != checkpoint.DefaultStream {
		stream = " (stream " + st.Stream + ")"
	}
	fmt.Fprintf(b, "paraply%s: %s -> %s, %s dependencies, %s, commit order preserved: %v\n",
		stream, st.Source, st.Target, st.Dependency, workersText(st), st.PreserveOrder)
	fmt.Fprintf(b, "snapshot %d, taken %s; rates and shares %s (%s to %s)\n", r.Snapshot.ID,
		r.Snapshot.Time.UTC().Format("2006-01-02 15:04:05.000 MST"), win, iv.From.UTC().Format("15:04:05.0"), iv.To.UTC().Format("15:04:05.0"))
	if st.Delay > 0 {
		held := ""
		if u := st.Dependencies.DelayedUntil; !u.IsZero() {
			held = ", the next transaction is held until " + u.UTC().Format(time.DateTime+" MST")
		}
		fmt.Fprintf(b, "delay: transactions are applied %s after the source committed them%s\n", st.Delay, held)
	}
	if len(st.Shared) > 0 {
		fmt.Fprintf(b, "tables another stream writes too (the sources' changes mix there): %s\n", strings.Join(st.Shared, "; "))
	}
	if f := st.Filters; f != nil {
		fmt.Fprintf(b, "filters: %s; left out so far: %s (recorded as applied), %s, %s\n",
			f.Rules, Plural(f.Transactions, "transaction"), Plural(f.Rows, "row change"), Plural(f.Statements, "statement"))
	}
}

// writeProgress prints the source's and the target's connections, how far
// receiving and applying got, the lag and the rates over win.
func writeProgress(b *strings.Builder, r Report, win string) {
	st, iv := r.Status, r.Interval
	fmt.Fprintf(b, "source %s; received up to %s\n", sourceText(st, iv), r.Progress.Received)
	fmt.Fprintf(b, "target %s\n", targetText(st))
	fmt.Fprintf(b, "target has everything up to %s (checkpoint %s)\n", r.Progress.Applied, r.Progress.Checkpoint)
	fmt.Fprintf(b, "%s (%s), at most %s %s; %s received and not applied, %d queued, relay log %s\n",
		lagLine(iv), lagHow(st), within(iv.LagMax), win, Plural(st.Backlog, "transaction"), st.Scheduler.Pending, bytesText(st.Relay.Bytes))
	fmt.Fprintf(b, "applied %s/s, received %s/s; the source wrote %s/s %s%s\n\n",
		rate(iv.AppliedRate), rate(iv.ReceivedRate), rate(iv.SourceRate), win, sourceAt(st))
}

// sourceText says how the source stands: unreachable since when and why,
// or connected, and then whether it is idle (it wrote nothing over the
// interval): two different states.
func sourceText(st replicate.Status, iv Interval) string {
	rcv := st.Receiver
	if !rcv.Connected {
		return "unreachable " + sourceDownSince(st) + errorText(rcv.LastError)
	}
	conn := "connected"
	if !rcv.Since.IsZero() {
		conn += " since " + sinceText(st.Now, rcv.Since)
	}
	if iv.Seconds > 0 && iv.SourceRate == 0 {
		conn += ", idle: it wrote nothing over the last " + windowText(iv)
	}
	return conn
}

// targetText says whether the target answers, since when, and why not.
func targetText(st replicate.Status) string {
	c := st.TargetConnection
	switch {
	case !c.Known():
		return "not asked yet (paraply is starting)"
	case c.Connected:
		return "connected since " + sinceText(st.Now, c.Since)
	}
	return "unreachable since " + sinceText(st.Now, c.Since) + errorText(c.LastError)
}

// errorText is a connection's last error, if any.
func errorText(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// sourceAt says where the source is, as last read: what its write rate
// is measured on.
func sourceAt(st replicate.Status) string {
	if st.SourcePosition == "" || st.SourcePositionTime.IsZero() {
		return ""
	}
	return fmt.Sprintf(" (its position %s, read %s ago)", st.SourcePosition, since(st.Now, st.SourcePositionTime))
}

// writeCoordinator prints the coordinator's waits by reason and how the
// workers spent their time over the interval.
func writeCoordinator(b *strings.Builder, r Report) {
	iv := r.Interval
	fmt.Fprintf(b, "coordinator statistics, last %s:\n", windowText(iv))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  events assigned\t%d\t\t(%.1f per target transaction)\n", iv.Assigned, iv.AvgBatch)
	for _, k := range []struct{ key, label, of string }{
		{"dependency", "waited at dependencies (clock conflicts)", "of the time"},
		{"barrier", "waited at barriers (DDL, keyless tables)", "of the time"},
		{"workers_busy", "waited when workers occupied (work ready)", "of the time"},
		{"queue_full", "waited due to a full queue (window)", "of the time"},
		{"commit_order", "workers waited for commit order", "of the workers' time"},
		{"source", "idle: waited for the source", "of the time"},
	} {
		wt := iv.Waits[k.key]
		fmt.Fprintf(tw, "  %s\t%d\t%.2f s\t%s %s\n", k.label, wt.Count, wt.Seconds, pct(wt.Share), k.of)
	}
	tw.Flush()
	fmt.Fprintf(b, "worker time, last %s, of %s workers allowed (%.1f worker-seconds): exec %s  commit-turn wait %s  commit %s (%.1f ms each)%s  idle %s; busy %s; retries %d\n",
		windowText(iv), workersNum(iv.WorkersAllowed), iv.CapacitySeconds, pct(iv.ExecShare), pct(iv.TurnShare), pct(iv.CommitShare),
		iv.AvgCommitMs, targetWaitText(r.Status, iv), pct(iv.IdleShare), pct(iv.BusyShare), iv.Retries)
}

// targetWaitText is the workers' time waiting for a target that did not
// answer, when it did not in the interval or does not now.
func targetWaitText(st replicate.Status, iv Interval) string {
	c := st.TargetConnection
	if iv.TargetDownSeconds == 0 && (c.Connected || !c.Known()) {
		return ""
	}
	return "  waiting for the target (unreachable) " + pct(iv.TargetWaitShare)
}

// writeWorkers prints the table of the workers allowed now, the pool's
// others, and the large transactions being applied.
func writeWorkers(b *strings.Builder, r Report, win string) {
	fmt.Fprintf(b, "\nworkers allowed now: %s (their time %s; counts since start):\n", poolText(r.Pool), win)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  worker\ttransactions\tcommits\texec\tturn\tcommit\ttarget wait\tidle\tretries\t\n")
	for _, wk := range r.Workers {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t\n", wk.Worker, wk.Transactions, wk.Works,
			pct(wk.ExecShare), pct(wk.TurnShare), pct(wk.CommitShare), pct(wk.TargetWaitShare), pct(wk.IdleShare), wk.Retries)
	}
	tw.Flush()
	if line := othersText(r.Pool, r.Status.AutoWorkers); line != "" {
		fmt.Fprintf(b, "  %s\n", line)
	}
	for _, wk := range r.Workers {
		if l := wk.Large; l != nil {
			// Why the lag grows while one transaction takes minutes.
			fmt.Fprintf(b, "  worker %d applies a large transaction, %s: %d of %d pieces, %.0f of %.0f MB%s, path %s\n",
				wk.Worker, l.GTID, l.PiecesDone, l.Pieces, float64(l.BytesDone)/1e6, float64(l.Bytes)/1e6, rowsDone(l.RowsDone, l.Rows), l.Path)
		}
	}
}

// writeHotTables prints the tables whose transactions were admitted while
// an earlier writer of their rows ran, if any.
func writeHotTables(b *strings.Builder, r Report) {
	if len(r.HotTables) == 0 {
		return
	}
	b.WriteString("\nhot tables (transactions admitted while an earlier writer of their rows was running, since start):\n")
	for _, h := range r.HotTables {
		fmt.Fprintf(b, "  %8d  %s\n", h.Count, h.Name)
	}
}

// writeDiagnosis prints the findings over win, or why there are none yet.
func writeDiagnosis(b *strings.Builder, r Report, win string) {
	fmt.Fprintf(b, "\ndiagnosis (%s):\n", win)
	for _, f := range r.Diagnosis {
		fmt.Fprintf(b, "  [%s] %s.\n         %s\n", f.Severity, f.Title, f.Advice)
	}
	if len(r.Diagnosis) == 0 {
		b.WriteString("  (no interval yet: the statistics need two samples, a second apart)\n")
	}
}

// windowText says what an interval covers: the window asked for, or,
// while the server has not sampled that long, what it has.
func windowText(iv Interval) string {
	if iv.Seconds > 0 && iv.Seconds < iv.WindowSeconds-0.5 || iv.WindowSeconds == 0 {
		return span(iv.Seconds) + " (all there is so far)"
	}
	return span(iv.WindowSeconds)
}

// lagLine says the lag at the snapshot and, with --delay, how much of it
// the delay is.
func lagLine(iv Interval) string {
	if iv.DelaySeconds <= 0 {
		return "lag " + lagText(iv.LagEnd)
	}
	d := lagText(iv.DelaySeconds)
	switch {
	case iv.LagEnd == 0:
		return "lag 0 ms: nothing received waits for the " + d + " --delay"
	case iv.LagBeyondDelay == 0:
		return "lag " + lagText(iv.LagEnd) + ", all of it within the " + d + " --delay (beyond it 0 ms)"
	}
	return fmt.Sprintf("lag %s, of which %s the --delay and %s beyond it", lagText(iv.LagEnd), d, lagText(iv.LagBeyondDelay))
}

// poolText says how many workers the limit allows of the pool.
func poolText(p Pool) string {
	if p.Others == 0 {
		return fmt.Sprintf("all %d of the pool", p.Size)
	}
	return fmt.Sprintf("%d of the pool's %d", p.Allowed, p.Size)
}

// othersText is the line under the workers table about the pool's
// sessions the limit does not allow now.
func othersText(p Pool, auto bool) string {
	if p.Others == 0 {
		return ""
	}
	why := "not allowed now"
	if auto {
		why = "not allowed now by --workers auto"
	}
	used := "none of them has applied anything"
	switch {
	case p.OthersUsed == 1:
		used = fmt.Sprintf("1 of them applied %s earlier, under a higher limit", Plural(p.OthersTransactions, "transaction"))
	case p.OthersUsed > 1:
		used = fmt.Sprintf("%d of them applied %s earlier, under a higher limit", p.OthersUsed, Plural(p.OthersTransactions, "transaction"))
	}
	return fmt.Sprintf("%d more in the pool, %s (%s)", p.Others, why, used)
}

// workersNum prints a mean number of workers: whole when it is.
func workersNum(n float64) string {
	if math.Abs(n-math.Round(n)) < 0.05 {
		return fmt.Sprintf("%.0f", n)
	}
	return fmt.Sprintf("%.1f", n)
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
	how := "dated by " + orUnknown(st.LagMethod)
	if st.ClockOffset != nil {
		how += fmt.Sprintf(", source clock offset %+.1f ms", float64(st.ClockOffset.Microseconds())/1000)
	}
	if st.HeartbeatError != "" {
		how += "; heartbeat not in use: " + st.HeartbeatError
	}
	return how
}

func orUnknown(s string) string {
	if s == "" {
		return "(not known yet)"
	}
	return s
}

// pct prints a share as a whole percentage.
func pct(x float64) string {
	return fmt.Sprintf("%.0f%%", 100*x)
}

// lagText prints a lag: whole milliseconds below a second, tenths of a
// second below a minute, then minutes and hours.
func lagText(s float64) string {
	switch {
	case s < 1:
		return fmt.Sprintf("%.0f ms", 1000*max(0, s))
	case s < 60:
		return fmt.Sprintf("%.1f s", s)
	}
	return span(s)
}

// since prints how long before now t was.
func since(now, t time.Time) string {
	return span(now.Sub(t).Seconds())
}

// span prints seconds as a person reads a time span: tenths of a second
// below 10 s, then seconds, minutes, hours, days.
func span(s float64) string {
	s = max(0, s)
	switch {
	case s < 10:
		return fmt.Sprintf("%.1f s", s)
	case s < 60:
		return fmt.Sprintf("%.0f s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %02d s", int(s)/60, int(s)%60)
	case s < 86400:
		return fmt.Sprintf("%d h %02d min", int(s)/3600, int(s)%3600/60)
	}
	return fmt.Sprintf("%d d %d h", int(s)/86400, int(s)%86400/3600)
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
