package faults

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// roundTrip sends a line through c and returns how long the echo took, or
// an error.
func roundTrip(c net.Conn, r *bufio.Reader, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	c.SetDeadline(start.Add(timeout))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	if _, err := r.ReadString('\n'); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func TestProxyModes(t *testing.T) {
	p, err := NewProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := roundTrip(c, r, time.Second); err != nil {
		t.Fatalf("pass: %v", err)
	}

	p.Set(Slow, 50*time.Millisecond)
	if d, err := roundTrip(c, r, 2*time.Second); err != nil || d < 100*time.Millisecond {
		t.Fatalf("slow: round trip %v, %v; want at least two delays of 50ms", d, err)
	}

	p.Set(Stall, 0)
	if _, err := roundTrip(c, r, 200*time.Millisecond); err == nil {
		t.Fatal("stall: the echo came through")
	}
	// The line sent during the stall is held, not lost: it arrives once
	// the proxy passes again.
	p.Set(Pass, 0)
	c.SetDeadline(time.Now().Add(time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("after the stall: %q, %v", line, err)
	}
	if _, err := roundTrip(c, r, time.Second); err != nil {
		t.Fatalf("pass after stall: %v", err)
	}

	p.Set(Drop, 0)
	if _, err := roundTrip(c, r, time.Second); err == nil {
		t.Fatal("drop: the open connection still works")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		if _, err := roundTrip(c2, bufio.NewReader(c2), time.Second); err == nil {
			t.Fatal("drop: a new connection works")
		}
		c2.Close()
	}
	p.Set(Pass, 0)
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if _, err := roundTrip(c3, bufio.NewReader(c3), time.Second); err != nil {
		t.Fatalf("pass after drop: %v", err)
	}
	if accepted, cut := p.Stats(); accepted != 3 || cut < 2 {
		t.Errorf("stats: accepted %d, cut %d; want 3 and at least 2", accepted, cut)
	}
}
