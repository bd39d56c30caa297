package replicate

import (
	"context"
	"database/sql/driver"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/scheduler"
)

// fakeTarget stands in for the checkpoint table behind a saver: it records
// what each write got and answers with the errors queued in fail, one per
// call, then nil. With gate set, each write first waits for a value on it.
type fakeTarget struct {
	gate    chan struct{}
	started chan struct{} // gets a value as each write starts (buffered)

	mu     sync.Mutex
	writes []scheduler.Progress
	fail   []error
	ctxErr []error // the context's state as each write started
}

func newFakeTarget() *fakeTarget {
	return &fakeTarget{started: make(chan struct{}, 100)}
}

func (f *fakeTarget) write(ctx context.Context, p scheduler.Progress) error {
	f.started <- struct{}{}
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, p)
	f.ctxErr = append(f.ctxErr, ctx.Err())
	if len(f.fail) > 0 {
		err := f.fail[0]
		f.fail = f.fail[1:]
		return err
	}
	return nil
}

func (f *fakeTarget) got() []scheduler.Progress {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.writes)
}

// runSaver runs s.run in a goroutine and returns its result channel.
func runSaver(ctx context.Context, s *saver) <-chan error {
	res := make(chan error, 1)
	go func() { res <- s.run(ctx) }()
	return res
}

// result waits for run to return.
func result(t *testing.T, res <-chan error) error {
	t.Helper()
	select {
	case err := <-res:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("saver.run did not return")
		return nil
	}
}

// TestSaverCoalesces: marks saved while a write is in progress are written
// as one, the newest position with the GTIDs to compact of every mark.
func TestSaverCoalesces(t *testing.T) {
	f := newFakeTarget()
	f.gate = make(chan struct{})
	s := newSaver(f.write)
	res := runSaver(t.Context(), s)

	s.save(scheduler.Progress{RelayIndex: 1, Position: "0-1-1", Covered: []string{"0-1-1"}})
	<-f.started // the first write holds mark 1; the next three wait
	s.save(scheduler.Progress{RelayIndex: 2, Position: "0-1-2", Covered: []string{"0-1-2"}})
	s.save(scheduler.Progress{RelayIndex: 3, Position: "0-1-3", Covered: []string{"0-1-3"}})
	s.save(scheduler.Progress{RelayIndex: 4, Position: "0-1-4", Covered: []string{"0-1-4"}, Reached: "0-1-5"})
	f.gate <- struct{}{}
	<-f.started
	f.gate <- struct{}{}
	s.close()
	if err := result(t, res); err != nil {
		t.Fatal(err)
	}

	want := []scheduler.Progress{
		{RelayIndex: 1, Position: "0-1-1", Covered: []string{"0-1-1"}},
		{RelayIndex: 4, Position: "0-1-4", Covered: []string{"0-1-2", "0-1-3", "0-1-4"}, Reached: "0-1-5"},
	}
	got := f.got()
	if len(got) != len(want) {
		t.Fatalf("writes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].RelayIndex != want[i].RelayIndex || got[i].Position != want[i].Position ||
			got[i].Reached != want[i].Reached || !slices.Equal(got[i].Covered, want[i].Covered) {
			t.Errorf("write %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestSaverCloseWritesPending: close makes run write what is pending before
// it returns, even when run's context is already done (a clean stop
// cancels the pipeline first), and with a context of its own.
func TestSaverCloseWritesPending(t *testing.T) {
	f := newFakeTarget()
	s := newSaver(f.write)
	s.save(scheduler.Progress{RelayIndex: 7, Position: "0-1-7", Covered: []string{"0-1-7"}})
	s.close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := result(t, runSaver(ctx, s)); err != nil {
		t.Fatal(err)
	}
	got := f.got()
	if len(got) != 1 || got[0].RelayIndex != 7 || !slices.Equal(got[0].Covered, []string{"0-1-7"}) {
		t.Fatalf("writes after close %+v, want the pending mark 7", got)
	}
	if f.ctxErr[0] != nil {
		t.Errorf("the last write ran with a done context (%v)", f.ctxErr[0])
	}

	// Nothing pending: close ends run without a write.
	f2 := newFakeTarget()
	s2 := newSaver(f2.write)
	res := runSaver(t.Context(), s2)
	s2.close()
	if err := result(t, res); err != nil || len(f2.got()) != 0 {
		t.Errorf("close with nothing pending: %v, writes %+v; want nil and none", err, f2.got())
	}
}

// TestSaverRetries: a write that fails because the target is unreachable
// or deadlocked is tried again with the same mark until it succeeds.
func TestSaverRetries(t *testing.T) {
	f := newFakeTarget()
	f.fail = []error{driver.ErrBadConn, &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}}
	s := newSaver(f.write)
	res := runSaver(t.Context(), s)
	s.save(scheduler.Progress{RelayIndex: 3, Position: "0-1-3", Covered: []string{"0-1-3"}})
	for range 3 {
		<-f.started
	}
	s.close()
	if err := result(t, res); err != nil {
		t.Fatal(err)
	}
	got := f.got()
	if len(got) != 3 {
		t.Fatalf("%d writes, want 3 (two failures, then success): %+v", len(got), got)
	}
	for i, p := range got {
		if p.RelayIndex != 3 || !slices.Equal(p.Covered, []string{"0-1-3"}) {
			t.Errorf("write %d = %+v, want mark 3 again", i, p)
		}
	}
}

// TestSaverStops: an error that does not go away ends run with it; the
// last write at the end of a run (close, run's context alive) is retried
// as any other, so that the checkpoint says where the run ended; a write
// failing with run's context done is given up quietly and run returns at
// close (the next start finds the applied transactions in the checkpoint
// table).
func TestSaverStops(t *testing.T) {
	fatal := &mysql.MySQLError{Number: 1142, Message: "INSERT command denied"}
	f := newFakeTarget()
	f.fail = []error{fatal}
	s := newSaver(f.write)
	res := runSaver(t.Context(), s)
	s.save(scheduler.Progress{RelayIndex: 1})
	if err := result(t, res); !errors.Is(err, fatal) {
		t.Errorf("run after a write returned %v: %v", fatal, err)
	}

	f = newFakeTarget()
	f.fail = []error{driver.ErrBadConn, driver.ErrBadConn}
	s = newSaver(f.write)
	s.save(scheduler.Progress{RelayIndex: 1})
	s.close()
	if err := result(t, runSaver(t.Context(), s)); err != nil || len(f.got()) != 3 {
		t.Errorf("a failing last write at the end of a run: %v after %d writes, want nil after 3 (retried)", err, len(f.got()))
	}

	f = newFakeTarget()
	f.gate = make(chan struct{}, 3)
	f.fail = []error{driver.ErrBadConn, driver.ErrBadConn, driver.ErrBadConn}
	s = newSaver(f.write)
	ctx, cancel := context.WithCancel(t.Context())
	res = runSaver(ctx, s)
	s.save(scheduler.Progress{RelayIndex: 1})
	<-f.started
	cancel() // while the first write is in progress
	for range 3 {
		f.gate <- struct{}{}
	}
	// run gives the mark up and waits for close, which the coordinator
	// calls as it returns.
	s.close()
	if err := result(t, res); err != nil {
		t.Errorf("retrying when run's context ends: %v, want nil", err)
	}
	if n := len(f.got()); n != 1 {
		t.Errorf("%d writes, want 1: no retry once the context ended", n)
	}
}
