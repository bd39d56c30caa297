package applier

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/paraply/paraply/internal/mysqlerr"
	"github.com/paraply/paraply/internal/retry"
	"github.com/paraply/paraply/internal/stage"
)

// The retry loop of a work, and what a failed attempt is retried as.

// errNotHead is a data error met by work that is not next to commit: what
// it depends on may have been rolled back after it started, so it runs
// again once everything before it has committed, and only an error then is
// real.
var errNotHead = errors.New("data error before the commit turn")

// apply runs work until it commits or fails for good. A failed attempt
// that gave way to earlier work runs again at once, at its turn; any
// other pauses first, from 10ms doubling up to Config.MaxBackoff, on a new
// session if the last one was lost. Work that changes a non-transactional
// table waits for its turn from the first attempt (stage.Txn.WaitsFirst).
func (w *worker) apply(ctx context.Context, work *stage.Work) error {
	turnFirst := work.Txns[0].WaitsFirst()
	b := retry.Policy{Base: 10 * time.Millisecond, Cap: w.p.cfg.MaxBackoff}.Start()
	for {
		tm, err := w.attempt(ctx, work, turnFirst)
		if err == nil {
			w.p.cfg.Observer.Applied(w.id, work, tm)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !retryable(err) {
			return err
		}
		w.retried(work, err)
		switch {
		case errors.Is(err, stage.ErrAborted), errors.Is(err, errNotHead):
			// Let the transactions before this one commit first, or the
			// same locks block them again.
			turnFirst = true
			continue
		case mysqlerr.Classify(err) == mysqlerr.ConnLost:
			w.closeConn()
		}
		if !b.Wait(ctx) {
			return ctx.Err()
		}
	}
}

// retried counts and reports a failed attempt at work that runs again.
func (w *worker) retried(work *stage.Work, err error) {
	work.Retries++
	w.p.cfg.Observer.Retried(w.id, work, err)
	if work.Retries%retryWarnEvery == 0 {
		// Lock waits and deadlocks between workers are the normal cost
		// of applying in parallel; a work that keeps failing is not (a
		// lock held by another session on the target, say).
		w.log.Warn("still retrying", "gtid", work.Txns[0].GTID, "attempt", work.Retries, "err", err)
	} else {
		w.log.Debug("retrying", "gtid", work.Txns[0].GTID, "attempt", work.Retries, "err", err)
	}
}

// retryWarnEvery is how many attempts of one work pass between warnings.
const retryWarnEvery = 10

// abandon rolls back a failed attempt at work and returns the error to
// retry with: a transient one, or errNotHead when work tried before its
// turn (what failed may be an earlier transaction's doing). nil means the
// failure is work's own, for the caller to report.
func (w *worker) abandon(conn *sql.Conn, work *stage.Work, err error, turnFirst bool) error {
	w.rollback(conn)
	w.unblockHead(work, err)
	switch {
	case retryable(err):
		return err
	case w.early(work, turnFirst):
		return fmt.Errorf("%w: %v", errNotHead, err)
	}
	return nil
}

// unblockHead makes later transactions waiting for their commit turn
// retry when work, next to commit, met a lock wait: what holds its locks
// can only be one of them.
func (w *worker) unblockHead(work *stage.Work, err error) {
	if isLockWait(err) && work.First() == w.p.seq.Prefix()+1 && w.p.cfg.PreserveOrder {
		if n := w.p.seq.AbortWaiters(); n > 0 {
			w.log.Info("lock wait at the head of the commit order: later transactions retry", "gtid", work.Txns[0].GTID, "aborted", n)
		}
	}
}

// early reports whether work ran before everything ahead of it committed
// (see errNotHead).
func (w *worker) early(work *stage.Work, afterTurn bool) bool {
	return w.p.cfg.PreserveOrder && !afterTurn && work.First() != w.p.seq.Prefix()+1
}
