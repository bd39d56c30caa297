package status

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/replicate"
)

// Finding is one line of the diagnosis.
type Finding struct {
	// Severity is "ok", "info" or "warn".
	Severity string `json:"severity"`
	// Cause names the rule, for machines: target_unreachable,
	// source_disconnected, source_idle, keeping_up, delay, workers_busy,
	// dependency_mode, hot_rows, commit_order, slow_commits, relay_full,
	// redo_log_full, barriers, statements, lagging.
	Cause  string `json:"cause"`
	Title  string `json:"title"`
	Advice string `json:"advice"`
}

// behindSeconds is how far behind a replica must be (lag, or backlog at
// the rate it applies) before the diagnosis looks for a cause: below it,
// there is no lag worth changing anything for, and waits of any kind are
// how a replica that keeps up spends its time.
const behindSeconds = 1.0

// Diagnose turns a status and the last interval into findings, most
// important first. It is a pure function of its inputs: every rule reads
// only the snapshot st, the interval iv and the hot tables.
//
// A target that does not answer comes first, and nothing else is said of
// the lag then: nothing can be applied, the workers wait for it (the
// coordinator's "workers busy" are workers retrying), and the source being
// idle is no "nothing to do".
//
// A replica is behind when its lag, or its backlog at the rate it applies,
// is a second or more. Only then do the waits name a cause (workers
// occupied, dependencies, commit order, slow commits); a replica that is
// not behind says that it keeps up, or that its source is idle.
func Diagnose(st replicate.Status, iv Interval, hot []Count) []Finding {
	var out []Finding
	add := func(sev, cause, title, advice string) {
		out = append(out, Finding{sev, cause, title, advice})
	}
	tgt := st.TargetConnection
	targetDown := tgt.Known() && !tgt.Connected
	if targetDown {
		add("warn", "target_unreachable", "Target unreachable since "+sinceText(st.Now, tgt.Since)+": nothing can be applied",
			lastError(tgt.LastError)+"paraply retries on its own: the workers, the checkpoint and the lock go on as soon as the target answers, and --workers auto holds its limit meanwhile. Check that the target is up and reachable from this host.")
	}
	connected := st.Receiver.Connected
	if !connected {
		add("warn", "source_disconnected", "Source unreachable "+sourceDownSince(st)+": the replication connection is down",
			lastError(st.Receiver.LastError)+"paraply reconnects on its own with backoff; check that the source is up and reachable.")
	}
	secs := iv.Seconds
	if secs <= 0 {
		return out
	}
	// A full relay log is behind whatever the lag says: what the source
	// has and paraply has not received is neither in the backlog nor
	// dated yet.
	relayFull := iv.RelayBlocked > 0.3*secs
	behind := iv.LagEnd >= behindSeconds || iv.AppliedRate > 0 && float64(st.Backlog)/iv.AppliedRate >= behindSeconds || relayFull
	delay, afterDelay := st.Delay.Seconds(), ""
	if delay > 0 {
		afterDelay = " after the delay"
		// Behind by design: only lag beyond the delay counts, and the
		// backlog is what the delay holds back.
		behind = iv.LagEnd-delay >= behindSeconds || relayFull
		add("info", "delay", fmt.Sprintf("Applying transactions %s after the source committed them, on purpose (--delay)", st.Delay),
			delayAdvice(iv.LagEnd, delay))
	}
	switch {
	case targetDown:
		// What the waits and the lag say now is the outage.
	case behind:
		out = append(out, lagCauses(st, iv, hot)...)
	case connected && iv.SourceRate > 0:
		add("ok", "keeping_up", fmt.Sprintf("Keeping up over the last %s: the source writes %s/s, paraply applies them within %s%s; workers %s idle",
			windowText(iv), rate(iv.SourceRate), within(max(0, max(iv.LagMax, iv.LagEnd)-delay)), afterDelay, pct(iv.IdleShare)),
			"Nothing to change.")
	case connected:
		add("ok", "source_idle", fmt.Sprintf("The source is idle (it wrote nothing over the last %s) and the target has everything", windowText(iv)), "Nothing to do.")
	}
	if relayFull {
		add("warn", "relay_full", "The relay log is full: receiving waits for applying",
			"Applying is the bottleneck (see above); --relay-max-bytes only buys time.")
	}
	if f, ok := barriers(st, iv); ok {
		if behind && iv.Waits["barrier"].Seconds >= 0.4*iv.Seconds {
			// Not news of the past: waiting for them is why it is behind.
			f.Severity = "warn"
		}
		out = append(out, f)
	}
	if f, ok := statements(iv, behind); ok {
		out = append(out, f)
	}
	if behind && !hasWarning(out) {
		out = append(out, lagging(iv))
	}
	return out
}

// delayAdvice says how much of the lag the delay is: the lag is how far
// the target is behind the source, the delay the part of it asked for,
// and only what is beyond it is a problem.
func delayAdvice(lag, delay float64) string {
	d := lagText(delay)
	switch {
	case lag == 0:
		return "The lag is 0 ms: the target has everything received, and nothing waits for the delay now. Lag up to " + d + " is the delay; only lag beyond it is a problem."
	case lag <= delay:
		return fmt.Sprintf("The lag, %s, is all within the %s delay (beyond it: 0 ms): the oldest transaction not applied is held until %s after its commit. Only lag beyond the delay is a problem.", lagText(lag), d, d)
	}
	return fmt.Sprintf("The lag, %s, is %s of delay and %s beyond it; only the part beyond the delay is a problem.", lagText(lag), d, lagText(lag-delay))
}

// redoMinSamples is how many reads of the target's redo log (one a
// second) redo_log_full needs; redoFullShare the share of them that must
// find it full (replicate.RedoLog): a log that fills now and then is
// what a checkpoint is for, one full most of the time holds commits.
const (
	redoMinSamples = 5
	redoFullShare  = 0.5
)

// lagCauses are the findings that explain why a replica is behind, from the
// coordinator's waits and the workers' time.
func lagCauses(st replicate.Status, iv Interval, hot []Count) []Finding {
	var out []Finding
	add := func(cause, title, advice string) {
		out = append(out, Finding{"warn", cause, title, advice})
	}
	if r := st.TargetRedo; r.Known && r.Samples >= redoMinSamples && r.FullShare >= redoFullShare {
		// First: it makes every statement slow, which the rules below
		// would read as busy workers.
		add("redo_log_full", fmt.Sprintf("The target's redo log was full in %.0f%% of the last %d s: InnoDB writes pages out to make room and holds commits back meanwhile", 100*r.FullShare, r.Samples),
			fmt.Sprintf("Raise innodb_log_file_size on the target (now %s), to %s or more, so that it holds minutes of writes: MariaDB 10.11 and later resize it online (SET GLOBAL innodb_log_file_size = ..., and in the server's configuration so that it stays), earlier versions at a restart.",
				bytesText(r.FileBytes), bytesText(4*r.FileBytes)))
	}
	secs, w := iv.Seconds, iv.Waits
	switch {
	case w["workers_busy"].Seconds >= 0.4*secs && iv.ExecShare+iv.CommitShare >= 0.6:
		// Workers occupied, and occupied working (not waiting for their
		// turn to commit, which more workers would not shorten).
		if st.AutoWorkers && st.Scheduler.Limit < st.Workers {
			add("workers_busy", fmt.Sprintf("All %d workers that --workers auto lets apply at once are busy and transactions are ready for more", st.Scheduler.Limit),
				"More at once applied no faster on this target ("+st.Scheduler.LimitReason+"): the target's CPU, I/O or locks are the limit, not paraply's workers.")
			break
		}
		add("workers_busy", fmt.Sprintf("All %d workers are busy and transactions are ready for more", st.Workers),
			fmt.Sprintf("Add workers (--workers %d), as long as the target has CPU and I/O to spare.", 2*st.Workers))
	case w["dependency"].Seconds >= 0.4*secs && !strings.HasPrefix(st.Dependency, "writeset"):
		add("dependency_mode", fmt.Sprintf("Workers are idle while transactions wait for each other under --dependency %s", st.Dependency),
			"Switch to --dependency writeset: it waits only for transactions that touch the same rows.")
	case w["dependency"].Seconds >= 0.4*secs:
		advice := "Transactions touch the same rows; no dependency mode can run them in parallel."
		if len(hot) > 0 {
			advice = "Transactions touch the same rows, most in " + names(hot, 3) + ". No dependency mode can run them in parallel; batching (--batch-max-txns) applies such chains in one target transaction."
		}
		add("hot_rows", "Workers are idle while transactions wait for earlier writers of the same rows", advice)
	}
	if iv.TurnShare >= 0.4 {
		add("commit_order", fmt.Sprintf("Workers spend %.0f%% of their time waiting for their turn to commit", 100*iv.TurnShare),
			"Commit order is preserved (--preserve-commit-order): if readers of the target can accept transactions becoming visible out of source order, turn it off; otherwise raise --batch-max-txns so that each commit carries more transactions.")
	}
	if iv.AvgCommitMs > 5 || iv.CommitShare >= 0.3 {
		title := fmt.Sprintf("Commits on the target are slow: %.1f ms each on average, %.0f%% of the workers' time", iv.AvgCommitMs, 100*iv.CommitShare)
		if iv.AvgCommitMs <= 5 {
			// Fast commits, but so many that they are most of the work.
			title = fmt.Sprintf("Committing takes %.0f%% of the workers' time (%.1f ms per commit, %.1f source transactions each)", 100*iv.CommitShare, iv.AvgCommitMs, iv.AvgBatch)
		}
		add("slow_commits", title,
			fmt.Sprintf("Raise --batch-max-txns (now %.1f source transactions per commit on average), or relax the target's durability (innodb_flush_log_at_trx_commit=2, sync_binlog=0) if a crash of the target may lose its last second.", iv.AvgBatch))
	}
	return out
}

// lagging is said of a replica behind for no cause the rules name: how the
// lag moves, and where the coordinator's time went.
func lagging(iv Interval) Finding {
	var spent []string
	for _, k := range []struct{ key, what string }{
		{"source", "waiting for transactions to arrive"}, {"dependency", "waiting on dependencies"},
		{"barrier", "waiting at barriers"},
		{"workers_busy", "with every worker busy"}, {"queue_full", "with the window full"},
	} {
		if s := iv.Waits[k.key].Seconds; s > 0.05*iv.Seconds {
			spent = append(spent, fmt.Sprintf("%.0f%% %s", 100*s/iv.Seconds, k.what))
		}
	}
	advice := "See the wait times above."
	if len(spent) > 0 {
		advice = "The coordinator spent " + strings.Join(spent, ", ") + "."
	}
	if iv.LagEnd > iv.LagStart+0.25*iv.Seconds {
		return Finding{"warn", "lagging", fmt.Sprintf("The lag grows (%s to %s) with no single cause standing out", lagText(iv.LagStart), lagText(iv.LagEnd)), advice}
	}
	return Finding{"info", "lagging", fmt.Sprintf("%s behind, not growing, with no single cause standing out", lagText(iv.LagEnd)), advice}
}

// lastError words a connection's last error for a finding's advice.
func lastError(msg string) string {
	if msg == "" {
		return ""
	}
	return "Last error: " + msg + ". "
}

// sinceText says when t was, in UTC, and how long before now.
func sinceText(now, t time.Time) string {
	return t.UTC().Format("15:04:05 MST") + " (" + since(now, t) + ")"
}

// sourceDownSince says since when the source's connection is down: since
// it broke, or, never made, since the start.
func sourceDownSince(st replicate.Status) string {
	switch {
	case !st.Receiver.Since.IsZero():
		return "since " + sinceText(st.Now, st.Receiver.Since)
	case !st.Started.IsZero():
		return "since the start, " + sinceText(st.Now, st.Started)
	}
	return "since the start"
}

func hasWarning(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == "warn" && f.Cause != "source_disconnected" && f.Cause != "relay_full" {
			return true
		}
	}
	return false
}

// barriers reports what serialized transactions beyond their rows in the
// interval (a DDL an hour ago is no news now).
func barriers(st replicate.Status, iv Interval) (Finding, bool) {
	var parts []string
	for _, c := range serializing {
		n := iv.Serialized[c.cause]
		if n == 0 {
			continue
		}
		p := Plural(n, "transaction") + ": " + c.what
		if ts := st.Dependencies.BarrierTables[c.cause]; len(ts) > 0 {
			var names []string
			for t := range ts {
				names = append(names, t)
			}
			sort.Strings(names)
			if len(names) > 5 {
				names = append(names[:5], fmt.Sprintf("and %d more", len(ts)-5))
			}
			p += " (" + strings.Join(names, ", ") + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return Finding{}, false
	}
	return Finding{"info", "barriers", "Some transactions were serialized beyond their rows",
		strings.Join(parts, "; ") + ". Tables without keys serialize their writers: give them a primary key. DDL waits for everything before it."}, true
}

// statements says how much of the interval's work came as statements (a
// MIXED or STATEMENT source) and what they cost: one whose rows its text
// does not name is applied in the source's group-commit order, as
// MariaDB's conservative replica applies it; ROW would let paraply run it
// by its rows.
func statements(iv Interval, behind bool) (Finding, bool) {
	if iv.Statements == 0 || iv.Prepared == 0 {
		return Finding{}, false
	}
	title := fmt.Sprintf("The source logs statements (binlog_format MIXED or STATEMENT): %.0f%% of the transactions of the last %s were statement-format DML",
		100*float64(iv.Statements)/float64(iv.Prepared), windowText(iv))
	serial := iv.Serialized["statement"]
	if serial == 0 {
		return Finding{"info", "statements", title,
			"Each named the rows it writes by their keys, so they ran in parallel as rows do. Nothing to change."}, true
	}
	sev := "info"
	if behind && iv.Waits["barrier"].Seconds >= 0.4*iv.Seconds {
		sev = "warn"
	}
	return Finding{sev, "statements", title, fmt.Sprintf(
		"%.0f%% of them wrote rows their text does not name and were applied in the source's group-commit order, as MariaDB's conservative replica applies them; the others ran in parallel by the keys they name. binlog_format=ROW on the source lets paraply run every transaction in parallel by its rows.",
		100*float64(serial)/float64(iv.Statements))}, true
}

func names(c []Count, n int) string {
	var s []string
	for i, x := range c {
		if i == n {
			break
		}
		s = append(s, x.Name)
	}
	return strings.Join(s, ", ")
}

// causeCount reads the tracker's count for the cause named name.
func causeCount(causes []int64, name string) int64 {
	for i, n := range causes {
		if deptrack.Cause(i).String() == name {
			return n
		}
	}
	return 0
}

// rate prints a rate per second as a person reads it.
func rate(r float64) string {
	if r < 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.0f", r)
}

// within prints an upper bound of seconds s, rounded up: whole
// milliseconds below one second, tenths below a minute, then as span. The
// status line's highest lag ("at most") and the diagnosis ("within") both
// print it, so that they agree.
func within(s float64) string {
	switch {
	case s < 1:
		return fmt.Sprintf("%.0f ms", max(1, math.Ceil(1000*s)))
	case s < 60:
		return fmt.Sprintf("%.1f s", math.Ceil(10*s)/10)
	}
	return span(math.Ceil(s))
}
