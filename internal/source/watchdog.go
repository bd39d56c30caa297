package source

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// errSilent is the cause of a stream the watchdog gave up on: nothing, not
// even a heartbeat, arrived for three heartbeat periods. The receiver
// reconnects.
var errSilent = errors.New("the source sent nothing")

// conns remembers the connections go-mysql's client dials for one stream,
// so the watchdog can close them: a read blocked on a silent network
// returns then, wherever the stream is (handshake, registering,
// streaming).
type conns struct {
	mu     sync.Mutex
	open   []net.Conn
	closed bool
}

// dial is the client's Dialer.
func (c *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		// A connection dialed after the watchdog gave up: on a silent
		// network its handshake would never end.
		conn.Close()
		return nil, errSilent
	}
	c.open = append(c.open, conn)
	return conn, nil
}

func (c *conns) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, conn := range c.open {
		conn.Close()
	}
}

// watchdog ends a stream on which nothing, not even a heartbeat, arrives
// for three heartbeat periods while the receiver waits for an event. It
// replaces a read timeout, which sets a deadline on the socket before
// every read (go-mysql's ReadTimeout cost a tenth of the receiver's CPU on
// a backlog), and which would also break streams that are only waiting
// for room in the relay log.
type watchdog struct {
	conns   conns
	waiting atomic.Int64 // since when the receiver waits for an event (Unix ns); 0: it does not
}

// wait marks the receiver as waiting for an event since since.
func (w *watchdog) wait(since time.Time) { w.waiting.Store(since.UnixNano()) }

// got marks the receiver as busy with an event.
func (w *watchdog) got() { w.waiting.Store(0) }

// watch returns a context for one stream that is cancelled, with cause
// errSilent, once the receiver has waited longer than limit, closing the
// stream's connections then (the receiver may be blocked reading one), as it
// closes them when ctx is done. stop ends the watch.
func (w *watchdog) watch(ctx context.Context, limit time.Duration) (wctx context.Context, stop func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(max(limit/12, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				// The receiver stops. Reads have no deadline: closing
				// is what ends a read from a source gone silent.
				w.conns.closeAll()
				return
			case now := <-tick.C:
				since := w.waiting.Load()
				if since == 0 {
					continue
				}
				if silent := now.Sub(time.Unix(0, since)); silent > limit {
					cancel(fmt.Errorf("%w for %s", errSilent, silent.Round(time.Millisecond)))
					w.conns.closeAll()
					return
				}
			}
		}
	}()
	return wctx, func() {
		close(done)
		cancel(nil)
	}
}

// silentErr returns the watchdog's cause when it ended the stream, else
// err.
func silentErr(wctx context.Context, err error) error {
	if cause := context.Cause(wctx); errors.Is(cause, errSilent) {
		return cause
	}
	return err
}
