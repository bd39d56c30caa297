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
