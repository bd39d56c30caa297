package binlog

import (
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// TestParseGTIDSetErrors: a position that does not parse is quoted, the
// element that is no GTID named, and the syntax said in words (go-mysql
// said "invalid Mariadb GTID garbage, must domain-server-sequence").
func TestParseGTIDSetErrors(t *testing.T) {
	for _, ok := range []string{"", "0-1-4711", "0-1-4711,1-2-300"} {
		if _, err := ParseGTIDSet(FlavorMariaDB, ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for in, bad := range map[string]string{"garbage": "garbage", "0-1-13683x": "0-1-13683x", "0-1-5,1-2-x": "1-2-x", "0-1": "0-1"} {
		_, err := ParseGTIDSet(FlavorMariaDB, in)
		if err == nil {
			t.Errorf("%q parses", in)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"GTID position " + `"` + in + `"`, `"` + bad + `" is no GTID`, "domain-server-sequence, three numbers"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q: the error does not say %q: %s", in, want, msg)
			}
		}
		if strings.Contains(msg, "must domain") {
			t.Errorf("%q: %s", in, msg)
		}
	}
	if _, err := ParseGTIDSet(FlavorMySQL, "garbage"); err == nil || !strings.Contains(err.Error(), `GTID set "garbage" is not a MySQL one: write it uuid:N`) {
		t.Errorf("a MySQL set that does not parse: %v", err)
	}
}

// TestCount: a position's transactions, of either flavor; two readings of
// a source's position differ by what it wrote between them.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		f    Flavor
		pos  string
		want int64
	}{
		{FlavorMariaDB, "", 0},
		{FlavorMariaDB, "0-1-443", 443},
		{FlavorMariaDB, "0-1-3100,1-12-7", 3107},
		{FlavorMySQL, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", 5},
		{FlavorMySQL, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-20,4e11fa47-71ca-11e1-9e33-c80aa9429562:1", 16},
	} {
		got, err := Count(c.f, c.pos)
		if err != nil || got != c.want {
			t.Errorf("Count(%v, %q) = %d, %v; want %d", c.f, c.pos, got, err, c.want)
		}
	}
	if _, err := Count(FlavorMariaDB, "garbage"); err == nil {
		t.Error("Count of garbage: no error")
	}
}

// TestCoversReadInPlace holds the in-place reading of MariaDB positions
// to go-mysql's parse: the same answer for every position and set, and no
// allocation for a position as servers write one.
func TestCoversReadInPlace(t *testing.T) {
	positions := []string{
		"", "0-1-5", "0-1-4", "0-2-9", "0-1-5,1-1-3", "1-1-3,0-1-5", "0-1-5,0-1-2", "0-1-2,0-1-5",
		"1-1-9", "0-1-5,", ",0-1-5", "0-1", "0-1-5-6", "a-1-5", "0-1-x", " 0-1-5", "0-1-5 ",
		"4294967296-1-5", "0-4294967296-5", "0-1-18446744073709551616", "4294967295-1-18446744073709551615",
		"0-1-+5", "0--5", "0-1-",
	}
	sets := []string{"0-1-5", "0-7-5", "0-1-5,1-1-3", "1-1-3", "4294967295-1-1"}
	for _, ss := range sets {
		set, err := ParseGTIDSet(FlavorMariaDB, ss)
		if err != nil {
			t.Fatal(err)
		}
		for _, pos := range positions {
			want := false
			if p, err := ParseGTIDSet(FlavorMariaDB, pos); err == nil {
				want = p.Contain(set)
			}
			if got := Covers(FlavorMariaDB, pos, set); got != want {
				t.Errorf("Covers(%q, %q) = %v, go-mysql says %v", pos, ss, got, want)
			}
		}
	}
	set, _ := ParseGTIDSet(FlavorMariaDB, "0-1-5,1-1-3")
	if n := testing.AllocsPerRun(100, func() { Covers(FlavorMariaDB, "0-1-7,1-2-3", set) }); n != 0 {
		t.Errorf("Covers of a position as servers write one: %v allocations, want 0", n)
	}
	if _, read := coversMariaDB("0-1-7,1-2-3", set.(*mysql.MariadbGTIDSet)); !read {
		t.Error("a position as servers write one went to the full parse")
	}
}
