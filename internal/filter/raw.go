package filter

import (
	"fmt"
	"slices"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
)

// Raw filters the events of one transaction as Txn filtered its decoded
// form, for the target's own row applier (BINLOG statements) and for the
// pieces of a large transaction, which are decoded again as they are
// applied:
//
//   - the table map and rows events of a table left out go, and the table
//     maps of the tables kept name their database as renamed;
//   - a statement's table maps are held until one of its rows events is
//     kept (a statement left out entirely leaves nothing), and its last
//     rows event kept gets the end-of-statement flag when the one that
//     had it went: the server keeps a statement's tables open until that
//     flag;
//   - the query events of statement-format DML Txn left out go.
//
// The events it changes are copies: the source's stay as they were. A
// Raw carries a statement over from one piece to the next. A Raw is not
// safe for concurrent use, but Raws may run beside their Filter (they
// only read its rules).
type Raw struct {
	rules   *Rules
	dropDML bool
	// whole drops every table map and rows event: the transaction was
	// left out whole, and a piece may come without its table maps (the
	// last piece of a large transaction, read alone).
	whole   bool
	keep    map[uint64]bool // table id: its rows are kept
	pending []binlog.Event  // the statement's table maps kept, not yet out
	held    *binlog.Event   // the statement's last rows event kept, not yet out
	out     []binlog.Event
}

// Raw returns a filter of the events of the transaction whose filtering
// said o.
func (f *Filter) Raw(o Outcome) *Raw {
	return &Raw{rules: &f.rules, dropDML: o.DroppedDML, whole: o.Whole, keep: map[uint64]bool{}}
}

// Piece filters rt, the transaction or its next piece; last says it is
// the last one.
func (r *Raw) Piece(rt *binlog.RawTxn, last bool) (*binlog.RawTxn, error) {
	r.out = make([]binlog.Event, 0, len(rt.Events))
	checksum := rt.Format != nil && rt.Format.Checksum
	for _, ev := range rt.Events {
		typ := ev.Type()
		switch {
		case typ == replication.TABLE_MAP_EVENT:
			if err := r.tableMap(ev, checksum); err != nil {
				return nil, err
			}
		case binlog.IsRowsEvent(typ):
			r.rows(ev, checksum)
		case typ == replication.TRANSACTION_PAYLOAD_EVENT:
			return nil, fmt.Errorf("%s: a compressed transaction payload (binlog_transaction_compression) cannot be filtered or renamed event by event", ev.Pos)
		case typ == replication.QUERY_EVENT || typ == replication.MARIADB_QUERY_COMPRESSED_EVENT:
			r.release()
			if r.dropDML {
				q, err := binlog.QueryText(ev, rt.Format)
				if err != nil {
					return nil, err
				}
				if binlog.ClassifyStatement(q) == binlog.StmtDML {
					continue
				}
			}
			r.out = append(r.out, ev)
		default:
			r.release()
			r.out = append(r.out, ev)
		}
	}
	if last {
		r.release()
		r.pending = nil
	}
	out := *rt
	out.Events = r.out
	r.out = nil
	return &out, nil
}

// tableMap decides a table map's table, and holds the map if it is kept.
func (r *Raw) tableMap(ev binlog.Event, checksum bool) error {
	schema, table, err := binlog.TableMapNames(ev)
	if err != nil {
		return fmt.Errorf("%s: %w", ev.Pos, err)
	}
	db, renamed := r.rules.Database(schema)
	keep := r.rules.Table(db, table) && !r.whole
	r.keep[binlog.TableID(ev)] = keep
	if !keep {
		return nil
	}
	if renamed {
		out, err := binlog.RewriteTableMapSchema(ev, db, checksum)
		if err != nil {
			return fmt.Errorf("%s: %w", ev.Pos, err)
		}
		ev = out
	}
	r.pending = append(r.pending, ev)
	return nil
}

// rows keeps or drops a rows event, and ends the statement at the flag.
func (r *Raw) rows(ev binlog.Event, checksum bool) {
	end := binlog.RowsFlags(ev)&binlog.RowsFlagStmtEnd != 0
	keep, known := r.keep[binlog.TableID(ev)]
	known = known || r.whole
	switch {
	case keep || !known:
		// (A rows event without its table map goes on as it came: the
		// target's applier says what it makes of it.)
		r.release()
		r.out = append(r.out, r.pending...)
		r.pending = r.pending[:0]
		r.held = &ev
	case end && r.held != nil:
		moved := binlog.Event{Data: slices.Clone(r.held.Data), Pos: r.held.Pos}
		binlog.SetRowsFlags(moved.Data, binlog.RowsFlagStmtEnd, checksum)
		r.held = &moved
	}
	if end {
		r.release()
		r.pending = r.pending[:0]
	}
}

// release sends the held rows event out.
func (r *Raw) release() {
	if r.held != nil {
		r.out = append(r.out, *r.held)
		r.held = nil
	}
}
