package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// clock is what a Backoff reads of time and chance, so that tests can
// step through a policy without waiting.
type clock interface {
	now() time.Time
	// sleep pauses for d and returns false if ctx ends first.
	sleep(ctx context.Context, d time.Duration) bool
	// jitter returns a random number in [0, n).
	jitter(n int64) int64
}

type realClock struct{}

func (realClock) now() time.Time { return time.Now() }

func (realClock) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (realClock) jitter(n int64) int64 { return rand.Int64N(n) }
