package replicate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/paraply/paraply/internal/config"
)

// Connection says whether paraply reaches a server, since when, and the
// last error it met trying. The workers and the checkpoint retry on their
// own while the target is away; this is what says so, in the status, the
// metrics and the diagnosis, instead of the log alone.
type Connection struct {
	// Connected: the server answered the last attempt.
	Connected bool
	// Since is when Connected last changed (the first answer or failure
	// included); zero until the first attempt ended: not known yet.
	Since time.Time
	// LastError is the last failure, without the password; LastErrorTime
	// when it happened (zero: none since the start).
	LastError     string
	LastErrorTime time.Time
	// DownTime is how long, in all, the server did not answer since the
	// first attempt, an outage in progress included: status takes the
	// difference between two snapshots as the workers' time spent waiting
	// for it.
	DownTime time.Duration
}

// Known reports whether an attempt has ended yet.
func (c Connection) Known() bool { return !c.Since.IsZero() }

// connWatch tracks a Connection from the outcomes of attempts to reach a
// server. It is safe for concurrent use; mu guards the fields.
type connWatch struct {
	mu     sync.Mutex
	c      Connection
	down   time.Duration // DownTime up to the start of the outage in progress
	secret string        // the password, never shown
}

// answered records an attempt that ended at now with err (nil: the
// server answered).
func (w *connWatch) answered(now time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	up := err == nil
	if !w.c.Known() || w.c.Connected != up {
		if w.c.Known() && !w.c.Connected {
			w.down += now.Sub(w.c.Since)
		}
		w.c.Connected, w.c.Since = up, now
	}
	if err != nil {
		w.c.LastError, w.c.LastErrorTime = scrub(err.Error(), w.secret), now
	}
}

// state is the Connection at now.
func (w *connWatch) state(now time.Time) Connection {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.c
	c.DownTime = w.down
	if c.Known() && !c.Connected {
		c.DownTime += max(0, now.Sub(c.Since))
	}
	return c
}

// scrub removes secret from msg: a driver's error should not hold the
// password, and if one ever does, the status must not show it.
func scrub(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "****")
}

const (
	// targetProbeEvery is how often the target is asked whether it
	// answers: status shows an outage within a second or two of it.
	targetProbeEvery = time.Second
	// targetProbeWait is how long the target may take to answer before
	// it counts as not answering (a network cut answers nothing).
	targetProbeWait = 2 * time.Second
)

// holdWorkers says why --workers auto must not move its limit now (see
// scheduler.Config.Hold): the target does not answer, so nothing applied
// says anything of the limit.
func (r *Replica) holdWorkers() string {
	if c := r.target.state(time.Now()); c.Known() && !c.Connected {
		return "the target does not answer"
	}
	return ""
}

// watchTarget watches the target from the start of Run (a target that
// does not answer at the start shows as such too) until the returned stop,
// which waits for the watch to end.
func (r *Replica) watchTarget(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pingTarget(ctx, r.cfg.Target.WithTLS(r.cfg.TargetTLS), r.target, r.redo)
	}()
	return func() { cancel(); <-done }
}

// pingTarget pings the target every targetProbeEvery on a connection of
// its own until ctx is done, recording the outcomes in w, and after each
// answer reads its redo log into redo. A connection of its own: the
// workers' pool, busy applying, must not make the target look down, nor
// an idle source make an outage go unseen (no worker then asks the target
// anything).
func pingTarget(ctx context.Context, ep config.Endpoint, w *connWatch, redo *redoWatch) {
	db, err := ep.Open(nil)
	if err != nil {
		w.answered(time.Now(), err)
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tick := time.NewTicker(targetProbeEvery)
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, targetProbeWait)
		err := db.PingContext(pctx)
		if errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = errNoAnswer
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		w.answered(time.Now(), err)
		if err == nil {
			// After the ping, on a clock of its own: whether the target
			// answers is the ping's to say, and a target that cannot
			// report its redo log (MySQL) answers all the same.
			rctx, cancel := context.WithTimeout(ctx, targetProbeWait)
			_ = readRedo(rctx, db, redo)
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// errNoAnswer is a probe the target did not answer in time.
var errNoAnswer = fmt.Errorf("no answer within %s", targetProbeWait)
