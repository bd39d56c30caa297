package binlog

import "testing"

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
