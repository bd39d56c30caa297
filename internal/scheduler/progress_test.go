package scheduler

import (
	"testing"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/deptrack"
)

// TestProgressBelowAHeldPrepareKeepsTheStart: a run starts from a
// checkpoint (relay index 10) whose next transaction is an XA PREPARE
// still held; later transactions commit. The low-water mark stays at 10,
// and the position saved with it is the checkpoint's, never empty (it used
// to be "": a restart with a rebuilt relay log then started from the
// source's current position, skipping everything after the checkpoint).
func TestProgressBelowAHeldPrepareKeepsTheStart(t *testing.T) {
	seq := applier.NewSequencer(10)
	c := NewCoordinator(Config{Start: "0-1-10"}, seq)
	held := prepared(11, deptrack.Deps{})
	held.Hold, held.Resume = true, "0-1-11"
	c.admit(held)
	next := prepared(12, deptrack.Deps{})
	next.Resume = "0-1-12"
	c.admit(next)
	seq.Done(12, 12)
	c.committed([]*applier.Txn{next.Txn})

	p := c.progress()
	if p.RelayIndex != 10 || p.Position != "0-1-10" || p.Reached != "0-1-12" {
		t.Fatalf("progress %+v: want relay index 10 at 0-1-10, reached 0-1-12", p)
	}
	if p = c.progress(); p.Position != "0-1-10" {
		t.Fatalf("progress saved again: %+v, want the position kept", p)
	}
}
