package clone

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/paraply/paraply/internal/checkpoint"
)

// reader reads tables chunk by chunk in its snapshot session and sends
// the chunks to the workers.
type reader struct {
	conn     *sql.Conn
	position string // the snapshot's
	rows     int    // Config.ChunkRows
	bytes    int    // Config.ChunkBytes
	budget   *budget
	throttle *throttle
	out      chan<- *chunk
}

// table reads every hole of tr.
func (r *reader) table(ctx context.Context, tr *tableRun) error {
	for _, h := range tr.holes {
		seg := tr.nextSegment
		tr.nextSegment++
		var err error
		if tr.keys == nil {
			err = r.whole(ctx, tr, seg)
		} else {
			err = r.segment(ctx, tr, seg, h)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// segment reads hole h of a keyed table as segment seg, chunk by chunk:
// each chunk the rows after the last one's last key, in key order, up to
// ChunkRows rows or ChunkBytes bytes.
func (r *reader) segment(ctx context.Context, tr *tableRun, seg int, h span) error {
	lower, err := decodeBound(h.lower)
	if err != nil {
		return err
	}
	upper, err := decodeBound(h.upper)
	if err != nil {
		return err
	}
	limit := r.rows
	sel := "SELECT " + tr.selectList() + " FROM " + tr.from
	for seq := 1; ; seq++ {
		where, args := tr.keys.Where(lower, upper)
		q := inline(sel+where+tr.keys.OrderBy()+" LIMIT "+strconv.Itoa(limit+1), args)
		rec := checkpoint.CloneChunk{Schema: tr.t.src.Schema, Name: tr.t.src.Name, Segment: seg, Seq: seq,
			Lower: encodeBound(lower), Position: r.position, SegmentBounds: [2]*string{h.lower, h.upper}}
		p, key, more, err := r.rowsOf(ctx, tr, q, limit)
		if err != nil {
			return fmt.Errorf("table %s, chunk %d.%d (keys after %s): reading it on the source: %w", tr.t, seg, seq, showBound(lower), err)
		}
		rec.Last = !more
		rec.Upper = encodeBound(key)
		if rec.Last {
			rec.Upper = h.upper
		}
		rec.Rows, rec.Bytes = int64(p.rows()), int64(len(p.data))
		c := &chunk{tr: tr, rec: rec, parts: make(chan part, 1)}
		if tr.clear {
			w, a := tr.keys.Where(lower, upper)
			if !rec.Last {
				w, a = tr.keys.Where(lower, key)
			}
			c.clear = inline("DELETE FROM "+quoteTable(tr.t.dst.Schema, tr.t.dst.Name)+w, a)
		}
		if err := r.send(ctx, c, p); err != nil {
			return err
		}
		if err := r.throttle.wait(ctx, p.rows()); err != nil {
			return err
		}
		if rec.Last {
			return nil
		}
		lower = key
		// Rows of this size fill ChunkBytes in about this many.
		if p.rows() > 0 {
			limit = int(min(int64(r.rows), max(1, int64(r.bytes)*int64(p.rows())/int64(len(p.data))+1)))
		}
	}
}

// rowsOf runs q, a chunk's query for limit rows and one more (which
// tells whether the chunk ends its range), and encodes up to limit rows;
// it stops early (cut) once they hold ChunkBytes. key is the last row's
// key; more says rows follow it.
func (r *reader) rowsOf(ctx context.Context, tr *tableRun, q string, limit int) (p part, key bound, more bool, err error) {
	rows, err := r.conn.QueryContext(ctx, q)
	if err != nil {
		return p, nil, false, err
	}
	defer rows.Close()
	vals, dest := scanDest(len(tr.cols) + tr.keyCols)
	for rows.Next() {
		if p.rows() == limit || len(p.data) >= r.bytes {
			more = true
			break
		}
		if err := rows.Scan(dest...); err != nil {
			return p, nil, false, err
		}
		p.data = tr.appendRow(p.data, vals)
		p.ends = append(p.ends, len(p.data))
		key = key[:0]
		for _, v := range vals[len(tr.cols):] {
			key = append(key, string(v))
		}
	}
	if err := rows.Err(); err != nil {
		return p, nil, false, err
	}
	if p.rows() == 0 {
		key = nil
	}
	return p, key, more, nil
}

// whole reads a table without a usable key, or a system-versioned one
// with its history, as one chunk (segment seg), in parts of ChunkBytes
// that a worker inserts as they come.
func (r *reader) whole(ctx context.Context, tr *tableRun, seg int) error {
	c := &chunk{tr: tr, parts: make(chan part, 1), rec: checkpoint.CloneChunk{Schema: tr.t.src.Schema, Name: tr.t.src.Name,
		Segment: seg, Seq: 1, Last: true, Position: r.position}}
	if tr.clear {
		c.clear = "DELETE FROM " + quoteTable(tr.t.dst.Schema, tr.t.dst.Name)
	}
	tr.sent()
	select {
	case r.out <- c:
	case <-ctx.Done():
		return ctx.Err()
	}
	// The parts end (the channel closes) only once all are read: a chunk
	// whose reading fails is never committed with part of its rows (its
	// worker waits for the next part until the run ends).
	if err := r.stream(ctx, tr, c); err != nil {
		return err
	}
	close(c.parts)
	return nil
}

// stream reads tr's rows into c's parts.
func (r *reader) stream(ctx context.Context, tr *tableRun, c *chunk) error {
	rows, err := r.conn.QueryContext(ctx, "SELECT "+tr.selectList()+" FROM "+tr.from)
	if err != nil {
		return fmt.Errorf("table %s (one piece): reading it on the source: %w", tr.t, err)
	}
	defer rows.Close()
	vals, dest := scanDest(len(tr.cols))
	var p part
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("table %s (one piece): reading it on the source: %w", tr.t, err)
		}
		p.data = tr.appendRow(p.data, vals)
		p.ends = append(p.ends, len(p.data))
		if len(p.data) >= r.bytes {
			if err := r.part(ctx, c, p); err != nil {
				return err
			}
			if err := r.throttle.wait(ctx, p.rows()); err != nil {
				return err
			}
			p = part{}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("table %s (one piece): reading it on the source: %w", tr.t, err)
	}
	return r.part(ctx, c, p)
}

// send sends c, whose rows are p, to the workers.
func (r *reader) send(ctx context.Context, c *chunk, p part) error {
	c.tr.sent()
	if err := r.part(ctx, c, p); err != nil {
		return err
	}
	close(c.parts)
	select {
	case r.out <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// part hands p to c's worker once the budget lets it be held.
func (r *reader) part(ctx context.Context, c *chunk, p part) error {
	held, err := r.budget.take(ctx, int64(len(p.data)))
	if err != nil {
		return err
	}
	p.held = held
	select {
	case c.parts <- p:
		return nil
	case <-ctx.Done():
		r.budget.give(held)
		return ctx.Err()
	}
}

// scanDest returns n raw values and the scan destinations for them.
func scanDest(n int) ([]sql.RawBytes, []any) {
	vals := make([]sql.RawBytes, n)
	dest := make([]any, n)
	for i := range vals {
		dest[i] = &vals[i]
	}
	return vals, dest
}

// appendRow appends the row vals as tr writes it: a line of LOAD DATA's
// fields, or a tuple of literals for INSERT.
func (tr *tableRun) appendRow(b []byte, vals []sql.RawBytes) []byte {
	if tr.load == "" {
		return appendTuple(b, tr.cols, vals)
	}
	for i := range tr.cols {
		if i > 0 {
			b = append(b, '\t')
		}
		b = appendField(b, vals[i])
	}
	return append(b, '\n')
}

// appendTuple appends the row vals (the columns cols, then maybe key
// values, which it leaves out) as a tuple of literals.
func appendTuple(b []byte, cols []column, vals []sql.RawBytes) []byte {
	b = append(b, '(')
	for i := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendValue(b, &cols[i], vals[i])
	}
	return append(b, ')')
}

// showBound shows a bound in errors.
func showBound(b bound) string {
	if b == nil {
		return "the start"
	}
	return fmt.Sprintf("%q", []string(b))
}
