package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paraply/paraply/internal/analyze"
)

// Markdown renders the results: a header, a summary table, and per
// workload a chart and one table per backlog (source clients ×
// durability).
func (res *Results) Markdown() string {
	var sb strings.Builder
	res.writeHeader(&sb)
	res.writeSummary(&sb)
	res.writePITR(&sb)
	for _, w := range res.workloads() {
		fmt.Fprintf(&sb, "\n## %s\n\n![%s](%s)\n", w, w, chartFile(w))
		for _, b := range res.Backlogs {
			if b.Workload == w {
				b.writeTable(&sb)
			}
		}
	}
	sb.WriteString(strings.NewReplacer(
		"{ordered-share}", strconv.FormatFloat(analyze.OrderedShare, 'f', -1, 64),
	).Replace(notes))
	return sb.String()
}

func (res *Results) writeHeader(sb *strings.Builder) {
	h := res.Header
	title := "paraply vs MariaDB's own replica"
	if h.Quick {
		title += " (quick run)"
	}
	fmt.Fprintf(sb, "# %s\n\n", title)
	took := ""
	if h.Seconds > 0 {
		took = fmt.Sprintf(", %s", (time.Duration(h.Seconds) * time.Second).String())
	}
	fmt.Fprintf(sb, "- Date: %s%s\n", h.Started.Format("2006-01-02 15:04 MST"), took)
	fmt.Fprintf(sb, "- Software: %s; %s; paraply binary %s (working tree %s, %s)\n", strings.Join(strings.Fields(h.MariaDB), " "), h.Sysbench, h.ParaplyBinary, h.Paraply, h.Go)
	if h.ParaplyBinaryB != "" {
		fmt.Fprintf(sb, "- Binary B (the configurations marked @b, \"binary B\"): paraply binary %s\n", h.ParaplyBinaryB)
	}
	fmt.Fprintf(sb, "- Machine: %d CPUs (%s), %.1f GiB memory, Linux %s\n", h.CPUs, h.CPUModel, float64(h.MemoryMB)/1024, h.Kernel)
	fmt.Fprintf(sb, "- Load average (1/5/15 min): %s at the start, %s at the end; %.2f to %.2f when runs started. "+
		"The machine is shared: other work running at the same time lowers and scatters every number.\n",
		loads(h.LoadStart), loads(h.LoadEnd), h.LoadRunMin, h.LoadRunMax)
	fmt.Fprintf(sb, "- Data: sysbench prepare, %d tables x %d rows, once; every backlog is K = %d sysbench events%s (`run --events=K --time=0 --rand-seed=42`) from T = %s source clients, built from that same state.\n",
		h.Tables, h.TableSize, h.Events, eventsFor(h.EventsFor), joinInts(h.Clients))
	format := "binlog_format=ROW"
	if h.BinlogFormat != "" && h.BinlogFormat != "ROW" {
		format = "binlog_format=ROW but the source's " + h.BinlogFormat
	}
	fmt.Fprintf(sb, "- Servers: three MariaDB sandboxes with identical options per durability (%s): log-bin, %s, binlog_row_image=FULL, log_slave_updates, gtid_strict_mode, innodb_buffer_pool_size=%dM; "+
		"durable = innodb_flush_log_at_trx_commit=1 + sync_binlog=1, nondurable = 2 + 0 (no doublewrite). Everything else is MariaDB's default.\n",
		strings.Join(h.Durability, ", "), format, h.BufferPoolMB)
	fmt.Fprintf(sb, "- Runs: %s; each from a snapshot of the replica or target taken after the initial load%s; timeout %s; `paraply verify` on %s.\n",
		strings.Join(h.Configs, ", "), warmNote(h.Warm), h.RunTimeout, verifyNote(h.Verify))
	if h.Rounds > 1 {
		fmt.Fprintf(sb, "- Rounds: %d. Each backlog's configurations ran in %d rounds, one round after the other, so that they share the machine's drift; "+
			"every table and ratio uses each configuration's median run, with the range and number of its runs beside it.", h.Rounds, h.Rounds)
		if h.RepeatUnderSeconds > 0 {
			fmt.Fprintf(sb, " A configuration whose first run on a backlog took %g s or more ran only once there (a long run averages the machine's moments out; natives and paraply alike).", h.RepeatUnderSeconds)
		}
		sb.WriteString("\n")
	}
}

func (res *Results) writeSummary(sb *strings.Builder) {
	sb.WriteString("\n## Summary\n\n")
	sb.WriteString("Native runs timed from a full relay log (the apply alone); paraply's time includes receiving.\n\n")
	sb.WriteString("| backlog | native single tps | best native | paraply defaults | defaults / best native | best paraply | best paraply / best native | ceiling tps |\n")
	sb.WriteString("|---|---:|---|---:|---:|---|---:|---:|\n")
	receive, withB := false, false
	for _, b := range res.Backlogs {
		if b.Error != "" {
			fmt.Fprintf(sb, "| %s | backlog failed | | | | | | |\n", b.title())
			continue
		}
		receive = receive || b.BestNativeReceive != ""
		withB = withB || b.DefaultsBTPS > 0
		fmt.Fprintf(sb, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", b.title(),
			tps(b.NativeSingleTPS), named(b.BestNativeTPS, b.BestNative),
			tps(b.DefaultsTPS), times(ratio(b.DefaultsTPS, b.BestNativeTPS)),
			named(b.BestParaplyTPS, b.BestParaply), times(ratio(b.BestParaplyTPS, b.BestNativeTPS)), tps(b.CeilingTPS))
	}
	if withB {
		res.writeSummaryB(sb)
	}
	if !receive {
		return
	}
	sb.WriteString("\nReceiving included on both sides: native runs timed from START SLAVE with an empty relay log (`-receive`).\n\n")
	sb.WriteString("| backlog | best native from START SLAVE | paraply defaults | defaults / it | best paraply | best paraply / it |\n")
	sb.WriteString("|---|---|---:|---:|---|---:|\n")
	for _, b := range res.Backlogs {
		if b.Error != "" || b.BestNativeReceive == "" {
			continue
		}
		fmt.Fprintf(sb, "| %s | %s | %s | %s | %s | %s |\n", b.title(),
			named(b.BestNativeReceiveTPS, b.BestNativeReceive), tps(b.DefaultsTPS), times(ratio(b.DefaultsTPS, b.BestNativeReceiveTPS)),
			named(b.BestParaplyTPS, b.BestParaply), times(ratio(b.BestParaplyTPS, b.BestNativeReceiveTPS)))
	}
}

// writeSummaryB compares the defaults of the two binaries, where both ran.
func (res *Results) writeSummaryB(sb *strings.Builder) {
	sb.WriteString("\nThe two binaries with their defaults (paraply-auto-writeset and paraply-auto-writeset@b):\n\n")
	sb.WriteString("| backlog | defaults | defaults, binary B | B / A | B / best native |\n")
	sb.WriteString("|---|---:|---:|---:|---:|\n")
	for _, b := range res.Backlogs {
		if b.Error != "" || b.DefaultsBTPS == 0 {
			continue
		}
		fmt.Fprintf(sb, "| %s | %s | %s | %s | %s |\n", b.title(), tps(b.DefaultsTPS), tps(b.DefaultsBTPS),
			times(ratio(b.DefaultsBTPS, b.DefaultsTPS)), times(ratio(b.DefaultsBTPS, b.BestNativeTPS)))
	}
}

// writePITR renders the point-in-time recovery table, if any backlog was
// replayed from its files.
func (res *Results) writePITR(sb *strings.Builder) {
	var rows []*Backlog
	for _, b := range res.Backlogs {
		if b.find(Apply{Kind: MariadbBinlog}.Name()) != nil || b.PITRApply != "" {
			rows = append(rows, b)
		}
	}
	if len(rows) == 0 {
		return
	}
	sb.WriteString("\n## Point-in-time recovery\n\n")
	sb.WriteString("The backlog's binlog files replayed onto the target's snapshot: `mariadb-binlog FILES | mariadb` against `paraply apply --start-gtid <before> FILES`.\n\n")
	sb.WriteString("| backlog | mariadb-binlog \\| mariadb | paraply apply | paraply apply / mariadb-binlog |\n")
	sb.WriteString("|---|---:|---:|---:|\n")
	for _, b := range rows {
		apply := b.find(b.PITRApply)
		fmt.Fprintf(sb, "| %s | %s | %s | %s |\n", b.title(), secondsTPS(b.find(Apply{Kind: MariadbBinlog}.Name())),
			secondsTPS(apply), times(b.PITRRatio))
	}
}

// secondsTPS is a run's time and throughput, for a table cell.
func secondsTPS(r *Measurement) string {
	switch {
	case r == nil:
		return ""
	case !r.ok():
		return "failed"
	}
	label := ""
	if r.Apply.Kind == ParaplyApply {
		label = r.Apply.workers() + " workers: "
	}
	return fmt.Sprintf("%s%.1f s (%s tps)", label, r.Seconds, tps(r.TPS))
}

func (b *Backlog) title() string {
	return fmt.Sprintf("%s T=%d %s", b.Workload, b.Clients, durabilityName(b.Durable))
}

func (b *Backlog) writeTable(sb *strings.Builder) {
	fmt.Fprintf(sb, "\n### %s · T=%d · %s\n\n", b.Workload, b.Clients, durabilityName(b.Durable))
	if b.Error != "" {
		fmt.Fprintf(sb, "The backlog could not be built: `%s`\n", firstLine(b.Error))
		return
	}
	args := ""
	if len(b.Args) > 0 {
		args = " " + strings.Join(b.Args, " ")
	}
	fmt.Fprintf(sb, "sysbench %s%s, %d clients on the source: %d transactions (GTID %s to %s) in %.1f s (%.0f tps), %.1f MB of binlog.\n",
		b.Script, args, b.Clients, b.Transactions, b.Before, b.After, b.BuildSeconds, b.SourceTPS, float64(b.BinlogBytes)/1e6)
	fmt.Fprintf(sb, "The source then settled (dirty pages flushed, purge done) in %.1f s before the runs.\n", b.SettleSeconds)
	if b.Unsettled != "" {
		fmt.Fprintf(sb, "It had not settled after %s: %s.\n", settleTimeout, b.Unsettled)
	}
	if b.PredictError != "" {
		fmt.Fprintf(sb, "No prediction: `%s`\n", firstLine(b.PredictError))
	}
	sb.WriteString("\n| configuration | seconds | tps | x native single | x best native | x ceiling | predicted speedup | measured speedup | | CPU ms/txn | lock waits |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n")
	for _, r := range b.representatives() {
		// A pipe in a label ("mariadb-binlog | mariadb") would end its cell.
		label := strings.ReplaceAll(r.Apply.Label(), "|", `\|`)
		if r.IncludesReceive {
			label += "*"
		}
		if r.Verified != nil {
			if *r.Verified {
				label += " (verified)"
			} else {
				label += " (**VERIFY FAILED**)"
			}
		}
		if r.Failed {
			fmt.Fprintf(sb, "| %s | failed after %.1f | | | | | | | `%s` | | |\n", label, r.Seconds, abbreviate(firstLine(r.Error), 100))
			continue
		}
		flag := ""
		if r.Disagrees {
			flag = fmt.Sprintf("prediction off by %+.0f%%", 100*(r.MeasuredSpeedup/r.PredictedSpeedup-1))
			if r.OffBecause != "" {
				flag += ": " + r.OffBecause
			}
		}
		fmt.Fprintf(sb, "| %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, r.Seconds, tps(r.TPS)+spread(r),
			times(r.VsNativeSingle), times(r.VsBestNative), times(r.VsCeiling),
			times(r.PredictedSpeedup), times(r.MeasuredSpeedup), flag, cpuPerTxn(r), lockWaits(r))
	}
}

const notes = `
## How to read the tables

- Native runs: slave_parallel_threads and slave_parallel_mode are set, the replica's relay log is filled with
  the IO thread alone, and the time runs from START SLAVE SQL_THREAD until MASTER_GTID_WAIT sees the backlog's
  last GTID applied. That is the apply alone.
- paraply runs (marked *): the time is the whole ` + "`paraply replicate --until-caught-up`" + ` process, from exec to
  exit: it connects to the source, receives the backlog into a fresh relay log, applies it and checkpoints. So
  paraply's time also includes receiving the backlog, which the native replica did before its timer started.
- Ceiling: sysbench with 16 clients running the same workload directly against the restored target; its tps is
  what the target commits at most with this workload (for read_write it also runs the reads).
- Point-in-time recovery: the backlog's binlog files, read from the source's binlog directory, replayed onto the
  restored target (the state before the backlog, as a restored backup) by ` + "`mariadb-binlog FILES | mariadb`" + ` (one
  session, one commit per source transaction) and by ` + "`paraply apply --start-gtid <before> FILES`" + ` (its defaults:
  writeset dependencies, batches of up to 512, commit order kept); each from exec to exit.
- x native single, x best native, x ceiling: tps over the native single-threaded replica's, over the best
  native configuration's, over the ceiling's.
- Predicted speedup: ` + "`paraply analyze --json`" + ` on the backlog's binlog files with the target's schema, its
  simulated speedup of the run's dependency mode at the run's worker count over one worker, with the run's
  commit order, for --workers auto the best worker count's. The simulation batches as the run does (` + "`--batch-max-txns`" + `),
  prices each commit, and caps the speedup at what this machine's cores allow (` + "`--target-cores`" + `: the cores over
  those one worker keeps busy, calibrated per row change, statement and commit; {ordered-share} of that with commit
  order kept) and, on statements, at what paraply's statement path gained when measured (` + "`--statement-gain`" + `).
  Measured speedup:
  the run's tps over the tps of paraply with 1 worker and --dependency serial with the same batching (or, when
  that was not run, 1 worker in another mode with the same batching: one worker applies serially). They are
  flagged when they differ by more than 20% of the prediction, with the reason when the run's own measurements
  account for it: slower than predicted, the CPU per transaction risen over one worker's (the model prices a
  transaction the same however many sessions contend for the target's cores), when the prediction scaled by
  that rise is within 20%; faster, the one worker leaving cores idle (the model's capacity is calibrated on
  batching runs that keep them busy; a worker waiting for round trips and commits does not), when the cores over
  those the one worker kept busy are within 20% of the measured speedup; faster without commit order, more than one
  session waiting in Commit on average (the model caps the speedup at the target's CPU capacity; fsync waits use
  none, and unordered commits overlap them); otherwise, with rounds, the prediction lying between the lowest
  and the highest speedup the rounds measured (each round's run over that round's one-worker run).
- CPU ms/txn: CPU time of the applying mariadbd plus the paraply process during the run, per transaction, and
  for paraply's runs the two parts in parentheses, server + paraply (for the ceiling, of the target alone;
  sysbench's own CPU is not counted; for mariadb-binlog | mariadb, the server's and the two clients'). Lock waits: the average number of InnoDB
  transactions waiting for a row lock on the applying server, sampled every 200 ms. results.json has the
  processlist states behind it.
`

// spread is, for the median of several runs, the range of their
// throughputs and their number, for a table cell.
func spread(r *Measurement) string {
	if !r.Median || len(r.Runs) < 2 {
		return ""
	}
	return fmt.Sprintf(" (%s-%s, median of %d)", tps(slices.Min(r.Runs)), tps(slices.Max(r.Runs)), len(r.Runs))
}

// cpuPerTxn is the CPU time of the applying mariadbd plus paraply's (or
// mariadb-binlog's and the client's), per transaction: on a two-core
// machine, what bounds throughput.
//
// Where a paraply process ran, its share is given beside the server's: on
// a machine whose cores both share, the two add up to what limits the
// rate, and which of them to cut is what a profile should look at.
func cpuPerTxn(r *Measurement) string {
	if r.Transactions <= 0 || r.ServerCPU <= 0 {
		return ""
	}
	per := func(s float64) float64 { return 1000 * s / float64(r.Transactions) }
	total := fmt.Sprintf("%.2f", per(r.cpuSeconds()))
	if r.ParaplyCPU <= 0 {
		return total
	}
	return fmt.Sprintf("%s (%.2f + %.3f)", total, per(r.ServerCPU), per(r.ParaplyCPU))
}

// lockWaits is the average number of InnoDB transactions waiting for a row
// lock on the applying server during the run.
func lockWaits(r *Measurement) string {
	if r.Sessions == nil {
		return "" // not sampled
	}
	return fmt.Sprintf("%.1f", r.LockWaits)
}

func tps(x float64) string {
	if x <= 0 {
		return ""
	}
	return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
}

func times(x float64) string {
	if x <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2fx", x)
}

func named(x float64, name string) string {
	if x <= 0 {
		return ""
	}
	return fmt.Sprintf("%s (%s)", tps(x), name)
}

func loads(l [3]float64) string {
	return fmt.Sprintf("%.2f/%.2f/%.2f", l[0], l[1], l[2])
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, " and ")
}

func warmNote(warm bool) string {
	if warm {
		return " (restored, then every table read into the buffer pool, a first write made, out of the binary log, and the page cache written out)"
	}
	return " (restored, then the page cache written out)"
}

func verifyNote(v string) string {
	switch v {
	case VerifyAll:
		return "every native and paraply run"
	case VerifyNone:
		return "no run"
	}
	return "the first native run, the first multi-worker paraply run and the first run of each point-in-time recovery of each backlog"
}

// abbreviate shortens s to at most n bytes and makes it safe in a table
// cell.
func abbreviate(s string, n int) string {
	s = strings.NewReplacer("|", "/", "`", "'").Replace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// eventsFor says which workloads had their own K, in name order: "" when
// none did.
func eventsFor(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", name, m[name]))
	}
	return " (but " + strings.Join(parts, ", ") + ")"
}
