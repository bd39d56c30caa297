package status

import (
	"fmt"
	"sort"
	"strings"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/replicate"
)

// Finding is one line of the diagnosis.
type Finding struct {
	// Severity is "ok", "info" or "warn".
	Severity string `json:"severity"`
	// Cause names the rule, for machines: source_disconnected,
	// source_idle, workers_busy, dependency_mode, hot_rows, commit_order,
	// slow_commits, window_full, relay_full, barriers, keeping_up.
	Cause  string `json:"cause"`
	Title  string `json:"title"`
	Advice string `json:"advice"`
}

// Diagnose turns a status and the last interval into findings, most
// important first. It is a pure function of its inputs.
func Diagnose(st replicate.Status, iv Interval, hot []Count) []Finding {
	var out []Finding
	add := func(sev, cause, title, advice string) {
		out = append(out, Finding{sev, cause, title, advice})
	}
	if !st.Receiver.Connected {
		msg := "paraply reconnects on its own with backoff; check that the source is up and reachable."
		if st.Receiver.LastError != "" {
			msg = "Last error: " + st.Receiver.LastError + ". " + msg
		}
		add("warn", "source_disconnected", "The replication connection to the source is down", msg)
	}
	behind := st.Scheduler.Pending > 0 || iv.LagEnd > 1
	growing := iv.LagEnd > iv.LagStart+0.25*iv.Seconds && iv.LagEnd > 1
	if st.Receiver.Connected && !behind && iv.ReceivedRate == 0 && iv.Seconds > 0 {
		add("ok", "source_idle", "The source is idle and the target has everything", "Nothing to do.")
	}
	secs := iv.Seconds
	if behind && secs > 0 {
		w := iv.Waits
		switch {
		case w["workers_busy"].Seconds >= 0.4*secs && iv.IdleShare < 0.2:
			add("warn", "workers_busy", fmt.Sprintf("All %d workers are busy and transactions are ready for more", st.Workers),
				fmt.Sprintf("Add workers (--workers %d), as long as the target has CPU and I/O to spare.", 2*st.Workers))
		case w["dependency"].Seconds >= 0.4*secs && !strings.HasPrefix(st.Dependency, "writeset"):
			add("warn", "dependency_mode", fmt.Sprintf("Workers are idle while transactions wait for each other under --dependency %s", st.Dependency),
				"Switch to --dependency writeset: it waits only for transactions that touch the same rows.")
		case w["dependency"].Seconds >= 0.4*secs:
			advice := "Transactions touch the same rows; no dependency mode can run them in parallel."
			if len(hot) > 0 {
				advice = "Transactions touch the same rows, most in " + names(hot, 3) + ". No dependency mode can run them in parallel; batching (--batch-max-txns) applies such chains in one target transaction."
			}
			add("warn", "hot_rows", "Workers are idle while transactions wait for earlier writers of the same rows", advice)
		}
		if iv.TurnShare >= 0.4 {
			add("warn", "commit_order", fmt.Sprintf("Workers spend %.0f%% of their time waiting for their turn to commit", 100*iv.TurnShare),
				"Commit order is preserved (--preserve-commit-order): if readers of the target can accept transactions becoming visible out of source order, turn it off; otherwise raise --batch-max-txns so that each commit carries more transactions.")
		}
		if iv.AvgCommitMs > 5 || iv.CommitShare >= 0.3 {
			add("warn", "slow_commits", fmt.Sprintf("Commits on the target are slow: %.1f ms each on average, %.0f%% of the workers' time", iv.AvgCommitMs, 100*iv.CommitShare),
				fmt.Sprintf("Raise --batch-max-txns (now %.1f source transactions per commit on average), or relax the target's durability (innodb_flush_log_at_trx_commit=2, sync_binlog=0) if a crash of the target may lose its last second.", iv.AvgBatch))
		}
		if w["queue_full"].Seconds >= 0.3*secs && iv.IdleShare > 0.3 {
			add("warn", "window_full", "The look-ahead window is full while workers are idle",
				"A transaction far back blocks the window: raise --window so that later independent transactions can pass it.")
		}
	}
	if iv.RelayBlocked > 0.3*secs && secs > 0 {
		add("warn", "relay_full", "The relay log is full: receiving waits for applying",
			"Applying is the bottleneck (see above); --relay-max-bytes only buys time.")
	}
	if f, ok := barriers(st); ok {
		out = append(out, f)
	}
	if growing && len(out) == 0 {
		add("warn", "lagging", "The lag grows, with no single cause standing out", "See the wait times above.")
	}
	if behind && !growing && len(out) == 0 {
		add("ok", "keeping_up", "Applying keeps up with the source", "Nothing to change.")
	}
	return out
}

// barriers reports what serialized transactions beyond their rows.
func barriers(st replicate.Status) (Finding, bool) {
	d := st.Dependencies
	var parts []string
	for _, c := range []struct{ cause, what string }{
		{"ddl", "DDL"}, {"statement", "statement-format DML"}, {"unknown_table", "tables without a known schema"},
		{"schema_mismatch", "row images not matching the schema"}, {"missing_key_column", "row images without their key columns (binlog_row_image=MINIMAL)"},
		{"keyless_table", "tables without a primary or unique key"}, {"fk_cascade", "cascading foreign keys"},
	} {
		n := causeCount(d.Tracker.Causes[:], c.cause)
		if n == 0 {
			continue
		}
		p := fmt.Sprintf("%d transactions: %s", n, c.what)
		if ts := d.BarrierTables[c.cause]; len(ts) > 0 {
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
