package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

// TestProgressBelowAHeldPrepareKeepsTheStart: a run starts from a
// checkpoint (relay index 10) whose next transaction is an XA PREPARE
// still held; later transactions commit. The low-water mark stays at 10,
// and the position saved with it is the checkpoint's, never empty (it used
// to be "": a restart with a rebuilt relay log then started from the
// source's current position, skipping everything after the checkpoint).
func TestProgressBelowAHeldPrepareKeepsTheStart(t *testing.T) {
	seq := stage.NewSequencer(10)
	c := NewCoordinator(Config{Start: "0-1-10"}, seq)
	held := prepared(11, deptrack.Deps{})
	held.Hold, held.Resume = true, "0-1-11"
	c.admit(held)
	next := prepared(12, deptrack.Deps{})
	next.Resume = "0-1-12"
	c.admit(next)
	seq.Done(12, 12)
	c.committed([]*stage.Txn{next.Txn})

	p := c.progress()
	if p.RelayIndex != 10 || p.Position != "0-1-10" || p.Reached != "0-1-12" {
		t.Fatalf("progress %+v: want relay index 10 at 0-1-10, reached 0-1-12", p)
	}
	if p = c.progress(); p.Position != "0-1-10" {
		t.Fatalf("progress saved again: %+v, want the position kept", p)
	}
}

// TestEndOfInputSavesAndReturns: with a progress tick far away, closing
// the coordinator's input (the end of a run: the preparer reached its stop
// position) makes it wait for everything admitted to commit, save once,
// close the work channels and return nil, before the tick.
func TestEndOfInputSavesAndReturns(t *testing.T) {
	seq := stage.NewSequencer(0)
	c := NewCoordinator(Config{Start: "0-1-0", ProgressEvery: time.Hour, BatchTxns: 1}, seq)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	in := make(chan *stage.Prepared)
	work := []chan *stage.Work{make(chan *stage.Work)}
	done := make(chan *stage.Work, 1)
	workerEnded := make(chan struct{})
	go func() { // one worker that commits at once, until its channel closes
		defer close(workerEnded)
		for w := range work[0] {
			done <- w
		}
	}()
	var saves []Progress
	errc := make(chan error, 1)
	go func() {
		errc <- c.Run(ctx, in, work, done, func(p Progress) error { saves = append(saves, p); return nil }, nil)
	}()
	for i := uint64(1); i <= 5; i++ {
		p := prepared(i, deptrack.Deps{})
		p.Resume = "0-1-" + itoa(i)
		in <- p
	}
	close(in)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the coordinator did not return after its input closed")
	}
	<-workerEnded
	if len(saves) != 1 || saves[0].RelayIndex != 5 || saves[0].Reached != "0-1-5" || seq.Prefix() != 5 {
		t.Errorf("saved %+v (sequencer at %d), want one save at relay index 5, 0-1-5", saves, seq.Prefix())
	}
}

// TestProgressSaysHowFarBehind: the progress saved carries the source
// commit time of the oldest transaction admitted and not yet committed,
// and none once everything has committed.
func TestProgressSaysHowFarBehind(t *testing.T) {
	seq := stage.NewSequencer(0)
	c := NewCoordinator(Config{Start: "0-1-0"}, seq)
	var ps []*stage.Prepared
	for i := uint64(1); i <= 3; i++ {
		p := prepared(i, deptrack.Deps{})
		p.Resume, p.Txn.Txn.Timestamp = "0-1-"+itoa(i), int64(1000*i)
		c.admit(p)
		ps = append(ps, p)
	}
	seq.Done(1, 1)
	c.committed([]*stage.Txn{ps[0].Txn})
	if p := c.progress(); p.OldestPending != 2000 {
		t.Fatalf("with 2 and 3 waiting: oldest pending %d, want 2000 (transaction 2's commit time)", p.OldestPending)
	}
	seq.Done(2, 3)
	c.committed([]*stage.Txn{ps[1].Txn, ps[2].Txn})
	if p := c.progress(); p.OldestPending != 0 {
		t.Fatalf("with nothing waiting: oldest pending %d, want 0", p.OldestPending)
	}
}
