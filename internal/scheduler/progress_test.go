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

// TestSaveAtSavesAtOnce: with a progress tick far away, the coordinator
// saves as soon as everything admitted has committed at a position SaveAt
// asks for (the end of a run that stops there), and not before.
func TestSaveAtSavesAtOnce(t *testing.T) {
	seq := stage.NewSequencer(0)
	var asked []string
	c := NewCoordinator(Config{Start: "0-1-0", ProgressEvery: time.Hour, BatchTxns: 1,
		SaveAt: func(reached string) bool { asked = append(asked, reached); return reached == "0-1-5" }}, seq)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	in := make(chan *stage.Prepared)
	work := []chan *stage.Work{make(chan *stage.Work)}
	done := make(chan *stage.Work, 1)
	go func() { // one worker that commits at once
		for {
			select {
			case w := <-work[0]:
				for _, tx := range w.Txns {
					seq.Done(tx.Seq, tx.Seq)
				}
				done <- w
			case <-ctx.Done():
				return
			}
		}
	}()
	saves := make(chan Progress, 10)
	errc := make(chan error, 1)
	go func() {
		errc <- c.Run(ctx, in, work, done, func(p Progress) error { saves <- p; return nil }, nil)
	}()
	for i := uint64(1); i <= 5; i++ {
		p := prepared(i, deptrack.Deps{})
		p.Resume = "0-1-" + itoa(i)
		in <- p
	}
	select {
	case p := <-saves:
		if p.RelayIndex != 5 || p.Reached != "0-1-5" {
			t.Errorf("saved %+v, want relay index 5 at 0-1-5", p)
		}
	case <-ctx.Done():
		t.Fatal("nothing was saved before the progress tick")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(asked) == 0 || asked[len(asked)-1] != "0-1-5" {
		t.Errorf("SaveAt was asked about %v, last 0-1-5", asked)
	}
}
