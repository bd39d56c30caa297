package handover

import (
	"strings"
	"testing"
)

func TestPosition(t *testing.T) {
	set := func(gs ...string) map[string]bool {
		m := map[string]bool{}
		for _, g := range gs {
			m[g] = true
		}
		return m
	}
	for _, c := range []struct {
		name, position string
		applied        map[string]bool
		want, missing  string
		last           string
	}{
		{"nothing beyond the mark", "0-1-10", set("0-1-9", "0-1-10"), "0-1-10", "", "0-1-10"},
		{"a contiguous run", "0-1-10", set("0-1-11", "0-1-12", "0-1-12/ddl1"), "0-1-12", "", "0-1-12"},
		// Stopped between a CREATE ... SELECT's DDL and its rows.
		{"a half-done CREATE ... SELECT", "0-1-10", set("0-1-11", "0-1-12", "0-1-13/ddl1"), "0-1-12", "0-1-13", "0-1-13"},
		{"a half-done CREATE ... SELECT after a gap", "0-1-10", set("0-1-12", "0-1-14/ddl1"), "0-1-10", "0-1-11", "0-1-14"},
		{"a half-done CREATE ... SELECT in a new domain", "0-1-10", set("3-1-1/ddl1"), "0-1-10", "3-1-1", "0-1-10,3-1-1"},
		{"a gap", "0-1-10", set("0-1-11", "0-1-13", "0-1-14"), "0-1-11", "0-1-12", "0-1-14"},
		{"two domains", "0-1-10,1-2-5", set("1-2-6", "0-1-12"), "0-1-10,1-2-6", "0-1-11", "0-1-12,1-2-6"},
		{"a new domain from 1", "0-1-10", set("2-3-1", "2-3-2"), "0-1-10,2-3-2", "", "0-1-10,2-3-2"},
		{"a new domain with a gap", "0-1-10", set("2-3-2"), "0-1-10", "2-3-1", "0-1-10,2-3-2"},
		{"a server change in a domain", "0-1-10", set("0-7-11", "0-7-12"), "0-7-12", "", "0-7-12"},
		{"no mark", "", set("0-1-1", "0-1-2"), "0-1-2", "", "0-1-2"},
		// Two servers wrote sequence number 6 of one domain (a switch-over
		// that went wrong): the lower server ID is taken first, always.
		{"two servers at one sequence number", "0-1-5", set("0-1-6", "0-2-6"), "0-1-6", "0-1-7", "0-2-6"},
	} {
		// Again and again: the applied GTIDs come from a map, whose walk
		// order changes from one call to the next.
		for range 20 {
			got, err := Position(c.position, c.applied)
			if err != nil || got.Pos != c.want || strings.Join(got.Missing, ",") != c.missing || got.Last != c.last {
				t.Fatalf("%s: Position = %+v, %v; want %q, missing %q, last %q", c.name, got, err, c.want, c.missing, c.last)
			}
		}
	}
}

func TestStart(t *testing.T) {
	for _, c := range []struct {
		name, checkpoint, startGTID, slavePos string
		running                               []string
		want                                  string
		native, fails                         bool
	}{
		{"never a replica", "0-1-10", "", "", nil, "0-1-10", false, false},
		{"native ahead", "0-1-10", "", "0-1-20", nil, "0-1-20", true, false},
		{"paraply ahead", "0-1-30", "", "0-1-20", nil, "0-1-30", false, false},
		{"no checkpoint", "", "", "0-1-20", nil, "0-1-20", true, false},
		{"no checkpoint, --start-gtid the same", "", "0-1-20", "0-1-20", nil, "0-1-20", true, false},
		// A stale gtid_slave_pos, or a --start-gtid that would apply
		// transactions again: the operator decides.
		{"no checkpoint, --start-gtid elsewhere", "", "0-1-4711", "0-1-9000", nil, "", false, true},
		{"no checkpoint, --start-gtid, never a replica", "", "0-1-4711", "", nil, "", false, false},
		{"a checkpoint, --start-gtid is for a first start", "0-1-10", "0-1-5", "0-1-20", nil, "0-1-20", true, false},
		{"native running", "0-1-10", "", "0-1-20", []string{""}, "", false, true},
		{"disagree", "0-1-10,1-1-9", "", "0-1-20,1-1-5", nil, "", false, true},
	} {
		got, native, err := Start(c.checkpoint, c.startGTID, Native{Known: true, Running: c.running, SlavePos: c.slavePos})
		if (err != nil) != c.fails || got != c.want || native != c.native {
			t.Errorf("%s: Start = %q, %t, %v; want %q, %t, error %t", c.name, got, native, err, c.want, c.native, c.fails)
		}
	}
}
