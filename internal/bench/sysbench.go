package bench

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// sysbenchSeed makes every backlog of a workload and client count the same
// from one benchmark to the next (as far as thread scheduling allows).
const sysbenchSeed = "--rand-seed=42"

// sysbenchResult is what a sysbench run reports.
type sysbenchResult struct {
	Transactions int64   // "transactions: N"
	TPS          float64 // "(X per sec.)"
	Seconds      float64 // "total time: Xs"
	Wall         float64 // measured around the process
}

// sysbenchRun runs `sysbench <script> ... run` with threads clients and
// events transactions against srv's sbtest database; a script of this
// package's own is written into dir first.
func sysbenchRun(ctx context.Context, srv *sandbox.Server, dir string, w Workload, tables, size, threads, events int) (sysbenchResult, error) {
	args := []string{
		"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(size),
		"--threads=" + strconv.Itoa(threads), sysbenchSeed,
		"--events=" + strconv.Itoa(events), "--time=0", "--report-interval=0",
	}
	args = append(append(args, w.Args...), "run")
	script, err := scriptPath(dir, w.Script)
	if err != nil {
		return sysbenchResult{}, err
	}
	began := time.Now()
	out, err := srv.Sysbench(ctx, script, args...).CombinedOutput()
	wall := time.Since(began).Seconds()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return sysbenchResult{}, fmt.Errorf("sysbench %s run on %s: %w\n%s", w.Script, srv.Name, err, tail(string(out), 15))
	}
	r, err := parseSysbench(string(out))
	if err != nil {
		return r, fmt.Errorf("sysbench %s run on %s: %w\n%s", w.Script, srv.Name, err, tail(string(out), 15))
	}
	r.Wall = wall
	return r, nil
}

// sysbenchPrepare creates and fills the sbtest tables on srv.
func sysbenchPrepare(ctx context.Context, srv *sandbox.Server, tables, size int) error {
	args := []string{
		"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(size),
		// prepare gives each thread whole tables; two cores here.
		"--threads=" + strconv.Itoa(min(tables, 2)), sysbenchSeed, "prepare",
	}
	out, err := srv.Sysbench(ctx, "oltp_read_write", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sysbench prepare on %s: %w\n%s", srv.Name, err, tail(string(out), 15))
	}
	return nil
}

var (
	reTransactions = regexp.MustCompile(`transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)`)
	reTotalTime    = regexp.MustCompile(`total time:\s+([\d.]+)s`)
)

// parseSysbench reads the transaction count, the rate and the time from
// sysbench 1.0's report.
func parseSysbench(out string) (sysbenchResult, error) {
	var r sysbenchResult
	m := reTransactions.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no \"transactions:\" line in the sysbench report")
	}
	r.Transactions, _ = strconv.ParseInt(m[1], 10, 64)
	r.TPS, _ = strconv.ParseFloat(m[2], 64)
	if m := reTotalTime.FindStringSubmatch(out); m != nil {
		r.Seconds, _ = strconv.ParseFloat(m[1], 64)
	}
	return r, nil
}
