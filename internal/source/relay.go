package source

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/relaylog"
)

// relayer appends framed transactions to a relay log and keeps the Status
// that producers report. The receiver and the binlog file reader share it,
// so that a transaction reaches the relay log in one way, whatever it was
// read from.
type relayer struct {
	relay *relaylog.Log

	mu     sync.Mutex // guards status
	status Status
}

// Status returns a copy of the producer's status.
func (r *relayer) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// txnGTID returns rt's GTID; a transaction without one cannot be
// positioned, so it is refused.
func txnGTID(rt *binlog.RawTxn) (binlog.GTID, error) {
	g, err := rt.GTID()
	if err != nil {
		return g, err
	}
	if g.IsZero() {
		return g, fmt.Errorf("%w: a transaction without GTID at %s (paraply replicates GTID streams only)", binlog.ErrUnsupported, rt.Events[0].Pos)
	}
	return g, nil
}

// relayTxn appends rt, whose GTID is g, with the position after it as its
// resume position, and advances pos past it.
func (r *relayer) relayTxn(ctx context.Context, rt *binlog.RawTxn, g binlog.GTID, pos mysql.GTIDSet) error {
	if err := pos.Update(g.String()); err != nil {
		return fmt.Errorf("advancing the source position past %s: %w", g, err)
	}
	resume := pos.String()
	if _, err := r.relay.Append(ctx, relaylog.Record{Txn: rt, GTID: g, Resume: resume}); err != nil {
		return err
	}
	last := rt.Events[len(rt.Events)-1]
	r.mu.Lock()
	r.status.Transactions++
	r.status.Bytes += int64(rt.Bytes())
	r.status.LastTxn = time.Now()
	r.status.Position = resume
	r.status.SourceFile, r.status.SourceOffset = last.Pos.File, last.Pos.Offset+int64(len(last.Data))
	r.mu.Unlock()
	return nil
}

func (r *relayer) touch() {
	r.mu.Lock()
	r.status.LastEvent = time.Now()
	r.status.Events++
	r.mu.Unlock()
}

func (r *relayer) setError(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	r.status.LastError, r.status.LastErrorTime = err.Error(), time.Now()
	r.mu.Unlock()
}

func (r *relayer) setConnected(c bool) {
	r.mu.Lock()
	r.status.Connected = c
	r.mu.Unlock()
}
