package source

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/mysqlerr"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/retry"
)

// Config configures a Receiver.
type Config struct {
	Source config.Endpoint
	// ServerID is the replica server_id paraply presents to the source; it
	// must differ from every other replica's.
	ServerID uint32
	// Flavor is binlog.FlavorMariaDB or binlog.FlavorMySQL (see Detect).
	Flavor binlog.Flavor
	// Heartbeat is the source heartbeat period; a stream silent for three
	// periods is treated as dead and reconnected.
	Heartbeat time.Duration
	// MaxBackoff bounds the pause between reconnection attempts.
	MaxBackoff time.Duration
	// PartBytes bounds the memory of one transaction: a larger one goes to
	// the relay log in pieces of about this size (0: whole).
	PartBytes int
	TLS       *tls.Config
	Logger    *slog.Logger
	// Arrivals, if set, is told of every transaction relayed (it dates
	// transactions for the lag).
	Arrivals Arrivals
}

// Arrivals is told when each transaction arrived: its relay log index,
// GTID, the source's timestamp of its last event (whole seconds) and the
// time it was read from the stream.
type Arrivals interface {
	Received(index uint64, gtid string, sourceSecs uint32, at time.Time)
}

// Status is what the receiver (or the reader of binlog files, Files)
// reports about the stream.
type Status struct {
	// Connected: the replication connection is up; for binlog files,
	// they are being read or have been read to the end without error.
	Connected bool
	// Since is when Connected last changed; zero before the first
	// connection: connecting since the start.
	Since         time.Time
	Reconnects    int64
	Transactions  int64
	Events        int64 // events received, heartbeats included
	Bytes         int64
	LastEvent     time.Time // last event of any kind, heartbeats included
	LastTxn       time.Time // last transaction received
	Position      string    // source position after the last transaction received
	SourceFile    string
	SourceOffset  int64
	LastError     string
	LastErrorTime time.Time
	// Reading binlog files (Files): bytes read of InputBytes, and files
	// opened of Files (the one being read included).
	InputRead, InputBytes int64
	FilesRead, Files      int
}

// Receiver streams a source's binlog into a relay log.
type Receiver struct {
	cfg Config
	relayer
}

// NewReceiver streams into relay.
func NewReceiver(cfg Config, relay *relaylog.Log) (*Receiver, error) {
	if cfg.ServerID == 0 {
		return nil, errors.New("source: the replica server id must not be 0")
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Receiver{cfg: cfg, relayer: relayer{relay: relay, logger: cfg.Logger, arrivals: cfg.Arrivals, hold: true}}, nil
}

// Run streams from position start (a GTID set in the flavor's text form;
// "" means from the beginning of the source's binlogs) until ctx is done.
// It reconnects on its own; it returns an error only when the stream cannot
// continue (position gone, access denied, a corrupt or unsupported event).
func (r *Receiver) Run(ctx context.Context, start string) error {
	pos, err := mysql.ParseGTIDSet(flavorName(r.cfg.Flavor), start)
	if err != nil {
		return fmt.Errorf("source position %q: %w", start, err)
	}
	// Reconnecting pauses from 100ms, doubling up to MaxBackoff, with up
	// to a quarter more at random so that replicas cut off together do
	// not all come back at once; a connection that received a transaction
	// starts the pauses again.
	b := retry.Policy{Base: 100 * time.Millisecond, Cap: r.cfg.MaxBackoff, Jitter: 0.25}.Start()
	for {
		received, err := r.stream(ctx, pos)
		if ctx.Err() != nil {
			return nil
		}
		r.setError(err)
		if gone(err) {
			return r.explain(ctx, pos, err)
		}
		if fatal(err) {
			return err
		}
		// stream advanced pos past each transaction before appending it;
		// after a failed append (a full disk) pos is past a transaction
		// the relay log lacks. What the relay log holds is what was
		// received: resume from there, once what it held is written (or,
		// if that fails, dropped).
		if ferr := r.relay.Flush(); ferr != nil {
			r.cfg.Logger.Warn("writing the relay log failed; what it held is received again", "err", ferr)
		}
		var perr error
		if pos, perr = r.resumePos(start); perr != nil {
			return perr
		}
		if received {
			b.Reset()
		}
		pause, _ := b.Next()
		r.cfg.Logger.Warn("source stream broke; reconnecting", "source", r.cfg.Source, "after", pause, "err", err)
		if !retry.Sleep(ctx, pause) {
			return nil
		}
		r.mu.Lock()
		r.status.Reconnects++
		r.mu.Unlock()
	}
}

// explain says why the source refused to stream from pos (see Explain).
func (r *Receiver) explain(ctx context.Context, pos mysql.GTIDSet, refusal error) error {
	db, err := r.cfg.Source.WithTLS(r.cfg.TLS).Open(nil)
	if err != nil {
		return &PositionError{Position: pos.String(), Err: refusal}
	}
	defer db.Close()
	return Explain(ctx, db, r.cfg.Flavor, pos.String(), refusal)
}

// resumePos returns the relay log's last resume position, or start when
// it has none.
func (r *Receiver) resumePos(start string) (mysql.GTIDSet, error) {
	at, ok := r.relay.Resume()
	if !ok {
		at = start
	}
	pos, err := mysql.ParseGTIDSet(flavorName(r.cfg.Flavor), at)
	if err != nil {
		return nil, fmt.Errorf("%w: the relay log's resume position %q: %v", binlog.ErrCorrupt, at, err)
	}
	return pos, nil
}

// stream runs one replication connection from pos (updated as transactions
// are relayed) and reports whether it received any.
func (r *Receiver) stream(ctx context.Context, pos mysql.GTIDSet) (received bool, err error) {
	var dog watchdog
	dog.wait(time.Now()) // connecting counts as waiting
	wctx, stop := dog.watch(ctx, 3*r.cfg.Heartbeat)
	defer stop()
	defer func() { err = silentErr(wctx, err) }()
	// Pieces of a transaction the last connection did not finish: the
	// source sends it again, whole, from pos.
	if err := r.relay.DiscardPartial(); err != nil {
		return false, err
	}
	d, err := openDump(wctx, dumpConfig{cfg: r.cfg, dialer: dog.conns.dial, wait: dog.wait, got: dog.got}, pos)
	if err != nil {
		return false, err
	}
	defer d.close()
	dog.got()
	r.setConnected(true)
	defer r.setConnected(false)
	framer := binlog.NewFramer()
	framer.PartBytes = r.cfg.PartBytes
	file := ""
	var large binlog.GTID // of the large transaction being received in pieces
	var seen int64        // events not counted in the status yet
	defer func() { r.touch(seen) }()
	for {
		if d.mayWait() {
			r.touch(seen)
			seen = 0
			// The applier gets what the relay log holds before the
			// receiver may wait for the network.
			if err := r.relay.Flush(); err != nil {
				return received, err
			}
		}
		data, err := d.next()
		if err != nil {
			return received, err
		}
		ev := binlog.Event{Data: data, Pos: binlog.Pos{File: file}}
		if ev.LogPos() != 0 {
			ev.Pos.Offset = int64(ev.LogPos()) - int64(ev.Size())
		}
		seen++
		if err := framer.Push(ev); err != nil {
			return received, err
		}
		if ev.Type() == replication.ROTATE_EVENT {
			if file, err = binlog.RotateName(ev, framer.Format()); err != nil {
				return received, err
			}
		}
		for rt := framer.Next(); rt != nil; rt = framer.Next() {
			done, err := r.relayPiece(ctx, rt, &large, pos)
			if err != nil {
				return received, err
			}
			framer.Recycle(rt) // the relay log holds a copy
			received = received || done
		}
		if framer.Empty() {
			d.release()
		}
	}
}

// fatal reports errors that reconnecting cannot fix: the relay log's and
// the binlog's own, and the source's refusals for good (mysqlerr.Fatal:
// access denied, a privilege missing, the position gone).
func fatal(err error) bool {
	return errors.Is(err, binlog.ErrCorrupt) || errors.Is(err, binlog.ErrUnsupported) || errors.Is(err, binlog.ErrUnknownEvent) ||
		errors.Is(err, relaylog.ErrTooLarge) || errors.Is(err, relaylog.ErrClosed) ||
		mysqlerr.Classify(err) == mysqlerr.Fatal
}

// gone reports the source's "could not find the position in the binlogs"
// (ER_MASTER_FATAL_ERROR_READING_BINLOG).
func gone(err error) bool { return mysqlerr.Number(err) == 1236 }

func flavorName(f binlog.Flavor) string {
	if f == binlog.FlavorMySQL {
		return mysql.MySQLFlavor
	}
	return mysql.MariaDBFlavor
}
