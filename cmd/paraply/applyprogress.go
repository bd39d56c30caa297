package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/status"
)

// applyProgress prints apply's progress on stderr: a line every few
// seconds while it runs, and what it did when it is done.
type applyProgress struct {
	w     io.Writer
	every time.Duration // 0: no lines while running

	// Set by follow, read by summary once follow has returned.
	began   time.Time
	rep     *replicate.Replica
	workers *metrics.Workers
}

// sample is what one progress line compares with the previous one.
type sample struct {
	at      time.Time
	applied int64
	done    int64 // input bytes applied, estimated
}

// follow prints a line every p.every until ctx ends.
func (p *applyProgress) follow(ctx context.Context, rep *replicate.Replica, workers *metrics.Workers) {
	p.began, p.rep, p.workers = time.Now(), rep, workers
	if p.every <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(p.every)
	defer t.Stop()
	prev := sample{at: p.began}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			prev = p.line(prev, now)
		}
	}
}

// applied counts the source transactions the workers committed, exactly
// (the coordinator's statistics are published only now and then).
func (p *applyProgress) applied() int64 {
	var n int64
	for _, w := range p.workers.Snapshot() {
		n += w.Transactions
	}
	return n
}

// line prints one progress line and returns its sample. Reading runs
// ahead of applying (by up to the spool's size), so the input bytes
// applied, which the ETA is computed from, are estimated: those read, less
// the transactions read and not yet applied or skipped, at the average
// size of those read.
func (p *applyProgress) line(prev sample, now time.Time) sample {
	st := p.rep.Status()
	in := st.Receiver
	cur := sample{at: now, applied: p.applied(), done: in.InputRead}
	if pending := in.Transactions - st.Scheduler.Committed - st.Scheduler.Skipped; pending > 0 {
		cur.done -= pending * in.Bytes / in.Transactions
	}
	dt := now.Sub(prev.at).Seconds()
	eta := "-"
	if rate := float64(cur.done-prev.done) / dt; rate > 0 {
		eta = (time.Duration(float64(in.InputBytes-cur.done)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "paraply apply: file %d/%d, %.1f/%.1f MB read, %s applied (%.0f/s), ETA %s\n",
		in.FilesRead, in.Files, float64(in.InputRead)/1e6, float64(in.InputBytes)/1e6,
		status.Plural(cur.applied, "transaction"), float64(cur.applied-prev.applied)/dt, eta)
	return cur
}

// summary says what a finished apply did.
func (p *applyProgress) summary() {
	st := p.rep.Status()
	fmt.Fprintf(p.w, "paraply apply: done in %s: %s applied", time.Since(p.began).Round(time.Millisecond), status.Plural(p.applied(), "transaction"))
	if pos := st.Checkpoint.Position; pos != "" {
		fmt.Fprintf(p.w, "; the target has everything up to GTID position %s", pos)
	}
	fmt.Fprintln(p.w)
}
