package status

import (
	"strings"
	"testing"
)

// TestPlural: one transaction, any other number of transactions.
func TestPlural(t *testing.T) {
	for n, want := range map[int64]string{0: "0 transactions", 1: "1 transaction", 2: "2 transactions", 1000: "1000 transactions"} {
		if got := Plural(n, "transaction"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestLagBoundsAgree: the status line's highest lag ("at most") and the
// diagnosis's ("within") are one bound, rounded up alike (4.4 ms was "at
// most 4 ms" beside "within 5 ms"); and a backlog of one is "1
// transaction".
func TestLagBoundsAgree(t *testing.T) {
	st, iv := healthy()
	st.Backlog = 1
	for _, c := range []struct {
		lag  float64
		want string
	}{{0.0044, "5 ms"}, {0.021, "21 ms"}, {1.23, "1.3 s"}, {75.2, "1 min 16 s"}} {
		iv.LagMax, iv.LagEnd = c.lag, c.lag/2
		r := Report{Status: st, Interval: iv, Diagnosis: Diagnose(st, iv, nil)}
		var b strings.Builder
		if err := WriteText(&b, r); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "at most "+c.want+" ") {
			t.Errorf("lag %v: the status line does not say at most %s:\n%s", c.lag, c.want, out)
		}
		if c.lag < 1 && !strings.Contains(out, "within "+c.want+";") {
			t.Errorf("lag %v: the diagnosis does not say within %s:\n%s", c.lag, c.want, out)
		}
		if !strings.Contains(out, "; 1 transaction received and not applied") {
			t.Errorf("a backlog of one is not 1 transaction:\n%s", out)
		}
	}
}

// TestBytesText: sizes in binary units, as they are set (10 GiB of relay
// log is 10.00 GiB, not 10.74 GB).
func TestBytesText(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 12 << 20: "12.0 MiB", 10737418240: "10.00 GiB"} {
		if got := bytesText(n); got != want {
			t.Errorf("bytesText(%d) = %q, want %q", n, got, want)
		}
	}
}
