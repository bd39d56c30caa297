package source

import (
	"strings"
	"testing"
)

// TestLacks: the transactions a position has and a MariaDB source's
// binlog state lacks, as MariaDB's check of a replica's start position
// finds them, named per domain.
func TestLacks(t *testing.T) {
	st := sourceState{pos: "0-1-107,2-12-5", last: map[[2]uint32]uint64{{0, 1}: 107, {0, 2}: 100, {2, 12}: 5}, top: map[uint32]uint64{0: 107, 2: 5}}
	for _, c := range []struct {
		pos  string
		want []string // one substring per lacking domain; none: nothing lacks
	}{
		{"0-1-107", nil},
		{"0-1-50,2-12-5", nil},
		{"0-2-100", nil},
		{"0-1-0,2-12-0", nil},  // the domains' beginnings
		{"0-1-107,5-9-3", nil}, // a domain the source has nothing in: another source's
		{"0-1-110", []string{"0-1-108 to 0-1-110 (3 transactions): the source's newest in domain 0 is 0-1-107"}},
		{"0-2-105", []string{"0-2-101 to 0-2-105 (5 transactions): the source's newest of server 2 in domain 0 is 0-2-100"}},
		{"0-3-50", []string{"0-3-50 and what server 3 wrote before it in domain 0"}},
		{"0-1-108,2-12-6", []string{"0-1-108:", "2-12-6:"}},
	} {
		got := st.lacks(c.pos)
		if len(got) != len(c.want) {
			t.Errorf("%s: lacks %q, want %d domains", c.pos, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: %q does not say %q", c.pos, got[i], w)
			}
		}
	}
}

// TestPurgedPast: a position before the start of the source's oldest
// binlog in any domain, or without a domain that binlog already has, asks
// for purged transactions.
func TestPurgedPast(t *testing.T) {
	for _, c := range []struct {
		pos, oldest string
		want        bool
	}{
		{"0-1-3", "0-1-3", false},
		{"0-1-9", "0-1-3", false},
		{"0-1-2", "0-1-3", true},
		{"0-1-9", "0-1-3,2-12-1", true}, // domain 2 from its beginning: purged
		{"0-1-9,2-12-0", "0-1-3,2-12-1", true},
		{"0-1-9,2-12-1", "0-1-3,2-12-1", false},
		{"0-1-9", "", false},
	} {
		if got := purgedPast(c.pos, c.oldest); got != c.want {
			t.Errorf("purgedPast(%s, %s) = %v, want %v", c.pos, c.oldest, got, c.want)
		}
	}
}

// TestConnectState: a domain at sequence number 0 is left out of what
// the source is asked for (from the domain's beginning); the others stay.
func TestConnectState(t *testing.T) {
	for in, want := range map[string]string{
		"2-12-0":              "",
		"0-1-100,2-12-0":      "0-1-100",
		"0-1-100,2-12-10":     "0-1-100,2-12-10",
		"1-11-0,0-1-5,2-12-0": "0-1-5",
		"0-10-20":             "0-10-20",
	} {
		if got := connectState(in); got != want {
			t.Errorf("connectState(%s) = %q, want %q", in, got, want)
		}
	}
}
