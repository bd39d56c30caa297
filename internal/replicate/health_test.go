package replicate

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestConnWatch: the target's state follows the probes' outcomes, says
// since when, keeps the last error without the password, and counts the
// time down, an outage in progress included.
func TestConnWatch(t *testing.T) {
	w := &connWatch{secret: "s3cret"}
	t0 := time.Unix(1000, 0)
	if c := w.state(t0); c.Known() || c.Connected || c.DownTime != 0 {
		t.Fatalf("before any probe: %+v, want not known", c)
	}
	w.answered(t0, nil)
	w.answered(t0.Add(time.Second), nil)
	if c := w.state(t0.Add(2 * time.Second)); !c.Connected || !c.Since.Equal(t0) || c.LastError != "" || !c.LastErrorTime.IsZero() {
		t.Errorf("answering: %+v, want connected since t0, no error", c)
	}
	down := t0.Add(3 * time.Second)
	w.answered(down, errors.New("dial tcp: connection refused (user:s3cret)"))
	w.answered(down.Add(time.Second), errors.New("dial tcp: connection refused"))
	c := w.state(down.Add(5 * time.Second))
	if c.Connected || !c.Since.Equal(down) || c.DownTime != 5*time.Second || !c.LastErrorTime.Equal(down.Add(time.Second)) {
		t.Errorf("down for 5 s: %+v", c)
	}
	w.answered(down, errors.New("connect: s3cret"))
	if c := w.state(down); strings.Contains(c.LastError, "s3cret") {
		t.Errorf("the last error shows the password: %q", c.LastError)
	}
	up := down.Add(6 * time.Second)
	w.answered(up, nil)
	if c := w.state(up.Add(time.Hour)); !c.Connected || !c.Since.Equal(up) || c.DownTime != 6*time.Second || c.LastError == "" {
		t.Errorf("back: %+v, want connected since it answered, 6 s down in all, the last error kept", c)
	}
}
