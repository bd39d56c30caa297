package stage

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// waiters waits until n transactions are blocked in WaitTurn on s, so that
// a test acts on registered waiters, not on goroutines still starting.
func waiters(t *testing.T, s *Sequencer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := len(s.waiters)
		s.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions waiting for their turn, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestSequencerPrefixOutOfOrder: ranges committed out of order move the
// prefix only once the gap below them is filled, and then over all of them
// at once; Changed is closed exactly when the prefix moves.
func TestSequencerPrefixOutOfOrder(t *testing.T) {
	s := NewSequencer(10)
	steps := []struct {
		start, end uint64
		prefix     uint64
	}{
		{14, 15, 10}, // above a gap (11..13)
		{12, 13, 10}, // still a gap (11)
		{5, 8, 10},   // at or below the prefix: already counted
		{11, 11, 15}, // fills the gap: the prefix jumps over 12..13 and 14..15
		{17, 20, 15},
		{16, 16, 20},
		{21, 30, 30},
	}
	prev := s.Prefix()
	for _, st := range steps {
		changed := s.Changed()
		s.Done(st.start, st.end)
		if got := s.Prefix(); got != st.prefix {
			t.Fatalf("after Done(%d, %d): prefix %d, want %d", st.start, st.end, got, st.prefix)
		}
		if moved := st.prefix != prev; closed(changed) != moved {
			t.Errorf("after Done(%d, %d): Changed closed = %v, want %v (prefix %d -> %d)", st.start, st.end, closed(changed), moved, prev, st.prefix)
		}
		prev = st.prefix
	}
	if len(s.above) != 0 {
		t.Errorf("ranges left above the prefix: %v", s.above)
	}
}

// TestSequencerRandomOrder cuts 1..n into ranges, commits them in a random
// order, and checks after each that the prefix is the longest committed run
// from 1, as a plain array says.
func TestSequencerRandomOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := uint64(1 + rng.IntN(60))
		type span struct{ start, end uint64 }
		var spans []span
		for start := uint64(1); start <= n; {
			end := min(n, start+uint64(rng.IntN(4)))
			spans = append(spans, span{start, end})
			start = end + 1
		}
		rng.Shuffle(len(spans), func(i, j int) { spans[i], spans[j] = spans[j], spans[i] })
		s := NewSequencer(0)
		committed := make([]bool, n+2)
		for _, sp := range spans {
			s.Done(sp.start, sp.end)
			for i := sp.start; i <= sp.end; i++ {
				committed[i] = true
			}
			want := uint64(0)
			for want+1 <= n && committed[want+1] {
				want++
			}
			if got := s.Prefix(); got != want {
				t.Fatalf("round %d, after Done(%d, %d) of %v: prefix %d, want %d", round, sp.start, sp.end, spans, got, want)
			}
		}
	}
}

// TestSequencerWaitTurn: a transaction whose predecessors have committed
// goes at once; a later one waits until every transaction before it has
// committed, not just some.
func TestSequencerWaitTurn(t *testing.T) {
	ctx := t.Context()
	s := NewSequencer(10)
	for _, start := range []uint64{1, 10, 11} {
		if err := s.WaitTurn(ctx, start); err != nil {
			t.Errorf("WaitTurn(%d) with prefix 10: %v", start, err)
		}
	}

	turn := make(chan error, 1)
	go func() { turn <- s.WaitTurn(ctx, 14) }()
	waiters(t, s, 1)
	s.Done(12, 13) // 11 is still missing
	s.Done(11, 11)
	// The prefix is now 13, so 14's turn has come.
	select {
	case err := <-turn:
		if err != nil {
			t.Errorf("WaitTurn(14) after 11..13 committed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitTurn(14) still waiting after 11..13 committed")
	}

	go func() { turn <- s.WaitTurn(ctx, 16) }()
	waiters(t, s, 1)
	s.Done(15, 15) // 14 is missing: 16 must keep waiting
	select {
	case err := <-turn:
		t.Fatalf("WaitTurn(16) returned %v while 14 had not committed", err)
	case <-time.After(50 * time.Millisecond):
	}
	s.Done(14, 14)
	if err := <-turn; err != nil {
		t.Errorf("WaitTurn(16) after 14 and 15 committed: %v", err)
	}
}

// TestSequencerWaitTurnCancel: a cancelled wait returns the context's error
// and leaves no waiter behind for AbortWaiters to count.
func TestSequencerWaitTurnCancel(t *testing.T) {
	s := NewSequencer(0)
	ctx, cancel := context.WithCancel(t.Context())
	turn := make(chan error, 1)
	go func() { turn <- s.WaitTurn(ctx, 5) }()
	waiters(t, s, 1)
	cancel()
	if err := <-turn; !errors.Is(err, context.Canceled) {
		t.Errorf("WaitTurn after cancel: %v, want context.Canceled", err)
	}
	if n := s.AbortWaiters(); n != 0 {
		t.Errorf("AbortWaiters after the only waiter gave up: %d, want 0", n)
	}
}

// TestSequencerAbortWaiters: every waiter gets ErrAborted, the count is
// returned, and the sequencer keeps working for the retries.
func TestSequencerAbortWaiters(t *testing.T) {
	ctx := t.Context()
	s := NewSequencer(0)
	turns := make(chan error, 3)
	for _, start := range []uint64{3, 4, 9} {
		go func() { turns <- s.WaitTurn(ctx, start) }()
	}
	waiters(t, s, 3)
	if n := s.AbortWaiters(); n != 3 {
		t.Errorf("AbortWaiters = %d, want 3", n)
	}
	for range 3 {
		if err := <-turns; !errors.Is(err, ErrAborted) {
			t.Errorf("an aborted WaitTurn returned %v, want ErrAborted", err)
		}
	}
	if n := s.AbortWaiters(); n != 0 {
		t.Errorf("second AbortWaiters = %d, want 0", n)
	}

	// A retry waits again and gets its turn normally.
	go func() { turns <- s.WaitTurn(ctx, 3) }()
	waiters(t, s, 1)
	s.Done(1, 2)
	if err := <-turns; err != nil {
		t.Errorf("WaitTurn(3) after an abort and 1..2 committed: %v", err)
	}
}

// TestSequencerCommitOrder runs one goroutine per transaction, started in
// a random order; each waits for its turn, appends its number to a slice
// shared without a lock, and reports itself done. The slice must come out
// in order, and under -race an append not ordered by the sequencer after
// the previous one is a reported data race.
func TestSequencerCommitOrder(t *testing.T) {
	const n = 200
	ctx := t.Context()
	s := NewSequencer(0)
	var order []uint64 // written only by the transaction whose turn it is
	errs := make(chan error, n)
	for _, i := range rand.Perm(n) {
		txn := uint64(i + 1)
		go func() {
			if err := s.WaitTurn(ctx, txn); err != nil {
				errs <- err
				return
			}
			order = append(order, txn)
			s.Done(txn, txn)
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(order) != n {
		t.Fatalf("%d transactions recorded, want %d", len(order), n)
	}
	for i, txn := range order {
		if txn != uint64(i+1) {
			t.Fatalf("commit order %v: position %d holds %d", order, i, txn)
		}
	}
	if s.Prefix() != n {
		t.Errorf("prefix %d, want %d", s.Prefix(), n)
	}
}
