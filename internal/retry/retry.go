// Package retry paces the loops that try something again after an error:
// a reconnecting stream, a transaction rolled back by a deadlock, a
// checkpoint write while the target restarts. How long to pause and when
// to give up is a Policy, plain data each loop states where it runs; what
// is worth trying again is the caller's to say (see package mysqlerr).
//
// A loop that only calls a function again uses Do; one that does more
// between attempts (closes a session, resumes from a new position) holds
// a Backoff:
//
//	b := policy.Start()
//	for {
//		err := attempt()
//		...
//		if !b.Wait(ctx) {
//			return ctx.Err()
//		}
//	}
package retry

import (
	"context"
	"time"
)

// Policy is how a retry loop paces its attempts. The zero Policy retries
// at once, forever.
type Policy struct {
	// Base is the first pause; each pause after it is twice the one
	// before, up to Cap.
	Base time.Duration
	// Cap bounds the pause; a Cap below Base makes every pause Base.
	Cap time.Duration
	// Jitter lengthens each pause by a random fraction of it, up to
	// Jitter (0.25: up to a quarter more), so that clients that failed
	// together do not come back together. Doubling starts from the pause
	// without it.
	Jitter float64
	// Tries gives up after this many attempts (0: no limit).
	Tries int
	// Within gives up rather than pause past this long after Start or
	// Reset (0: no limit).
	Within time.Duration
}

// Backoff is one run of a Policy: the pauses of one loop. Not safe for
// concurrent use.
type Backoff struct {
	p     Policy
	clock clock
	start time.Time
	next  time.Duration // the next pause, before jitter
	tries int           // attempts made: pauses handed out, plus one
}

// Start begins a run of p, before the first attempt.
func (p Policy) Start() *Backoff { return p.start(realClock{}) }

func (p Policy) start(c clock) *Backoff {
	b := &Backoff{p: p, clock: c}
	b.Reset()
	return b
}

// Reset starts the pauses again from Base, and the give-up limits from
// now: for a loop that made progress since its last failure.
func (b *Backoff) Reset() {
	b.start, b.next, b.tries = b.clock.now(), b.p.Base, 1
}

// Next returns the pause before the next attempt, or false if the policy
// gives up instead.
func (b *Backoff) Next() (time.Duration, bool) {
	if b.p.Tries > 0 && b.tries >= b.p.Tries {
		return 0, false
	}
	d := b.next
	if b.p.Jitter > 0 {
		d += time.Duration(b.clock.jitter(int64(float64(d)*b.p.Jitter) + 1))
	}
	if b.p.Within > 0 && b.clock.now().Add(d).After(b.start.Add(b.p.Within)) {
		return 0, false
	}
	b.next = max(min(2*b.next, b.p.Cap), b.p.Base)
	b.tries++
	return d, true
}

// Wait pauses before the next attempt. It returns false, at once, if the
// policy gives up, or when ctx ends first.
func (b *Backoff) Wait(ctx context.Context) bool {
	d, ok := b.Next()
	return ok && b.clock.sleep(ctx, d)
}

// Do calls fn until it succeeds, fails with an error retryable rejects, or
// ctx ends, pausing between attempts as p says, and returns fn's last
// error (nil once it succeeds); ctx's error if ctx ended during a pause.
// When p gives up, the last error is returned. onRetry, if not nil, is
// told of each error about to be retried and the pause before the next
// attempt (to log it).
func Do(ctx context.Context, p Policy, retryable func(error) bool, fn func() error, onRetry func(err error, pause time.Duration)) error {
	return p.Start().do(ctx, retryable, fn, onRetry)
}

func (b *Backoff) do(ctx context.Context, retryable func(error) bool, fn func() error, onRetry func(error, time.Duration)) error {
	for {
		err := fn()
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
		d, ok := b.Next()
		if !ok {
			return err
		}
		if onRetry != nil {
			onRetry(err, d)
		}
		if !b.clock.sleep(ctx, d) {
			return ctx.Err()
		}
	}
}

// Sleep pauses for d, and returns false if ctx ends first.
func Sleep(ctx context.Context, d time.Duration) bool { return realClock{}.sleep(ctx, d) }
