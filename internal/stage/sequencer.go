package stage

import (
	"context"
	"errors"
	"sync"
)

// ErrAborted is returned by WaitTurn when the transaction holding the next
// turn is blocked on a lock held by a later transaction still waiting for
// its turn: the later ones roll back and retry, or neither could finish.
var ErrAborted = errors.New("commit turn aborted to unblock an earlier transaction")

// Sequencer hands out commit turns in source order and knows the low-water
// mark: every transaction numbered up to Prefix has committed. Safe for
// concurrent use; mu protects every field.
type Sequencer struct {
	mu      sync.Mutex
	prefix  uint64
	above   map[uint64]uint64 // committed ranges above prefix, start -> end
	waiters map[*waiter]struct{}
	changed chan struct{} // closed and replaced whenever prefix moves
}

type waiter struct {
	start uint64
	ch    chan error // buffered 1
}

// NewSequencer starts with every transaction up to prefix committed.
func NewSequencer(prefix uint64) *Sequencer {
	return &Sequencer{prefix: prefix, above: map[uint64]uint64{}, waiters: map[*waiter]struct{}{}, changed: make(chan struct{})}
}

// Prefix is the low-water mark.
func (s *Sequencer) Prefix() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prefix
}

// Changed returns a channel closed when the prefix next moves.
func (s *Sequencer) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Done records that transactions start..end committed.
func (s *Sequencer) Done(start, end uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if end <= s.prefix {
		return
	}
	s.above[start] = end
	moved := false
	for {
		e, ok := s.above[s.prefix+1]
		if !ok {
			break
		}
		delete(s.above, s.prefix+1)
		s.prefix = e
		moved = true
	}
	if !moved {
		return
	}
	close(s.changed)
	s.changed = make(chan struct{})
	for w := range s.waiters {
		if w.start <= s.prefix+1 {
			w.ch <- nil
			delete(s.waiters, w)
		}
	}
}

// WaitTurn blocks until every transaction before start has committed.
func (s *Sequencer) WaitTurn(ctx context.Context, start uint64) error {
	s.mu.Lock()
	if start <= s.prefix+1 {
		s.mu.Unlock()
		return nil
	}
	w := &waiter{start: start, ch: make(chan error, 1)}
	s.waiters[w] = struct{}{}
	s.mu.Unlock()
	select {
	case err := <-w.ch:
		return err
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.waiters, w)
		s.mu.Unlock()
		return ctx.Err()
	}
}

// AbortWaiters wakes every transaction waiting for its turn with ErrAborted
// and returns how many there were.
func (s *Sequencer) AbortWaiters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.waiters)
	for w := range s.waiters {
		w.ch <- ErrAborted
		delete(s.waiters, w)
	}
	return n
}
