package faults

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
)

// Mode is what a Proxy does with the connections it carries.
type Mode int

const (
	// Pass forwards bytes as they come.
	Pass Mode = iota
	// Drop closes every connection, and each new one as soon as it is
	// accepted: the server looks gone, without the wait of a dial timeout.
	Drop
	// Stall keeps connections open, accepts new ones and dials the server,
	// but forwards nothing until the mode changes: a network that silently
	// stops carrying packets.
	Stall
	// Slow forwards each chunk read after a delay (Proxy.Set's latency).
	Slow
)

func (m Mode) String() string {
	switch m {
	case Drop:
		return "drop"
	case Stall:
		return "stall"
	case Slow:
		return "slow"
	}
	return "pass"
}

// Proxy is a TCP proxy on 127.0.0.1 between a client (paraply) and one
// server, whose behaviour tests change while connections are open. Each
// connection has two goroutines, one per direction, owned by the Proxy:
// Close stops them all and waits for them.
type Proxy struct {
	target string
	l      net.Listener
	wg     sync.WaitGroup

	mu      sync.Mutex // guards everything below
	mode    Mode
	latency time.Duration
	changed chan struct{} // closed and replaced when the mode changes
	conns   map[net.Conn]struct{}
	closed  bool
	// Accepted counts connections accepted, Cut those closed by Drop.
	accepted, cut int64
}

// NewProxy listens on a free loopback port and forwards to target
// (host:port), in mode Pass.
func NewProxy(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faults: proxy for %s: %w", target, err)
	}
	p := &Proxy{target: target, l: l, changed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address, host:port.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Port is the proxy's listening port.
func (p *Proxy) Port() int { return p.l.Addr().(*net.TCPAddr).Port }

// URL is mysql://user@127.0.0.1:PORT for the proxy.
func (p *Proxy) URL(user string) string {
	return "mysql://" + user + "@" + net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Port()))
}

// Set changes the mode; latency is used by Slow. Drop closes the open
// connections at once; leaving Stall lets the bytes held back go on.
func (p *Proxy) Set(m Mode, latency time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode, p.latency = m, latency
	close(p.changed)
	p.changed = make(chan struct{})
	if m == Drop {
		for c := range p.conns {
			c.Close()
			p.cut++
		}
	}
}

// Mode returns the current mode.
func (p *Proxy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Stats returns the connections accepted and those cut by Drop.
func (p *Proxy) Stats() (accepted, cut int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted, p.cut
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.l.Close()
	for c := range p.conns {
		c.Close()
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // EMFILE and the like
			continue
		}
		p.mu.Lock()
		p.accepted++
		if p.closed || p.mode == Drop {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(c)
	}
}

// serve dials the server for client c and pumps both ways until either
// side closes.
func (p *Proxy) serve(c net.Conn) {
	defer p.wg.Done()
	defer p.forget(c)
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return // the server is down: the client sees the connection close
	}
	if !p.track(s) {
		s.Close()
		return
	}
	defer p.forget(s)
	var both sync.WaitGroup
	both.Add(1)
	go func() {
		defer both.Done()
		p.pump(s, c)
	}()
	p.pump(c, s)
	both.Wait()
}

// track registers a server-side connection so that Drop and Close close
// it; false when the proxy closed or started dropping meanwhile.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.mode == Drop {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) forget(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// pump copies from src to dst, chunk by chunk, through gate. When it
// ends it closes both, which ends the other direction too.
func (p *Proxy) pump(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.gate() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or an error: the connection is over both ways
		}
	}
}

// gate holds a chunk back as the mode says: not at all (Pass), for the
// latency (Slow), until the mode changes (Stall). It returns false when the
// chunk must not go on (Drop, Close).
func (p *Proxy) gate() bool {
	for {
		p.mu.Lock()
		mode, latency, changed, closed := p.mode, p.latency, p.changed, p.closed
		p.mu.Unlock()
		switch {
		case closed || mode == Drop:
			return false
		case mode == Stall:
			<-changed
			continue
		case mode == Slow:
			select {
			case <-time.After(latency):
			case <-changed:
			}
		}
		return true
	}
}
