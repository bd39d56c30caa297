package verify

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

// checker compares the rows of one table that has the same columns on both
// sides. It is used by one goroutine; a chunk's two checksums run
// concurrently, each on its own session.
type checker struct {
	p         *plan
	chunkSize int
	src, tgt  *session
	rep       *TableReport
	budget    int // differing rows still to list
}

// checkTable compares the rows of t (the source's description) with those
// of target, the table's name on the target, and fills rep: the status, the
// chunks and the differences, or the error.
func checkTable(ctx context.Context, opts *Options, t *table, target TableName, rep *TableReport) {
	began := time.Now()
	err := compareRows(ctx, opts, t, target, rep)
	rep.Seconds = time.Since(began).Seconds()
	switch {
	case err != nil:
		rep.Status, rep.Error = StatusError, err.Error()
	case len(rep.Diffs) > 0:
		rep.Status = StatusDifferent
	default:
		rep.Status = StatusOK
	}
}

func compareRows(ctx context.Context, opts *Options, t *table, target TableName, rep *TableReport) error {
	p, err := newPlan(t)
	if err != nil {
		return err
	}
	rep.KeyName, rep.KeyColumns = p.keyName, p.keyColumns()
	src, err := openSession(ctx, opts.Source, "source", t.Name)
	if err != nil {
		return err
	}
	defer src.close()
	tgt, err := openSession(ctx, opts.Target, "target", target)
	if err != nil {
		return err
	}
	defer tgt.close()
	c := &checker{p: p, chunkSize: opts.ChunkSize, src: src, tgt: tgt, rep: rep, budget: opts.MaxRows}
	if p.key == nil {
		_, err := c.chunk(ctx, 1, nil, nil)
		return err
	}
	return c.walk(ctx)
}

// bound is a chunk boundary: the key of the chunk's last source row.
type bound struct {
	raw   []string // as keyCol.raw reads them, for keyCol.param
	shown []Value
}

func (b *bound) rawOrNil() []string {
	if b == nil {
		return nil
	}
	return b.raw
}

func (b *bound) shownOrNil() []Value {
	if b == nil {
		return nil
	}
	return b.shown
}

// walk compares the table chunk by chunk. Each chunk is one round trip on
// each side: the source's query also returns the next chunk's upper bound.
func (c *checker) walk(ctx context.Context) error {
	var lower *bound
	upper, err := c.boundary(ctx, nil)
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		next, err := c.chunk(ctx, n, lower, upper)
		if err != nil {
			return err
		}
		if upper == nil {
			return nil
		}
		lower, upper = upper, next
	}
}

// boundary returns the key of the chunkSize-th source row after lower, or
// nil if fewer rows are left (the last chunk is open-ended).
func (c *checker) boundary(ctx context.Context, lower *bound) (*bound, error) {
	where, args := c.p.where(lower.rawOrNil(), nil)
	var b *bound
	err := c.src.each(ctx, c.p.boundarySQL(c.src.from, where), append(args, c.chunkSize-1), func(r *sql.Rows) error {
		var err error
		b, err = c.scanKey(r)
		return err
	})
	return b, err
}

// keyDest returns scan destinations for the key select list
// (plan.keySelect).
func (c *checker) keyDest() ([]sql.NullString, []any) {
	vals := make([]sql.NullString, 2*len(c.p.key))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	return vals, dest
}

// scanKey reads the key select list, then extra.
func (c *checker) scanKey(r *sql.Rows, extra ...any) (*bound, error) {
	vals, dest := c.keyDest()
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	return c.newBound(vals), nil
}

// newBound makes a bound of the values read by keyDest.
func (c *checker) newBound(vals []sql.NullString) *bound {
	n := len(c.p.key)
	b := &bound{raw: make([]string, n), shown: make([]Value, n)}
	for i, k := range c.p.key {
		raw, disp := vals[i], vals[n+i]
		b.raw[i] = raw.String
		switch {
		case !raw.Valid:
			b.shown[i] = Value{Null: true}
		case k.disp == "":
			b.shown[i] = Value{Text: "0x" + raw.String, bare: true}
		default:
			b.shown[i] = Value{Text: disp.String, bare: k.bare}
		}
	}
	return b
}

// sums is what each side computes for a chunk.
type sums struct {
	count      int64
	sum, xor   string
	nullHashes int64
}

// scan reads the checksum columns of checksumSQL, then extra.
func (s *sums) scan(r *sql.Rows, extra ...any) (ok bool, err error) {
	var count, nulls sql.NullInt64
	var sum, xor sql.NullString
	if err := r.Scan(append([]any{&count, &sum, &xor, &nulls}, extra...)...); err != nil {
		return false, err
	}
	if !count.Valid { // the boundary row of sourceChunkSQL
		return false, nil
	}
	*s = sums{count: count.Int64, sum: sum.String, xor: xor.String, nullHashes: nulls.Int64}
	return true, nil
}

// check reports rows whose hash is NULL: CONCAT_WS returns NULL when its
// result would exceed max_allowed_packet, and such rows would drop out of
// the aggregates.
func (s *sums) check(side string) error {
	if s.nullHashes > 0 {
		return fmt.Errorf("%s: %d rows have a NULL row hash (is max_allowed_packet too small?)", side, s.nullHashes)
	}
	return nil
}

// chunk compares chunk n, (lower, upper], records it if it differs, and
// returns the next chunk's upper bound.
func (c *checker) chunk(ctx context.Context, n int, lower, upper *bound) (next *bound, err error) {
	where, args := c.p.where(lower.rawOrNil(), upper.rawOrNil())
	var s, t sums
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { s, next, err = c.sourceChunk(gctx, where, args, upper); return err })
	g.Go(func() (err error) {
		t, err = checksum(gctx, c.tgt, c.p.checksumSQL(c.tgt.from, where, ""), args)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("chunk %d: %w", n, err)
	}
	if upper != nil && s.count != int64(c.chunkSize) {
		// In one snapshot, (lower, upper] holds exactly the chunkSize rows
		// the boundary query counted, unless a bound did not survive the
		// round trip through keyCol.param; the walk would then skip rows,
		// count them twice, or never end.
		return nil, fmt.Errorf("chunk %d: %d source rows in %s, want %d: the key does not round-trip", n, s.count, c.rangeText(lower, upper), c.chunkSize)
	}
	c.rep.Chunks++
	c.rep.SourceRows += s.count
	c.rep.TargetRows += t.count
	if s == t {
		return next, nil
	}
	d := ChunkDiff{Chunk: n, Lower: lower.shownOrNil(), Upper: upper.shownOrNil(), SourceRows: s.count, TargetRows: t.count}
	if c.budget > 0 {
		if c.p.key == nil {
			err = c.drillKeyless(ctx, &d)
		} else {
			err = c.drillKeyed(ctx, &d, where, args)
		}
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", n, err)
		}
	}
	c.rep.Diffs = append(c.rep.Diffs, d)
	return next, nil
}

// sourceChunk computes the source's sums of the chunk selected by where
// and, unless the chunk is the last (upper is nil), the next chunk's upper
// bound.
func (c *checker) sourceChunk(ctx context.Context, where string, args []any, upper *bound) (sums, *bound, error) {
	if upper == nil {
		s, err := checksum(ctx, c.src, c.p.checksumSQL(c.src.from, where, ""), args)
		return s, nil, err
	}
	nextWhere, nextArgs := c.p.where(upper.raw, nil)
	q := c.p.sourceChunkSQL(c.src.from, where, nextWhere)
	args = append(append(append([]any(nil), args...), nextArgs...), c.chunkSize-1)
	var s sums
	var next *bound
	err := c.src.each(ctx, q, args, func(r *sql.Rows) error {
		vals, dest := c.keyDest()
		ok, err := s.scan(r, dest...)
		if err == nil && !ok {
			next = c.newBound(vals)
		}
		return err
	})
	if err == nil {
		err = s.check(c.src.name)
	}
	return s, next, err
}

// checksum runs the checksum query q on one side.
func checksum(ctx context.Context, s *session, q string, args []any) (sums, error) {
	var out sums
	err := s.each(ctx, q, args, func(r *sql.Rows) error {
		_, err := out.scan(r)
		return err
	})
	if err == nil {
		err = out.check(s.name)
	}
	return out, err
}

// rangeText shows (lower, upper] for errors.
func (c *checker) rangeText(lower, upper *bound) string {
	return c.rep.chunkRange(&ChunkDiff{Lower: lower.shownOrNil(), Upper: upper.shownOrNil()})
}

// keyedRow is a row of a chunk as drillKeyed reads it.
type keyedRow struct {
	key  *bound
	id   string // the raw key values joined, to match rows across sides
	hash string
}

// drillKeyed lists the differing rows of a chunk of a keyed table: it reads
// the key and hash of every row on both sides and merges the two lists,
// which the servers sorted in the same (key) order.
func (c *checker) drillKeyed(ctx context.Context, d *ChunkDiff, where string, args []any) error {
	var srcRows, tgtRows []keyedRow
	read := func(ctx context.Context, s *session, out *[]keyedRow) error {
		return s.each(ctx, c.p.rowsSQL(s.from, where), args, func(r *sql.Rows) error {
			var h string
			k, err := c.scanKey(r, &h)
			if err != nil {
				return err
			}
			*out = append(*out, keyedRow{key: k, id: joinRaw(k.raw), hash: h})
			return nil
		})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return read(gctx, c.src, &srcRows) })
	g.Go(func() error { return read(gctx, c.tgt, &tgtRows) })
	if err := g.Wait(); err != nil {
		return err
	}
	onSource, onTarget := ids(srcRows), ids(tgtRows)
	d.Drilled = true
	for i, j := 0, 0; i < len(srcRows) || j < len(tgtRows); {
		switch {
		case i < len(srcRows) && j < len(tgtRows) && srcRows[i].id == tgtRows[j].id:
			if srcRows[i].hash != tgtRows[j].hash {
				d.Changed++
				c.list(d, RowChanged, srcRows[i].key.shown, 1)
			}
			i, j = i+1, j+1
		case j < len(tgtRows) && !onSource[tgtRows[j].id]:
			d.Extra++
			c.list(d, RowExtra, tgtRows[j].key.shown, 1)
			j++
		case i < len(srcRows) && !onTarget[srcRows[i].id]:
			d.Missing++
			c.list(d, RowMissing, srcRows[i].key.shown, 1)
			i++
		default:
			// Both rows exist on the other side too, at another place: the
			// servers order the key differently.
			return fmt.Errorf("source and target order rows differently near key %s", valueTuple(srcRows[i].key.shown))
		}
	}
	return nil
}

func joinRaw(raw []string) string {
	n := 0
	for _, r := range raw {
		n += len(r) + 1
	}
	b := make([]byte, 0, n)
	for _, r := range raw {
		b = append(append(b, r...), 0) // raw values are text without NULs
	}
	return string(b)
}

func ids(rows []keyedRow) map[string]bool {
	m := make(map[string]bool, len(rows))
	for _, r := range rows {
		m[r.id] = true
	}
	return m
}

// list adds a differing row to d while the table's budget lasts.
func (c *checker) list(d *ChunkDiff, kind RowKind, key []Value, count int) {
	if c.budget <= 0 {
		return
	}
	c.budget--
	d.Rows = append(d.Rows, RowDiff{Kind: kind, Key: key, Count: count})
}
