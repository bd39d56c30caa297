package source

import (
	"context"
	"fmt"
	"log/slog"
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
	relay  *relaylog.Log
	logger *slog.Logger // nil: discard
	// arrivals, if set, is told of every transaction relayed.
	arrivals Arrivals
	// hold appends with AppendHeld: the producer flushes the relay log
	// when it has nothing more to append at once.
	hold bool

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
	gs := g.String()
	resume, err := advance(pos, g, gs)
	if err != nil {
		return fmt.Errorf("advancing the source position past %s: %w", g, err)
	}
	// It arrived now: Append may wait for room in the relay log.
	arrived := time.Now()
	rec := relaylog.Record{Txn: rt, GTID: g, Resume: resume}
	var idx uint64
	if r.hold {
		idx, err = r.relay.AppendHeld(ctx, rec)
	} else {
		idx, err = r.relay.Append(ctx, rec)
	}
	if err != nil {
		return err
	}
	last := rt.Events[len(rt.Events)-1]
	if r.arrivals != nil {
		r.arrivals.Received(idx, gs, last.Timestamp(), arrived)
	}
	r.mu.Lock()
	r.status.Transactions++
	r.status.Bytes += int64(rt.Bytes())
	r.status.LastTxn = arrived
	r.status.Position = resume
	r.status.SourceFile, r.status.SourceOffset = last.Pos.File, last.Pos.Offset+int64(len(last.Data))
	r.mu.Unlock()
	return nil
}

// advance moves pos past g (gs is g.String()) and returns pos in text
// form. A MariaDB position is advanced without parsing gs, and one of a
// single domain is gs once g is its last transaction: the common case,
// which then costs no sorting or formatting per transaction.
func advance(pos mysql.GTIDSet, g binlog.GTID, gs string) (string, error) {
	ms, ok := pos.(*mysql.MariadbGTIDSet)
	if !ok || g.Flavor != binlog.FlavorMariaDB {
		if err := pos.Update(gs); err != nil {
			return "", err
		}
		return pos.String(), nil
	}
	if err := ms.AddSet(&mysql.MariadbGTID{DomainID: g.Domain, ServerID: g.Server, SequenceNumber: g.Seq}); err != nil {
		return "", err
	}
	if e := ms.Sets[g.Domain]; len(ms.Sets) == 1 && e.ServerID == g.Server && e.SequenceNumber == g.Seq {
		return gs, nil
	}
	return ms.String(), nil
}

// touch counts n events received just now. The receiver counts them per
// read window, not per event: the lock and the clock cost a fifth of its
// CPU per event.
func (r *relayer) touch(n int64) {
	if n == 0 {
		return
	}
	r.mu.Lock()
	r.status.LastEvent = time.Now()
	r.status.Events += n
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
	if r.status.Connected != c {
		r.status.Connected, r.status.Since = c, time.Now()
	}
	r.mu.Unlock()
}

// relayPiece appends rt, a whole transaction or a piece of a large one
// (binlog.RawTxn.Part): the first piece holds the GTID, which *large keeps
// until the last piece, appended as the transaction. done says that a
// transaction was completed.
func (r *relayer) relayPiece(ctx context.Context, rt *binlog.RawTxn, large *binlog.GTID, pos mysql.GTIDSet) (done bool, err error) {
	g := *large
	if g.IsZero() {
		if g, err = txnGTID(rt); err != nil {
			return false, err
		}
	}
	if rt.Part {
		if large.IsZero() {
			*large = g
			if r.logger != nil {
				r.logger.Info("a large transaction goes to the relay log in pieces", "gtid", g.String())
			}
		}
		if err := r.relay.AppendPart(ctx, rt); err != nil {
			return false, err
		}
		r.mu.Lock()
		r.status.Bytes += int64(rt.Bytes())
		r.mu.Unlock()
		return false, nil
	}
	*large = binlog.GTID{}
	return true, r.relayTxn(ctx, rt, g, pos)
}
