package retry

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// fakeClock moves only when a Backoff sleeps, and records each pause;
// its jitter is the largest allowed, or with least none.
type fakeClock struct {
	t      time.Time
	pauses []time.Duration
	// least makes jitter return 0 instead of its largest value.
	least bool
}

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	c.pauses = append(c.pauses, d)
	c.t = c.t.Add(d)
	return true
}

func (c *fakeClock) jitter(n int64) int64 {
	if c.least {
		return 0
	}
	return n - 1
}

const ms = time.Millisecond

// pauses runs n waits of p on a fake clock and returns the pauses taken
// before p gave up.
func pauses(p Policy, c *fakeClock, n int) []time.Duration {
	b := p.start(c)
	for range n {
		if !b.Wait(context.Background()) {
			break
		}
	}
	return c.pauses
}

// TestPauses: each pause doubles the one before, from Base up to Cap,
// and jitter adds up to its fraction of the pause without compounding.
func TestPauses(t *testing.T) {
	for _, c := range []struct {
		name  string
		p     Policy
		least bool
		want  []time.Duration
	}{
		{"doubling up to the cap", Policy{Base: 10 * ms, Cap: 70 * ms}, false, []time.Duration{10 * ms, 20 * ms, 40 * ms, 70 * ms, 70 * ms}},
		{"a cap below the base: a fixed pause", Policy{Base: 200 * ms}, false, []time.Duration{200 * ms, 200 * ms, 200 * ms, 200 * ms, 200 * ms}},
		{"the zero policy: no pause", Policy{}, false, []time.Duration{0, 0, 0, 0, 0}},
		{"the largest jitter", Policy{Base: 100 * ms, Cap: 30 * time.Second, Jitter: 0.25}, false,
			[]time.Duration{125 * ms, 250 * ms, 500 * ms, 1000 * ms, 2000 * ms}},
		{"the least jitter", Policy{Base: 100 * ms, Cap: 30 * time.Second, Jitter: 0.25}, true,
			[]time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms}},
	} {
		if got := pauses(c.p, &fakeClock{least: c.least}, 5); !slices.Equal(got, c.want) {
			t.Errorf("%s: pauses %v, want %v", c.name, got, c.want)
		}
	}
}

// TestGiveUp: a policy gives up after Tries attempts, or rather than
// pause past Within; Reset counts both again from then, and the pauses
// from Base.
func TestGiveUp(t *testing.T) {
	c := &fakeClock{}
	if got := pauses(Policy{Base: ms, Cap: time.Second, Tries: 3}, c, 10); len(got) != 2 {
		t.Errorf("Tries 3: %d pauses %v, want 2 (three attempts)", len(got), got)
	}
	c = &fakeClock{}
	// 200+400+800 = 1.4s; the next pause, 1.6s, would end at 3s.
	if got := pauses(Policy{Base: 200 * ms, Cap: 10 * time.Second, Within: 2 * time.Second}, c, 10); !slices.Equal(got, []time.Duration{200 * ms, 400 * ms, 800 * ms}) {
		t.Errorf("Within 2s: pauses %v, want 200ms 400ms 800ms", got)
	}

	c = &fakeClock{}
	b := Policy{Base: 10 * ms, Cap: time.Second, Tries: 3, Within: 100 * ms}.start(c)
	for range 2 {
		b.Wait(context.Background())
	}
	if b.Wait(context.Background()) {
		t.Fatal("a third pause after three attempts")
	}
	b.Reset()
	if d, ok := b.Next(); !ok || d != 10*ms {
		t.Errorf("after Reset: %v %v, want 10ms", d, ok)
	}
}

// TestWaitEndsWithContext: a wait whose context ended does not pause.
func TestWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if (Policy{Base: time.Hour}).Start().Wait(ctx) {
		t.Error("Wait returned true with its context done")
	}
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep returned true with its context done")
	}
}

var (
	errBusy = errors.New("busy")
	errBad  = errors.New("bad")
)

func busy(err error) bool { return errors.Is(err, errBusy) }

// TestDo: Do calls again after an error it is told to retry, pausing as
// the policy says and telling onRetry; it returns at once on success or
// another error, and the last error when the policy gives up.
func TestDo(t *testing.T) {
	p := Policy{Base: 50 * ms, Cap: 2 * time.Second}
	results := func(errs ...error) func() error {
		return func() error {
			err := errs[0]
			errs = errs[1:]
			return err
		}
	}
	run := func(p Policy, fn func() error) ([]time.Duration, []time.Duration, error) {
		c := &fakeClock{}
		var told []time.Duration
		err := p.start(c).do(context.Background(), busy, fn, func(err error, d time.Duration) {
			if !busy(err) {
				t.Errorf("onRetry told of %v", err)
			}
			told = append(told, d)
		})
		return c.pauses, told, err
	}

	slept, told, err := run(p, results(errBusy, errBusy, nil))
	if err != nil || !slices.Equal(slept, []time.Duration{50 * ms, 100 * ms}) || !slices.Equal(told, slept) {
		t.Errorf("busy, busy, ok: %v after pauses %v (onRetry told %v), want nil after 50ms 100ms", err, slept, told)
	}
	slept, _, err = run(p, results(errBusy, errBad, nil))
	if !errors.Is(err, errBad) || len(slept) != 1 {
		t.Errorf("busy, bad: %v after %d pauses, want bad after 1", err, len(slept))
	}
	p.Tries = 2
	slept, _, err = run(p, results(errBusy, errBusy, nil))
	if !errors.Is(err, errBusy) || len(slept) != 1 {
		t.Errorf("Tries 2, busy, busy: %v after %d pauses, want busy after 1", err, len(slept))
	}

	// A context that ends: fn's error if it ended before the pause,
	// ctx's if during it.
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err = Do(ctx, Policy{Base: time.Hour}, busy, func() error { calls++; cancel(); return errBusy }, nil)
	if !errors.Is(err, errBusy) || calls != 1 {
		t.Errorf("ctx ended in fn: %v after %d calls, want busy after 1", err, calls)
	}
	ctx, cancel = context.WithCancel(context.Background())
	err = Do(ctx, Policy{Base: ms}, busy, func() error { return errBusy }, func(error, time.Duration) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ctx ended before the pause: %v, want context.Canceled", err)
	}
}
