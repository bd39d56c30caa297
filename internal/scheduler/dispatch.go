package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/paraply/paraply/internal/stage"
)

// Run dispatches until ctx is done, an error, or the end of the run. in
// brings prepared transactions; work[i] takes work to worker i, done
// brings it back once committed, and the coordinator, the one road of
// commits, records it in the sequencer (which hands out commit turns).
// save is called with each new low-water mark from this goroutine (it may
// block briefly; the last call, made when ctx is done, must not depend on
// ctx); observe, if not nil, receives stats every ProgressEvery.
//
// The end of a run comes with the data: once in is closed and everything
// admitted has committed, Run saves the low-water mark and returns nil.
// Run closes the work channels when it returns, which ends the workers.
func (c *Coordinator) Run(ctx context.Context, in <-chan *stage.Prepared, work []chan *stage.Work, done <-chan *stage.Work,
	save func(Progress) error, observe func(Stats)) error {
	if len(work) != c.cfg.Workers {
		return fmt.Errorf("scheduler: %d work channels for %d workers", len(work), c.cfg.Workers)
	}
	defer func() {
		for _, ch := range work {
			close(ch)
		}
	}()
	l := c.newLoop(work, save)
	defer l.delay.Stop()
	tick := time.NewTicker(c.cfg.ProgressEvery)
	defer tick.Stop()
	if observe != nil {
		observe(c.Stats()) // the limit, and that nothing is pending, from the start
	}
	for {
		if in == nil && c.core.pending() == 0 {
			return l.saveMoved()
		}
		out := l.plan()
		inCh := in // nil once closed, which never selects
		if c.core.full() {
			inCh = nil
		}
		select {
		case <-ctx.Done():
			return l.saveMoved()
		case p, ok := <-inCh:
			if !ok {
				in = nil
				continue
			}
			c.admit(p)
		case out <- l.next:
			l.handedOut()
		case w := <-done:
			l.committed(w)
		case <-l.delay.C:
		case <-tick.C:
			if err := l.tick(observe); err != nil {
				return err
			}
		}
	}
}

// loop is what the cases of Run's select loop share.
type loop struct {
	c    *Coordinator
	work []chan *stage.Work
	save func(Progress) error
	// next is work formed and not yet handed out.
	next *stage.Work
	// idle are the workers without work, the one that committed last on
	// top: under a limit the same few sessions apply, their caches (and
	// the target's, for their threads) warm, instead of all in turn.
	idle []int
	// saved and reached are the low-water mark and the sequencer's prefix
	// last saved.
	saved, reached uint64
	// waitSince and waitKind are the wait being accounted (account).
	waitSince time.Time
	waitKind  waitKind
	// delay wakes the loop when a batch held to fill (holdFor) is due.
	delay *time.Timer
}

func (c *Coordinator) newLoop(work []chan *stage.Work, save func(Progress) error) *loop {
	l := &loop{c: c, work: work, save: save, idle: make([]int, c.cfg.Workers), saved: c.lwm(), reached: c.seq.Prefix(), delay: time.NewTimer(time.Hour)}
	l.delay.Stop()
	for i := range l.idle {
		l.idle[i] = c.cfg.Workers - 1 - i
	}
	return l
}

// plan forms the next work when a worker can take it, accounts the wait
// when none can be handed out, and returns the channel of the worker to
// hand l.next to (nil when none).
func (l *loop) plan() chan<- *stage.Work {
	c := l.c
	holding := false
	// free may be below zero for a while after the limit went down.
	free := c.limit() - (c.cfg.Workers - len(l.idle))
	switch {
	case l.next == nil && free <= 0:
		// Work is formed when a worker can take it, not before: a run
		// formed while the workers are busy would stop at the first
		// transaction that waits for one of them, and be formed again at
		// every arrival.
	case l.next == nil:
		if d := c.holdFor(time.Now()); d > 0 {
			l.delay.Reset(d)
			holding = true
		} else {
			l.next = c.form(free)
		}
	case c.cfg.PreserveOrder && free <= 1 && l.next.First() > c.core.head():
		// The last free worker goes to the head (see form).
		c.core.undo(l.next)
		l.next = c.form(free)
	}
	ready := l.next != nil || free <= 0 && c.canForm(free)
	k := classifyWait(ready, free, holding, c.core.head() != 0, c.core.full())
	if k == waitDep && c.core.headAtBarrier() {
		k = waitBarrier
	}
	c.account(&l.waitSince, &l.waitKind, k)
	if l.next != nil && free > 0 {
		return l.work[l.idle[len(l.idle)-1]]
	}
	return nil
}

// handedOut records that l.next went to the worker on top of idle.
func (l *loop) handedOut() {
	l.c.stats.Assigned += int64(len(l.next.Txns))
	l.c.stats.Works++
	l.idle = l.idle[:len(l.idle)-1]
	l.next = nil
}

// committed records a work its worker committed: first in the sequencer,
// which gives the next commit turn, then in the window.
func (l *loop) committed(w *stage.Work) {
	w.Committed(l.c.seq)
	l.idle = append(l.idle, w.Worker)
	l.c.committed(w.Txns)
}

// saveMoved saves the progress if it moved since the last save.
func (l *loop) saveMoved() error {
	lwm, r := l.c.lwm(), l.c.seq.Prefix()
	if lwm == l.saved && r == l.reached {
		return nil
	}
	if err := l.save(l.c.progress()); err != nil {
		return err
	}
	l.saved, l.reached = lwm, r
	return nil
}

// hold is why the adaptive limit must hold now (Config.Hold), "" if
// nothing says so.
func (c *Coordinator) hold() string {
	if c.cfg.Hold == nil {
		return ""
	}
	return c.cfg.Hold()
}

// tick saves the progress, publishes the statistics and lets --workers
// auto observe its sample.
func (l *loop) tick(observe func(Stats)) error {
	if err := l.saveMoved(); err != nil {
		return err
	}
	c := l.c
	now := time.Now()
	c.flushWait(&l.waitSince, l.waitKind, now)
	if c.adaptive != nil && c.adaptive.observe(now, c.stats.Committed, c.stats.SourceWaitTime, c.hold()) {
		c.cfg.Logger.Debug("concurrency limit", "workers", c.limit(), "why", c.adaptive.reason)
	}
	if observe != nil {
		observe(c.Stats())
	}
	return nil
}
