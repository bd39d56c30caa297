package applier

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/replay"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// LargeProgress is how far a worker is in applying a large transaction.
type LargeProgress struct {
	GTID       string `json:"gtid"`
	Path       string `json:"path"` // sql or binlog
	Pieces     int    `json:"pieces"`
	PiecesDone int    `json:"pieces_done"`
	// RowsDone is counted on the SQL path only (the binlog path hands the
	// rows to the target without decoding them).
	Rows      int64 `json:"rows"`
	RowsDone  int64 `json:"rows_done"`
	Bytes     int64 `json:"bytes"`
	BytesDone int64 `json:"bytes_done"`
}

// largeSlice bounds the events decoded at once on the SQL path: a piece
// is decoded this much at a time, so that only this many bytes' worth of
// row images is in memory.
const largeSlice = 1 << 20

// applyLarge runs a large transaction (Txn.Large) on conn, one piece at a
// time, as one target transaction with its checkpoint row; on success the
// transaction stays open. Memory holds one piece and what one packet of
// statements refers to, whatever the size of the transaction.
func (w *worker) applyLarge(ctx context.Context, conn *sql.Conn, work *stage.Work, path Path, turnFirst bool) (time.Duration, error) {
	t := work.Txns[0]
	p := LargeProgress{GTID: t.GTID, Path: path.String(), Pieces: t.Large.Pieces, Rows: int64(t.Txn.RowCount()), Bytes: int64(t.Txn.Bytes)}
	w.p.cfg.Observer.Progress(w.id, p)
	t0 := time.Now()
	var err error
	if path == BinlogPath {
		err = w.replayLarge(ctx, conn, work, &p)
	} else {
		err = w.executeLarge(ctx, conn, work, &p)
	}
	d := time.Since(t0)
	if err == nil {
		return d, nil
	}
	if err := w.abandon(conn, work, err, turnFirst); err != nil {
		return d, err
	}
	var ce *stage.ConflictError
	if errors.As(err, &ce) {
		return d, err
	}
	table := ""
	if tms := t.Txn.LargeTables; len(tms) == 1 {
		table = schema.TableName{Schema: string(tms[0].Schema), Name: string(tms[0].Table)}.String()
	}
	return d, &stage.ConflictError{GTID: t.GTID, Table: table, What: fmt.Sprintf("%s (a transaction of %d rows, %d bytes)", describe(err), p.Rows, p.Bytes), Err: err}
}

// replayLarge sends the pieces through the target's own row applier.
func (w *worker) replayLarge(ctx context.Context, conn *sql.Conn, work *stage.Work, p *LargeProgress) error {
	t := work.Txns[0]
	b := w.replayBuilder()
	format := w.format
	if t.Raw.Format != format {
		format = t.Raw.Format
		b.Format(format)
	}
	b.Exec("START TRANSACTION")
	bookkeeping(w.p.store, work, b.Exec)
	for i := 0; i < t.Large.Pieces; i++ {
		rt, err := t.Large.Read(i)
		if err != nil {
			return err
		}
		if err := b.Piece(0, rt, i == 0, i == t.Large.Pieces-1); err != nil {
			return &stage.ConflictError{GTID: t.GTID, What: "cannot replay its row events", Err: err}
		}
		ps := b.Drain()
		if i == t.Large.Pieces-1 {
			ps = append(ps, b.Packets()...)
		}
		if err := w.sendPackets(ctx, conn, work, ps); err != nil {
			return err
		}
		w.format = format
		p.PiecesDone++
		p.BytesDone += int64(rt.Bytes())
		w.p.cfg.Observer.Progress(w.id, *p)
	}
	return nil
}

// sendPackets runs replay packets, refusing one the target could not take.
func (w *worker) sendPackets(ctx context.Context, conn *sql.Conn, work *stage.Work, ps []replay.Packet) error {
	for _, p := range ps {
		if n := worstSize(p.SQL, p.Args); w.maxPacket > 0 && n > w.maxPacket-1024 {
			return fmt.Errorf("%w: %d bytes, max_allowed_packet %d", errPacketTooLarge, n, w.maxPacket)
		}
		if _, err := execMulti(ctx, conn, p.SQL, p.Args); err != nil {
			return err
		}
	}
	return nil
}

// executeLarge applies the pieces as SQL statements, without compaction
// (the rows of one transaction are applied in their order).
func (w *worker) executeLarge(ctx context.Context, conn *sql.Conn, work *stage.Work, p *LargeProgress) error {
	t := work.Txns[0]
	b := &w.batch
	b.Compact = false
	b.Reset()
	b.Raw("START TRANSACTION")
	dec := binlog.NewDecoder()
	var precisionErr error // the target's, while reading a table's precision
	dec.SetPrecision(targetPrecision(ctx, conn, &precisionErr))
	limit := sqlgen.DefaultMaxPacket
	if w.maxPacket > 0 {
		limit = min(limit, w.maxPacket/3)
	}
	run := func() error {
		mismatch, err := w.runBatch(ctx, conn, b, work)
		if err != nil {
			return err
		}
		if mismatch != nil {
			return mismatch
		}
		b.Reset()
		return nil
	}
	for i := 0; i < t.Large.Pieces; i++ {
		rt, err := t.Large.Read(i)
		if err != nil {
			return err
		}
		for _, sub := range cutPiece(rt, largeSlice) {
			txn, err := dec.Decode(sub)
			if err != nil {
				if precisionErr != nil {
					return precisionErr // the target failed, not the event
				}
				return err
			}
			stmts := txn.Statements
			for j, r := range txn.Rows {
				stmts = savepoints(b, stmts, j)
				table := largeTable(t, r.Table)
				if table == nil {
					return &stage.ConflictError{GTID: t.GTID, Table: r.Schema() + "." + r.Name(), What: "table not known for SQL (apply with --apply binlog or auto)"}
				}
				if err := b.Add(table, r, 0); err != nil {
					return &stage.ConflictError{GTID: t.GTID, Table: table.Name.String(), What: "cannot build SQL", Err: err}
				}
				p.RowsDone += int64(r.Changes())
				if b.Bytes() >= limit {
					if err := run(); err != nil {
						return err
					}
				}
			}
			savepoints(b, stmts, len(txn.Rows))
		}
		if i == t.Large.Pieces-1 {
			bookkeeping(w.p.store, work, b.Raw)
		}
		if err := run(); err != nil {
			return err
		}
		p.PiecesDone++
		p.BytesDone += int64(rt.Bytes())
		w.p.cfg.Observer.Progress(w.id, *p)
	}
	return nil
}

// targetPrecision is the binlog.PrecisionFunc of a worker's decoder: the
// precision of the target's columns (the pieces name the tables as the
// target does), which MariaDB's replica also takes for old-format
// temporal columns. It reads the target only for tables with such
// columns, once per table and transaction. A table it cannot read is not
// known, and the error is left in *failed: the decoder's error then names
// the event, not the cause.
func targetPrecision(ctx context.Context, conn *sql.Conn, failed *error) binlog.PrecisionFunc {
	known := map[schema.TableName][]int{}
	return func(db, table string) ([]int, bool) {
		name := schema.TableName{Schema: db, Name: table}
		if digits, ok := known[name]; ok {
			return digits, false
		}
		t, err := targetColumns(ctx, conn, name)
		if err != nil {
			*failed = err
			return nil, false
		}
		if len(t.Columns) == 0 {
			return nil, false
		}
		known[name] = t.TemporalPrecision()
		return known[name], false
	}
}

// targetColumns reads the types and precisions of a table's columns on
// the target.
func targetColumns(ctx context.Context, conn *sql.Conn, name schema.TableName) (*schema.Table, error) {
	rows, err := conn.QueryContext(ctx, `SELECT DATA_TYPE, DATETIME_PRECISION FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, name.Schema, name.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &schema.Table{Schema: name.Schema, Name: name.Name}
	for rows.Next() {
		var c schema.Column
		var precision sql.NullInt64
		if err := rows.Scan(&c.Type, &precision); err != nil {
			return nil, err
		}
		c.Type, c.Precision = strings.ToLower(c.Type), int(precision.Int64)
		t.Columns = append(t.Columns, c)
	}
	return t, rows.Err()
}

// cutPiece cuts a piece into consecutive runs of events of about n bytes.
func cutPiece(rt *binlog.RawTxn, n int) []*binlog.RawTxn {
	var out []*binlog.RawTxn
	start, size := 0, 0
	for i, ev := range rt.Events {
		size += len(ev.Data)
		if size >= n || i == len(rt.Events)-1 {
			out = append(out, &binlog.RawTxn{Events: rt.Events[start : i+1], Format: rt.Format})
			start, size = i+1, 0
		}
	}
	return out
}

// largeTable is the SQL view of the table a rows event of t refers to.
func largeTable(t *stage.Txn, tm *replication.TableMapEvent) *sqlgen.Table {
	for i, x := range t.Txn.LargeTables {
		if string(x.Schema) == string(tm.Schema) && string(x.Table) == string(tm.Table) && x.ColumnCount == tm.ColumnCount {
			return t.Large.Tables[i]
		}
	}
	return nil
}
