package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrFailed is returned by Run when a run failed or a verification found
// a difference; the results are written all the same.
var ErrFailed = errors.New("benchmark failed")

// Run measures every backlog of cfg, writes results.json, results.md and
// the charts into cfg.OutDir (after each backlog, so an interrupted
// benchmark keeps what it measured), and prints the markdown to cfg.Out.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var err error
	if cfg.Paraply, err = filepath.Abs(cfg.Paraply); err != nil {
		return nil, err
	}
	if _, err := os.Stat(cfg.Paraply); err != nil {
		return nil, fmt.Errorf("paraply binary: %w (run make build)", err)
	}
	if cfg.ParaplyB != "" {
		if cfg.ParaplyB, err = filepath.Abs(cfg.ParaplyB); err != nil {
			return nil, err
		}
		if _, err := os.Stat(cfg.ParaplyB); err != nil {
			return nil, fmt.Errorf("second paraply binary: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(cfg.BaseDir, "paraply-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	b := &benchmark{cfg: cfg, work: work, res: &Results{Header: newHeader(ctx, cfg)}}
	b.total = len(cfg.Durable) * len(cfg.Workloads) * len(cfg.Clients) * len(cfg.Applies) * cfg.rounds()
	b.logf("paraply bench: %d runs on %d backlogs of %d transactions; results in %s",
		b.total, b.total/len(cfg.Applies)/cfg.rounds(), cfg.Events, cfg.OutDir)
	runErr := b.run(ctx)
	b.res.Header.finish()
	if err := b.res.write(cfg.OutDir); err != nil {
		return b.res, errors.Join(runErr, err)
	}
	if cfg.Out != nil {
		fmt.Fprint(cfg.Out, b.res.Markdown())
	}
	if runErr == nil && len(b.failures) > 0 {
		runErr = fmt.Errorf("%w: %s", ErrFailed, strings.Join(b.failures, "; "))
	}
	return b.res, runErr
}

// benchmark is the state of one Run.
type benchmark struct {
	cfg      Config
	work     string
	res      *Results
	base     *loaded // the initial load, made by the first cluster
	done     int     // measured runs so far
	total    int
	failures []string
}

func (b *benchmark) run(ctx context.Context) error {
	for _, durable := range b.cfg.Durable {
		if err := b.runCluster(ctx, durable); err != nil {
			return err
		}
	}
	return nil
}

// runCluster starts the three servers of one durability setting, loads
// them and measures every backlog on them.
func (b *benchmark) runCluster(ctx context.Context, durable bool) (err error) {
	began := time.Now()
	work := filepath.Join(b.work, durabilityName(durable))
	if err := os.Mkdir(work, 0o700); err != nil {
		return err
	}
	c, err := startCluster(ctx, b.cfg, durable, work)
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, c.remove(), os.RemoveAll(work))
	}()
	if b.base, err = c.load(ctx, b.base, filepath.Join(b.work, "base")); err != nil {
		return fmt.Errorf("loading the initial data (%s): %w", durabilityName(durable), err)
	}
	b.logf("%s servers ready: source %s, replica %s, target %s; %d x %d rows at GTID %s, identical on all three (%.1f s)",
		durabilityName(durable), c.source.URL(), c.replica.URL(), c.target.URL(),
		b.cfg.Tables, b.cfg.TableSize, c.base, time.Since(began).Seconds())
	for _, w := range b.cfg.Workloads {
		for _, clients := range b.cfg.Clients {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := b.measure(ctx, c, w, clients); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// measure builds one backlog and applies it with every configuration. The
// results files are rewritten after each run; only failing to write them
// is an error.
func (b *benchmark) measure(ctx context.Context, c *cluster, w Workload, clients int) error {
	name := fmt.Sprintf("%s T=%d %s", w.Name, clients, durabilityName(c.durable))
	bl, err := c.buildBacklog(ctx, w, clients)
	b.res.Backlogs = append(b.res.Backlogs, bl)
	if err != nil {
		bl.Error = err.Error()
		b.failures = append(b.failures, name+": building the backlog failed")
		b.logf("backlog %s: FAILED: %s", name, firstLine(err.Error()))
		b.done += len(b.cfg.Applies) * b.cfg.rounds()
		return b.res.write(b.cfg.OutDir)
	}
	b.logf("backlog %s: %d transactions in %.1f s on the source (%.0f tps), %.1f MB of binlog, settled in %.1f s, analyzed in %.1f s",
		name, bl.Transactions, bl.BuildSeconds, bl.SourceTPS, float64(bl.BinlogBytes)/1e6, bl.SettleSeconds, bl.AnalyzeSeconds)
	if bl.Unsettled != "" {
		b.logf("backlog %s: the source did not settle in %s: %s", name, settleTimeout, bl.Unsettled)
	}
	if bl.PredictError != "" {
		b.logf("backlog %s: no prediction: %s", name, firstLine(bl.PredictError))
	}
	verified := map[Kind]bool{}
	for n := 1; n <= b.cfg.rounds(); n++ {
		if err := b.measureRound(ctx, c, bl, name, n, verified); err != nil {
			return err
		}
	}
	return nil
}

// measureRound applies backlog bl with every configuration once; n
// counts the rounds from 1 (0 is recorded when there is only one).
func (b *benchmark) measureRound(ctx context.Context, c *cluster, bl *Backlog, name string, n int, verified map[Kind]bool) error {
	if b.cfg.rounds() == 1 {
		n = 0
	}
	for _, a := range b.cfg.Applies {
		if ctx.Err() != nil {
			break
		}
		if n > 1 {
			if first := bl.firstRun(a.Name()); !b.cfg.repeats(first) {
				b.total--
				continue
			}
		}
		run := b.apply(ctx, c, a, bl, n)
		bl.Runs = append(bl.Runs, run)
		b.done++
		if run.Failed {
			b.failures = append(b.failures, fmt.Sprintf("%s %s failed", a.Label(), name))
			b.logf("[%d/%d] %s %s: FAILED after %.1f s: %s", b.done, b.total, a.Label(), name, run.Seconds, firstLine(run.Error))
		} else {
			b.logf("[%d/%d] %s %s: %.1f s, %.0f tps", b.done, b.total, a.Label(), name, run.Seconds, run.TPS)
			if b.shouldVerify(a, verified) {
				b.verify(ctx, c, a, run, name)
			}
		}
		// Whatever the server is still doing must not disturb the next
		// run: after a run it keeps flushing dirty pages and purging for
		// seconds, which on two cores slowed the next configuration's run
		// (the first paraply run after the native ones: paraply's CPU per
		// write_only transaction 0.036 ms against 0.021-0.027 in the
		// others). Its next use restores it anyway.
		if err := c.server(a).Kill(); err != nil {
			return err
		}
		if err := b.res.write(b.cfg.OutDir); err != nil {
			return err
		}
	}
	return nil
}

// repeats reports whether a configuration runs again in a later round,
// given its first run on the backlog (see Config.RepeatUnder): yes unless
// that run succeeded and took RepeatUnder or longer.
func (c Config) repeats(first *Measurement) bool {
	return c.RepeatUnder <= 0 || !first.ok() || first.Seconds < c.RepeatUnder.Seconds()
}

// firstRun is configuration name's run in the backlog's first round, nil
// if there is none.
func (b *Backlog) firstRun(name string) *Measurement {
	for _, r := range b.Runs {
		if r.Config == name && r.Round <= 1 {
			return r
		}
	}
	return nil
}

// apply restores the server that applies with a, times the run and
// returns its Measurement; a failure or a timeout is recorded in it.
func (b *benchmark) apply(ctx context.Context, c *cluster, a Apply, bl *Backlog, n int) *Measurement {
	run := &Measurement{Config: a.Name(), Apply: a, Round: n, Load1: loadAverage()[0]}
	srv, snap := c.server(a), c.targetSnap
	if a.Kind == Native {
		snap = c.replicaSnap
	}
	began := time.Now()
	err := snap.restore(ctx, srv)
	if err == nil && b.cfg.Warm {
		err = warm(ctx, srv, b.cfg.Tables, usesApp(b.cfg.Workloads))
	}
	if err == nil {
		// The restore left the copied data directory in the page cache as
		// dirty pages, hundreds of MB that the kernel writes back within
		// 30 s: during the run, whose disk and cores it would share, unless
		// written now.
		syscall.Sync()
	}
	run.RestoreSeconds = round(time.Since(began).Seconds(), 2)
	if err == nil {
		runCtx, cancel := context.WithTimeout(ctx, b.cfg.RunTimeout)
		began = time.Now()
		switch a.Kind {
		case Native:
			err = c.runNative(runCtx, a, bl, run)
		case Paraply:
			err = c.runParaply(runCtx, a, bl, run)
		case Ceiling:
			err = c.runCeiling(runCtx, a, bl, run)
		case MariadbBinlog:
			err = c.runMariadbBinlog(runCtx, bl, run)
		case ParaplyApply:
			err = c.runApply(runCtx, a, bl, run)
		}
		cancel()
		if err != nil {
			run.Seconds = time.Since(began).Seconds()
		}
	}
	if err != nil {
		run.Failed, run.Error = true, err.Error()
		run.Seconds = round(run.Seconds, 1)
		return run
	}
	run.Seconds = round(run.Seconds, 3)
	if run.TPS == 0 && run.Seconds > 0 {
		run.TPS = round(float64(run.Transactions)/run.Seconds, 1)
	}
	return run
}

// runCeiling runs the workload with CeilingClients sysbench clients
// directly against the restored target: the most it commits.
func (c *cluster) runCeiling(ctx context.Context, a Apply, bl *Backlog, run *Measurement) error {
	w := Workload{Name: bl.Workload, Script: bl.Script, Args: bl.Args}
	cpu0 := serverCPU(c.target)
	r, err := sysbenchRun(ctx, c.target, c.work, w, c.cfg.Tables, c.cfg.TableSize, a.Threads, bl.Events)
	if err != nil {
		return err
	}
	run.ServerCPU = round(serverCPU(c.target)-cpu0, 2)
	run.Transactions, run.Seconds, run.TPS = r.Transactions, r.Seconds, round(r.TPS, 1)
	return nil
}

// shouldVerify says whether the run of a just measured is checked with
// `paraply verify`, and notes it.
func (b *benchmark) shouldVerify(a Apply, verified map[Kind]bool) bool {
	switch {
	case a.Kind == Ceiling || b.cfg.Verify == VerifyNone:
		return false
	case b.cfg.Verify == VerifyAll:
		return true
	case verified[a.Kind] || (a.Kind == Paraply && a.Threads == 1):
		return false
	}
	verified[a.Kind] = true
	return true
}

// verify compares the server that applied run with the source.
func (b *benchmark) verify(ctx context.Context, c *cluster, a Apply, run *Measurement, name string) {
	began := time.Now()
	report, err := c.verifyAgainstSource(ctx, c.server(a))
	ok := err == nil
	run.Verified = &ok
	switch {
	case ok:
		b.logf("       verify %s %s: the same as the source (%.1f s)", a.Label(), name, time.Since(began).Seconds())
	case errors.Is(err, errDiffer):
		run.VerifyOutput = report
		b.failures = append(b.failures, fmt.Sprintf("%s %s: paraply verify found a difference", a.Label(), name))
		b.logf("       verify %s %s: DIFFERENT from the source:\n%s", a.Label(), name, report)
	default:
		run.VerifyOutput = err.Error()
		b.failures = append(b.failures, fmt.Sprintf("%s %s: paraply verify failed", a.Label(), name))
		b.logf("       verify %s %s: FAILED: %v", a.Label(), name, err)
	}
}

func (b *benchmark) logf(format string, args ...any) {
	if b.cfg.Progress != nil {
		fmt.Fprintf(b.cfg.Progress, format+"\n", args...)
	}
}

func durabilityName(durable bool) string {
	if durable {
		return "durable"
	}
	return "nondurable"
}

// tail returns at most the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
