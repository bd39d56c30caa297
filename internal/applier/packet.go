package applier

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/paraply/paraply/internal/sqlgen"
)

// errPacketTooLarge is a statement that cannot reach the target in one
// packet: a row larger than the target's max_allowed_packet. It is a
// data error (fatal): sending it anyway makes the server drop the
// connection, and the driver, above its own limit, falls back to
// server-side prepared statements, which multi-statement text breaks.
var errPacketTooLarge = errors.New("statement larger than the target's max_allowed_packet")

// runBatch runs b's statements on conn, in packets that the target
// accepts (one, unless the transaction is large: see sqlgen.Batch.Packet),
// and checks the rows each one affected against what work's binlog says.
// err is an error of the target; mismatch, with err nil, is the first
// statement whose count differs (see check).
//
// On a MariaDB target a packet is a compound statement that checks the
// counts itself (sqlgen.Batch.Compound): one answer per packet instead of
// one per statement.
func (w *worker) runBatch(ctx context.Context, conn *sql.Conn, b *sqlgen.Batch, work *Work) (mismatch, err error) {
	// Packet's limit counts arguments at their size; escaping may double
	// them, so a third of the server's limit leaves room.
	limit := sqlgen.DefaultMaxPacket
	if w.maxPacket > 0 {
		limit = min(limit, w.maxPacket/3)
	}
	packet := b.Packet
	if w.compound {
		packet = b.Compound
	}
	var affected []int64
	for i := 0; i < b.Len(); {
		q, args, next := packet(i, limit)
		if n := worstSize(q, args); w.maxPacket > 0 && n > w.maxPacket-1024 {
			return nil, fmt.Errorf("%w: up to %d bytes, max_allowed_packet %d", errPacketTooLarge, n, w.maxPacket)
		}
		a, err := execMulti(ctx, conn, q, args)
		if err != nil {
			var rc *sqlgen.RowCountError
			if w.compound && errors.As(b.CompoundError(err), &rc) {
				return rowCountConflict(work, rc.Expect, rc.Affected), nil
			}
			return nil, err
		}
		if !w.compound {
			affected = append(affected, a...)
		}
		i = next
	}
	if w.compound {
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
