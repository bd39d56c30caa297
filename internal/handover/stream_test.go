package handover

import (
	"slices"
	"testing"
)

// TestStreams: a named stream sees only its connection and its domains of
// gtid_slave_pos, and hands over only its own domains; the default
// stream sees everything, as before streams.
func TestStreams(t *testing.T) {
	n := Native{Known: true, Running: []string{"", "us"}, SlavePos: "1-11-40,2-12-7,0-1-3"}
	if got := n.ForStream("default", []uint32{1}); !slices.Equal(got.Running, n.Running) || got.SlavePos != n.SlavePos {
		t.Errorf("default stream: %+v, want all of %+v", got, n)
	}
	if got := n.ForStream("eu", []uint32{1}); len(got.Running) != 0 || got.SlavePos != "1-11-40" || !got.Known {
		t.Errorf("stream eu (domain 1, its connection stopped): %+v", got)
	}
	if got := n.ForStream("us", []uint32{2}); !slices.Equal(got.Running, []string{"us"}) || got.SlavePos != "2-12-7" {
		t.Errorf("stream us (domain 2, its connection running): %+v", got)
	}
	if got := n.ForStream("us", []uint32{}); got.SlavePos != "" {
		t.Errorf("a stream whose source has no domain yet: gtid_slave_pos %q, want none of it", got.SlavePos)
	}
	if got := Domains("1-11-40, 2-12-7,1-12-41"); !slices.Equal(got, []uint32{1, 2}) {
		t.Errorf("Domains = %v", got)
	}
	if got := Merge("1-11-40,2-12-7", "2-12-9"); got != "1-11-40,2-12-9" {
		t.Errorf("Merge = %q, want domain 2 replaced and domain 1 kept", got)
	}
	if got := Merge("", "2-12-9"); got != "2-12-9" {
		t.Errorf("Merge into an empty gtid_slave_pos = %q", got)
	}
}
