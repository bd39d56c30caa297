package deptrack

import "testing"

// TestWaitsForMarked: On and a Wait reaching into the run find a marked
// transaction; waits before the run, or on unmarked ones, do not.
func TestWaitsForMarked(t *testing.T) {
	marked := []bool{false, true, false} // run 10, 11, 12: 11 marked
	for _, c := range []struct {
		d    Deps
		want bool
	}{
		{Deps{}, false},
		{Deps{Wait: 9, On: []uint64{5}}, false},
		{Deps{Wait: 10}, false},
		{Deps{Wait: 11}, true},
		{Deps{Wait: 12}, true},
		{Deps{On: []uint64{10, 12}}, false},
		{Deps{On: []uint64{3, 11}}, true},
		{Deps{On: []uint64{13}}, false},
	} {
		if got := c.d.WaitsForMarked(10, marked); got != c.want {
			t.Errorf("%+v: %v, want %v", c.d, got, c.want)
		}
	}
}
