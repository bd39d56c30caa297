package applier

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// errPacketTooLarge is a statement that cannot reach the target even as a
// prepared statement whose large values go in pieces: a value larger than
// the target's max_allowed_packet. It is a data error (fatal).
var errPacketTooLarge = errors.New("a value larger than the target's max_allowed_packet")

// runBatch runs b's statements on conn, in packets that the target
// accepts (one, unless the transaction is large: see sqlgen.Batch.Packet),
// and checks the rows each one affected against what work's binlog says.
// err is an error of the target; mismatch, with err nil, is the first
// statement whose count differs (see check).
//
// On a MariaDB target a packet is a compound statement that checks the
// counts itself (sqlgen.Batch.Compound): one answer per packet instead of
// one per statement.
func (w *worker) runBatch(ctx context.Context, conn *sql.Conn, b *sqlgen.Batch, work *stage.Work) (mismatch, err error) {
	return w.runBatchAs(ctx, conn, b, work, w.compound)
}

// runBatchAs is runBatch, in compound statements or not as compound says.
func (w *worker) runBatchAs(ctx context.Context, conn *sql.Conn, b *sqlgen.Batch, work *stage.Work, compound bool) (mismatch, err error) {
	// Packet's limit counts arguments at their size; escaping may double
	// them, so a third of the server's limit leaves room.
	limit := sqlgen.DefaultMaxPacket
	if w.maxPacket > 0 {
		limit = min(limit, w.maxPacket/3)
	}
	packet := b.Packet
	if compound {
		packet = b.Compound
	}
	var affected []int64
	for i := 0; i < b.Len(); {
		q, args, next := packet(i, limit)
		if n := worstSize(q, args); w.maxPacket > 0 && n > w.maxPacket-1024 {
			// A statement alone too large for a text packet: a row with a
			// value near max_allowed_packet.
			n, err := w.execLong(ctx, conn, b, i)
			if err != nil {
				return nil, err
			}
			if e := b.Expects()[i]; e.Rows >= 0 && n != e.Rows {
				return rowCountConflict(work, e, n), nil
			}
			if !compound {
				affected = append(affected, n)
			}
			i++
			continue
		}
		a, err := execMulti(ctx, conn, q, args)
		if err != nil {
			var rc *sqlgen.RowCountError
			if compound && errors.As(b.CompoundError(err), &rc) {
				return rowCountConflict(work, rc.Expect, rc.Affected), nil
			}
			return nil, err
		}
		if !compound {
			affected = append(affected, a...)
		}
		i = next
	}
	if compound {
		return nil, nil // every count was checked by the target
	}
	return check(b, work, affected), nil
}

// worstSize bounds the size of query once the driver has interpolated
// args: every byte of a string escaped.
func worstSize(query string, args []any) int {
	n := len(query)
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += 2*len(v) + 2
		case []byte:
			n += 2*len(v) + 9
		default:
			n += 64
		}
	}
	return n
}

// execLong runs the i-th statement of b alone, as a server-side prepared
// statement: the driver sends each value too large for one packet in
// pieces (COM_STMT_SEND_LONG_DATA), which the server joins, so a row
// reaches the target whole as long as each of its values is within the
// target's max_allowed_packet, as a native replica applies it. It returns
// the rows the statement affected.
func (w *worker) execLong(ctx context.Context, conn *sql.Conn, b *sqlgen.Batch, i int) (int64, error) {
	q, args, next := b.Packet(i, 1)
	if next != i+1 {
		return 0, fmt.Errorf("applier: statement %d of a batch is not alone in its packet", i)
	}
	for _, a := range args {
		if n := argLen(a); n > w.maxPacket-1024 {
			return 0, fmt.Errorf("%w: a value of %d bytes, max_allowed_packet %d", errPacketTooLarge, n, w.maxPacket)
		}
	}
	stmt, err := conn.PrepareContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// argLen is the size of a string or byte string argument, 0 for others.
func argLen(a any) int {
	switch v := a.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	}
	return 0
}

// execMulti sends a packet of statements and returns each one's affected
// rows.
func execMulti(ctx context.Context, conn *sql.Conn, query string, args []any) ([]int64, error) {
	var affected []int64
	err := conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("the target driver cannot execute statements directly")
		}
		named := make([]driver.NamedValue, len(args))
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: driverValue(a)}
		}
		res, err := ex.ExecContext(ctx, query, named)
		if err != nil {
			return err
		}
		affected = res.(mysql.Result).AllRowsAffected()
		return nil
	})
	return affected, err
}

// driverValue converts a decoded binlog value to one of the types the
// driver interpolates.
func driverValue(v any) driver.Value {
	switch v := v.(type) {
	case nil, int64, uint64, float64, bool, []byte, string, time.Time:
		return v
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case int:
		return int64(v)
	case uint8:
		return uint64(v)
	case uint16:
		return uint64(v)
	case uint32:
		return uint64(v)
	case uint:
		return uint64(v)
	case float32:
		return float64(v)
	}
	return fmt.Sprint(v)
}
