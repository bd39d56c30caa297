package replicate

import (
	"context"
	"sync"
	"time"

	"github.com/paraply/paraply/internal/mysqlerr"
	"github.com/paraply/paraply/internal/retry"
	"github.com/paraply/paraply/internal/scheduler"
)

// saver writes the checkpoint's low-water mark in its own goroutine, so
// that the coordinator never waits for the target: a save that blocked the
// coordinator could wait on a worker that waits for a commit turn that only
// the coordinator's next dispatch would free. Saves coalesce: the newest
// mark wins, and the GTIDs to compact accumulate.
type saver struct {
	write func(context.Context, scheduler.Progress) error

	mu      sync.Mutex // guards pending, has and closed
	pending scheduler.Progress
	has     bool
	closed  bool
	wake    chan struct{} // buffered 1
}

func newSaver(write func(context.Context, scheduler.Progress) error) *saver {
	return &saver{write: write, wake: make(chan struct{}, 1)}
}

// save queues p; it never blocks.
func (s *saver) save(p scheduler.Progress) error {
	s.mu.Lock()
	covered := append(s.pending.Covered, p.Covered...)
	s.pending = p
	s.pending.Covered = covered
	s.has = true
	s.mu.Unlock()
	s.signal()
	return nil
}

// close asks run to write what is pending and return.
func (s *saver) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.signal()
}

func (s *saver) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writeRetrying writes p, retrying while the target is unreachable (it
// may be restarting). Once ctx is done, it gives up quietly: the next
// start finds the applied transactions in the checkpoint table anyway. At
// the end of a run (closing, ctx not done) the last write is retried as
// any other, so that the checkpoint says where the run ended.
func (s *saver) writeRetrying(ctx context.Context, p scheduler.Progress) error {
	err := retry.Do(ctx, saveRetry, mysqlerr.Retryable, func() error {
		// Not ctx's cancellation: the last write, at a clean stop, goes on.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return s.write(wctx, p)
	}, nil)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// saveRetry paces checkpoint writes while the target is unreachable.
var saveRetry = retry.Policy{Base: 50 * time.Millisecond, Cap: 2 * time.Second}

// run writes queued marks until close; the last write does not depend on
// ctx, so that a clean stop records everything committed.
func (s *saver) run(ctx context.Context) error {
	for {
		<-s.wake
		s.mu.Lock()
		p, has, closed := s.pending, s.has, s.closed
		s.pending, s.has = scheduler.Progress{}, false
		s.mu.Unlock()
		if has {
			if err := s.writeRetrying(ctx, p); err != nil {
				return err
			}
		}
		if closed {
			return nil
		}
	}
}
