package faults

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// SysbenchLoad runs sysbench oltp_write_only against a source in rounds
// until stopped. A round that fails (the source restarted under it) is
// followed by another one after a short pause: the soak compares the
// tables with verify, so sysbench's own accounting does not matter.
type SysbenchLoad struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	rounds atomic.Int64
	failed atomic.Int64

	mu      sync.Mutex // guards lastErr
	lastErr string
}

// StartSysbench starts the loop on src's sbtest database (prepared with
// tables tables of size rows) with threads client threads at most rate
// transactions per second (0: unbounded).
func StartSysbench(src *sandbox.Server, tables, size, threads, rate int) *SysbenchLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &SysbenchLoad{cancel: cancel}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for ctx.Err() == nil {
			// The process is ours and is ended by its PID when ctx is
			// cancelled (exec.CommandContext).
			cmd := src.Sysbench(ctx, "oltp_write_only",
				"--tables="+strconv.Itoa(tables), "--table-size="+strconv.Itoa(size),
				"--threads="+strconv.Itoa(threads), "--rate="+strconv.Itoa(rate),
				"--time=20", "--events=0", "--report-interval=0", "run")
			out, err := cmd.CombinedOutput()
			l.rounds.Add(1)
			if err != nil && ctx.Err() == nil {
				l.failed.Add(1)
				l.mu.Lock()
				l.lastErr = fmt.Sprintf("%v: %s", err, lastLines(string(out), 5))
				l.mu.Unlock()
				select {
				case <-time.After(300 * time.Millisecond):
				case <-ctx.Done():
				}
			}
		}
	}()
	return l
}

// Stop ends the current round and waits for it.
func (l *SysbenchLoad) Stop() {
	l.cancel()
	l.wg.Wait()
}

// Rounds returns how many rounds ran and how many of them failed.
func (l *SysbenchLoad) Rounds() (rounds, failed int64) { return l.rounds.Load(), l.failed.Load() }

// LastError is the end of the output of the last round that failed.
func (l *SysbenchLoad) LastError() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}
