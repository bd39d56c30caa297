package binlog

import (
	"strings"
	"testing"
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
