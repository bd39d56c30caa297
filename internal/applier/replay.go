package applier

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/replay"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/stage"
)

// replayWork runs work's row events through the target's own row applier
// (BinlogPath): BINLOG statements, one source transaction each, in one
// target transaction with the checkpoint rows. On success the target
// transaction stays open; on error it is rolled back.
func (w *worker) replayWork(ctx context.Context, conn *sql.Conn, work *stage.Work, turnFirst bool) (time.Duration, error) {
	b := w.replayBuilder()
	format := w.format
	b.Exec("START TRANSACTION")
	bookkeeping(w.p.store, work, b.Exec)
	for i, t := range work.Txns {
		if t.Raw.Format != format {
			format = t.Raw.Format
			b.Format(format)
		}
		if err := b.Txn(i, t.Raw); err != nil {
			return 0, &stage.ConflictError{GTID: t.GTID, What: "cannot replay its row events", Err: err}
		}
	}
	t0 := time.Now()
	for _, p := range b.Packets() {
		if n := worstSize(p.SQL, p.Args); w.maxPacket > 0 && n > w.maxPacket-1024 {
			// A single rows event (one row, or the rows of one statement
			// that fill an event) the target cannot take in one packet.
			w.rollback(conn)
			return time.Since(t0), w.replayConflict(ctx, work, p, fmt.Errorf("%w: %d bytes, max_allowed_packet %d", errPacketTooLarge, n, w.maxPacket))
		}
		if _, err := execMulti(ctx, conn, p.SQL, p.Args); err != nil {
			d := time.Since(t0)
			if err := w.abandon(conn, work, err, turnFirst); err != nil {
				return d, err
			}
			return d, w.replayConflict(ctx, work, p, err)
		}
	}
	w.format = format
	return time.Since(t0), nil
}

// replayBuilder returns the worker's replay.Builder, emptied, with its
// bounds set for the target's max_allowed_packet.
func (w *worker) replayBuilder() *replay.Builder {
	b := &w.replay
	b.Reset()
	b.MaxChunk = replay.DefaultMaxChunk
	b.MaxStatement = 0
	if w.maxPacket > 0 {
		// base64 makes 4 bytes of 3, and the statement needs room.
		b.MaxChunk = min(b.MaxChunk, w.maxPacket/2)
		b.MaxStatement = w.maxPacket - 1024
	}
	return b
}

// replayConflict names the transaction of the packet that failed and its
// table. The server's row applier does not say which row it could not
// find: when the transaction's tables are known, its rows run again as SQL
// in a transaction that is rolled back (pinpoint), which names the key.
func (w *worker) replayConflict(ctx context.Context, work *stage.Work, p replay.Packet, err error) error {
	if p.Txn < 0 {
		return &stage.ConflictError{GTID: work.Txns[0].GTID, What: describe(err), Err: err}
	}
	t := work.Txns[p.Txn]
	if !errors.Is(err, errPacketTooLarge) && !slices.Contains(t.Tables, nil) && len(t.Tables) > 0 {
		if conn, serr := w.session(ctx); serr == nil {
			var ce *stage.ConflictError
			if perr := w.pinpoint(ctx, conn, &stage.Work{Txns: []*stage.Txn{t}}, err); errors.As(perr, &ce) && ce.Table != "" {
				return perr
			}
		}
	}
	var named []schema.TableName // the tables of t the message may mean
	var me *mysql.MySQLError
	m := []string(nil)
	if errors.As(err, &me) {
		m = quotedTable.FindStringSubmatch(me.Message)
	}
	for _, r := range t.Txn.Rows {
		n := schema.TableName{Schema: r.Schema(), Name: r.Name()}
		if (m == nil || m[1] == n.Name || m[1] == n.Schema+"."+n.Name) && !slices.Contains(named, n) {
			named = append(named, n)
		}
	}
	table := ""
	if len(named) == 1 {
		table = named[0].String()
	}
	return &stage.ConflictError{GTID: t.GTID, Table: table, What: describe(err), Err: err}
}

// quotedTable finds the table a row applier error names: "Can't find
// record in 't'", "Table 'db.t' doesn't exist".
var quotedTable = regexp.MustCompile(`(?:record in|Table) '([^']+)'`)

// CanReplay reports whether the target can apply row events itself
// (BinlogPath): a MariaDB server whose account holds BINLOG REPLAY (or
// SUPER). When it cannot, why says so in words for the operator.
func CanReplay(ctx context.Context, db *sql.DB) (ok bool, why string, err error) {
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return false, "", err
	}
	if !strings.Contains(strings.ToLower(version), "mariadb") {
		return false, "the target is not MariaDB (" + version + ")", nil
	}
	// A BINLOG statement that decodes to nothing: the privilege check
	// comes first, then a syntax error for the empty payload.
	_, err = db.ExecContext(ctx, "BINLOG 'AAAA'")
	var me *mysql.MySQLError
	switch {
	case err == nil:
		return true, "", nil
	case errors.As(err, &me) && me.Number == erSpecificAccessDenied:
		return false, "the target account lacks the BINLOG REPLAY privilege", nil
	case errors.As(err, &me):
		return true, "", nil
	}
	return false, "", err
}
