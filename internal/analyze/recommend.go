package analyze

import (
	"fmt"
	"strconv"
	"strings"
)

// recommend words what the numbers suggest: which mode, how many workers,
// and what serializes the stream.
func recommend(r *Report, workers []int) string {
	if r.Transactions == 0 {
		return "No transactions were read."
	}
	var out []string
	// The mode is chosen by the parallelism its dependencies allow; what
	// workers make of it depends on batching and the target as well.
	bestPar, bestName := 0.0, ""
	for _, m := range []string{"writeset", "writeset-session", "commit-order", "database"} {
		if p := r.Modes[m].AvgParallelism; p > bestPar*1.05 {
			bestPar, bestName = p, m
		}
	}
	co, wsr := r.Modes["commit-order"], r.Modes["writeset"]
	if bestName == "" || bestPar < 1.2 {
		out = append(out, fmt.Sprintf("This stream is essentially serial under every mode (average parallelism at most %.2f); more workers will not help.", bestPar))
	} else {
		mr := r.Modes[bestName]
		best, bestW := bestSpeedup(mr.Speedup)
		out = append(out, fmt.Sprintf("Use --dependency %s: it allows an average parallelism of %.1f.", bestName, bestPar))
		if best < 1.2 {
			out = append(out, fmt.Sprintf("More workers add little: the best simulated speedup is %.2fx (%s).", best, workersText(bestW)))
		} else {
			out = append(out, fmt.Sprintf("%s workers simulate %.1fx one worker's speed.", bestW, best))
			if n := enough(mr, workers, best); n > 0 && strconv.Itoa(n) != bestW {
				out = append(out, fmt.Sprintf("%d workers already reach 90%% of that.", n))
			}
		}
		out = append(out, limitText(r, bestName, mr))
	}
	if wsr.AvgParallelism >= 1.5*co.AvgParallelism && co.AvgParallelism > 0 {
		out = append(out, fmt.Sprintf("The source's own clock (commit-order) allows only %.1f; row writesets allow %.1f. A MySQL source with binlog_transaction_dependency_tracking=WRITESET would record the same for native replicas; a MariaDB source records only group commits (raise binlog_commit_wait_count/usec, or use paraply).",
			co.AvgParallelism, wsr.AvgParallelism))
	}
	if ses := r.Modes["writeset-session"]; ses.AvgParallelism*2 < wsr.AvgParallelism {
		out = append(out, fmt.Sprintf("Few source sessions did most of the work: writeset-session (%.1f) is far below writeset (%.1f); keep writeset with --preserve-commit-order instead.", ses.AvgParallelism, wsr.AvgParallelism))
	}
	b := wsr.Barriers
	if n := b["statement"]; n > 0 && r.Transactions > 0 {
		co := r.Modes["commit-order"]
		out = append(out, fmt.Sprintf("%d of %d transactions (%.0f%%) are statement-format (binlog_format MIXED or STATEMENT) without rows their text tells "+
			"(only the plainest statements, on a key, tell them): paraply applies each after everything before it, in the source's group-commit order "+
			"(commit-order allows %.1f on this stream); with binlog_format=ROW paraply would run them by their rows.",
			n, r.Transactions, 100*float64(n)/float64(r.Transactions), co.AvgParallelism))
	}
	var barriers []string
	for _, c := range []string{"ddl", "statement", "unknown_table", "schema_mismatch", "missing_key_column", "partial_json"} {
		if b[c] > 0 {
			barriers = append(barriers, fmt.Sprintf("%d %s", b[c], strings.ReplaceAll(c, "_", " ")))
		}
	}
	if len(barriers) > 0 {
		out = append(out, "Barriers that wait for everything: "+strings.Join(barriers, ", ")+".")
	}
	if len(r.TablesWithoutSchema) > 0 {
		out = append(out, fmt.Sprintf("No keys known for %s: give --schema or --schema-file so their rows can run in parallel.", list(r.TablesWithoutSchema)))
	}
	if len(r.KeylessTables) > 0 {
		out = append(out, fmt.Sprintf("Tables without a primary or unique key serialize their writers: %s. Add a primary key.", list(r.KeylessTables)))
	}
	if len(r.HotKeys) > 0 && r.HotKeys[0].Conflicts*20 >= r.Transactions {
		h := r.HotKeys[0]
		out = append(out, fmt.Sprintf("Hot row %s made %.0f%% of transactions wait: no dependency mode can run its writers in parallel.",
			h.Name, 100*float64(h.Conflicts)/float64(r.Transactions)))
	}
	if b["history_forgotten"] > r.Transactions/10 {
		out = append(out, "The writeset history was too small for this stream; raise --history-size.")
	}
	return strings.Join(out, " ")
}

// limitText says what caps the speedup of mode mr, and what would lift it.
func limitText(r *Report, mode string, mr *ModeReport) string {
	m := r.CostModel
	switch mr.Limit {
	case LimitCores:
		return fmt.Sprintf("The target's %d cores cap it: a worker keeps %.2f of them busy (the target's session and paraply), so workers apply at most %.2fx as fast as one; a target with more cores would gain more (--target-cores).",
			m.Cores, r.WorkerCores, mr.Capacity)
	case LimitBatching:
		b := mr.SmallerBatch
		return fmt.Sprintf("Batching caps it: each batch of up to %d consecutive transactions waits for the batch before it (one transaction on a row the batch before wrote is enough), so batches run one after another; with --batch-max-txns %d, %s would reach %.2fx.",
			max(1, m.Batch), b.Batch, workersText(strconv.Itoa(b.Workers)), b.Speedup)
	case LimitStatements:
		if best, _ := bestSpeedup(mr.Speedup); mr.Simulated <= best {
			return fmt.Sprintf("Batches of up to %d consecutive transactions wait for the batch before them (one transaction on a row the batch before wrote is enough), so they run one after another; smaller batches would overlap, but workers gain at most %.2fx on statement-format transactions as paraply applies them today (--statement-gain); with binlog_format=ROW they would run by their rows.",
				max(1, m.Batch), m.StatementGain)
		}
		return fmt.Sprintf("paraply's statement path caps it: workers gain at most %.2fx on statement-format transactions as paraply applies them today (--statement-gain), where the dependencies allow %.2fx; with binlog_format=ROW they would run by their rows.",
			m.StatementGain, mr.Simulated)
	case LimitCommitOrder:
		u, uw := bestSpeedup(mr.UnorderedSpeedup)
		return fmt.Sprintf("Commit order caps it: workers wait for their turn to commit; without it (--preserve-commit-order=false) %s reach %.2fx.", workersText(uw), u)
	}
	return fmt.Sprintf("The dependencies cap it: %s's critical path is %d transactions of %d.", mode, mr.CriticalPath, r.Transactions)
}

// bestSpeedup returns the highest speedup of by and its worker count (the
// smallest among equals).
func bestSpeedup(by map[string]float64) (float64, string) {
	best, bestN := 0.0, 0
	for k, s := range by {
		n, _ := strconv.Atoi(k)
		if s > best || s == best && n < bestN {
			best, bestN = s, n
		}
	}
	return best, strconv.Itoa(bestN)
}

func workersText(n string) string {
	if n == "1" {
		return "1 worker"
	}
	return n + " workers"
}

// enough is the smallest worker count reaching 90% of the best speedup.
func enough(m *ModeReport, workers []int, best float64) int {
	n := 0
	for _, w := range workers {
		if m.Speedup[strconv.Itoa(w)] >= 0.9*best && (n == 0 || w < n) {
			n = w
		}
	}
	return n
}

func list(s []string) string {
	if len(s) > 5 {
		return strings.Join(s[:5], ", ") + fmt.Sprintf(" and %d more", len(s)-5)
	}
	return strings.Join(s, ", ")
}
