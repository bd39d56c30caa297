package scheduler

import "testing"

// TestConcurrencyHoldsWhileKeepingUpBusy is issue 31's replica: keeping up
// at 700 tps with its allowed workers busy most of the time (batching,
// commit order), so the coordinator waits for the source only 2-25% of
// each sample, now and then not at all in one 250 ms sample. The README
// says nothing moves while paraply keeps up; judged by a quarter of the
// time waiting, the limit probed from 1 to 4 workers in 30 s.
func TestConcurrencyHoldsWhileKeepingUpBusy(t *testing.T) {
	c := newConcurrency(4, 16)
	tg := newTarget(c)
	// The share of each sample waiting for the source: mostly a few
	// percent, and now and then none at all for up to three samples
	// (0.75 s) in a row.
	waits := []float64{0.05, 0.03, 0, 0.12, 0.025, 0, 0, 0, 0.02}
	var limits []int
	for i := range 200 {
		limits = append(limits, tg.run(1, waits[i%len(waits)], peaked(16))...)
	}
	for _, l := range limits {
		if l != 4 {
			t.Fatalf("keeping up (waiting for the source 0-12%% of each sample), the limit moved: %v", limits)
		}
	}
}

// TestConcurrencyProbesOnceBehind: the same replica falling behind (no
// wait for the source: a backlog) probes again and finds the best limit.
func TestConcurrencyProbesOnceBehind(t *testing.T) {
	c := newConcurrency(4, 16)
	tg := newTarget(c)
	tg.run(20, 0.05, peaked(8))
	if c.ladder[c.at] != 4 {
		t.Fatalf("keeping up: limit %d, want 4", c.ladder[c.at])
	}
	limits := tg.run(60, 0, peaked(8))
	if last := limits[len(limits)-1]; last != 8 && c.ladder[c.at] != 8 {
		t.Errorf("behind: settled at %d, want 8; limits %v", c.ladder[c.at], limits)
	}
}

// TestConcurrencyKeepUpThreshold pins the threshold: 1% of a sample
// waiting for the source is no backlog, 0.5% is (below the threshold,
// backlogSamples in a row start a probe).
func TestConcurrencyKeepUpThreshold(t *testing.T) {
	for _, tc := range []struct {
		wait  float64
		moves bool
	}{{0.011, false}, {0.005, true}, {0, true}} {
		c := newConcurrency(4, 16)
		tg := newTarget(c)
		moved := false
		for _, l := range tg.run(10, tc.wait, peaked(8)) {
			moved = moved || l != 4
		}
		if moved != tc.moves {
			t.Errorf("waiting %.1f%% of each sample for the source: moved %v, want %v", 100*tc.wait, moved, tc.moves)
		}
	}
}
