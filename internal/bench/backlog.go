package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// buildBacklog restores the source to the initial load and runs the
// workload on it with clients sysbench threads and K events. Nothing
// replicates meanwhile: the replica's threads are stopped and paraply is
// not running. The binary log is rotated before and after, so the files in
// between hold exactly the backlog. Then the source settles (see settle)
// before any run.
func (c *cluster) buildBacklog(ctx context.Context, w Workload, clients int) (*Backlog, error) {
	b := &Backlog{
		Workload: w.Name, Script: w.Script, Args: w.Args, Clients: clients,
		Durable: c.durable, Events: c.cfg.EventsOf(w.Name),
	}
	if err := c.sourceSnap.restore(ctx, c.source); err != nil {
		return b, err
	}
	var err error
	if b.Before, err = queryString(ctx, c.source, "SELECT @@gtid_binlog_pos"); err != nil {
		return b, err
	}
	before, err := rotate(ctx, c.source)
	if err != nil {
		return b, err
	}
	runCtx, cancel := context.WithTimeout(ctx, c.cfg.RunTimeout)
	r, err := sysbenchRun(runCtx, c.source, c.work, w, c.cfg.Tables, c.cfg.TableSize, clients, b.Events)
	cancel()
	if err != nil {
		return b, err
	}
	b.BuildSeconds, b.SourceTPS = round(r.Seconds, 2), round(r.TPS, 1)
	after, err := rotate(ctx, c.source)
	if err != nil {
		return b, err
	}
	if b.After, err = queryString(ctx, c.source, "SELECT @@gtid_binlog_pos"); err != nil {
		return b, err
	}
	p0, err := parsePosition(b.Before)
	if err != nil {
		return b, err
	}
	p1, err := parsePosition(b.After)
	if err != nil {
		return b, err
	}
	if b.Transactions = p1.since(p0); b.Transactions <= 0 {
		return b, fmt.Errorf("the source's position did not move (%s to %s)", b.Before, b.After)
	}
	// The newest file before the run received it, and so did every file
	// created during it; the newest file after it is empty.
	files := []string{before[len(before)-1]}
	for _, f := range after[:len(after)-1] {
		if !slices.Contains(before, f) {
			files = append(files, f)
		}
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return b, err
		}
		b.BinlogFiles = append(b.BinlogFiles, filepath.Base(f))
		b.BinlogBytes += fi.Size()
	}
	b.files = files
	waited, left, err := settle(ctx, c.source)
	if err != nil {
		return b, fmt.Errorf("settling the source after the build: %w", err)
	}
	b.SettleSeconds, b.Unsettled = round(waited.Seconds(), 2), left
	if err := c.predict(ctx, b, files); err != nil {
		b.PredictError = err.Error()
	}
	return b, nil
}

// predict runs `paraply analyze --json` on the backlog's binlog files with
// the target's schema, once for each batch size of the paraply runs, and
// keeps the simulated speedups.
func (c *cluster) predict(ctx context.Context, b *Backlog, files []string) error {
	if !c.target.Running() {
		if err := c.targetSnap.restore(ctx, c.target); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RunTimeout)
	defer cancel()
	var batches []int
	for _, a := range c.cfg.Applies {
		if a.Kind == Paraply && !slices.Contains(batches, a.Batch) {
			batches = append(batches, a.Batch)
		}
	}
	slices.Sort(batches)
	b.Predictions = nil
	began := time.Now()
	for _, batch := range batches {
		p, err := c.analyze(ctx, b, files, batch)
		if err != nil {
			return err
		}
		b.Predictions = append(b.Predictions, p)
	}
	b.AnalyzeSeconds = round(time.Since(began).Seconds(), 2)
	return nil
}

// analyze runs `paraply analyze --json` simulating batches of up to batch
// transactions.
func (c *cluster) analyze(ctx context.Context, b *Backlog, files []string, batch int) (Prediction, error) {
	// The target shares this machine's cores with paraply.
	args := append([]string{"analyze", "--json", "--target-cores", strconv.Itoa(runtime.NumCPU()), "--batch-max-txns", strconv.Itoa(max(1, batch)),
		"--schema", c.target.URL()}, files...)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.cfg.Paraply, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Prediction{}, fmt.Errorf("paraply analyze: %w\n%s", err, tail(stderr.String(), 10))
	}
	var rep struct {
		Transactions int64 `json:"transactions"`
		Modes        map[string]struct {
			Speedup          map[string]float64 `json:"speedup"`
			UnorderedSpeedup map[string]float64 `json:"unordered_speedup"`
		} `json:"modes"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return Prediction{}, fmt.Errorf("paraply analyze: reading its JSON: %w", err)
	}
	if rep.Transactions != b.Transactions {
		return Prediction{}, fmt.Errorf("paraply analyze read %d transactions, the backlog has %d", rep.Transactions, b.Transactions)
	}
	p := Prediction{Batch: batch, Ordered: map[string]map[string]float64{}, Unordered: map[string]map[string]float64{}}
	for mode, mr := range rep.Modes {
		p.Ordered[mode], p.Unordered[mode] = mr.Speedup, mr.UnorderedSpeedup
	}
	return p, nil
}
