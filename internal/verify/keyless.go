package verify

import (
	"context"
	"database/sql"
	"fmt"
)

// hashGroups reads the (hash, number of rows) groups of a keyless table in
// hash order, one at a time.
type hashGroups struct {
	s    *session
	rows *sql.Rows
	hash string
	n    int
	ok   bool // hash and n hold a group; false at the end
}

func (g *hashGroups) next() error {
	g.ok = g.rows.Next()
	if !g.ok {
		if err := g.rows.Err(); err != nil {
			return g.s.errorf(err)
		}
		return nil
	}
	if err := g.rows.Scan(&g.hash, &g.n); err != nil {
		return g.s.errorf(err)
	}
	return nil
}

// groupDiff is a row hash held by more rows on one side than on the other.
type groupDiff struct {
	hash  string
	kind  RowKind
	count int
}

// drillKeyless lists the differing rows of a keyless table: it merges the
// two sides' row hashes, grouped and sorted by the servers, and then reads
// the listed rows whole.
func (c *checker) drillKeyless(ctx context.Context, d *ChunkDiff) error {
	listed, err := c.mergeGroups(ctx, d)
	if err != nil {
		return err
	}
	return c.showKeyless(ctx, d, listed)
}

// mergeGroups counts the rows missing and extra on the target into d and
// returns the first of them, while the table's budget lasts.
func (c *checker) mergeGroups(ctx context.Context, d *ChunkDiff) ([]groupDiff, error) {
	src, tgt := &hashGroups{s: c.src}, &hashGroups{s: c.tgt}
	for _, g := range []*hashGroups{src, tgt} {
		rows, err := g.s.query(ctx, c.p.groupsSQL(g.s.from)) //nolint:rowserrcheck // hashGroups.next checks rows.Err at the end
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		g.rows = rows
		if err := g.next(); err != nil {
			return nil, err
		}
	}
	d.Drilled = true
	var listed []groupDiff
	note := func(hash string, kind RowKind, count int) {
		if kind == RowMissing {
			d.Missing += count
		} else {
			d.Extra += count
		}
		if len(listed) < c.budget {
			listed = append(listed, groupDiff{hash, kind, count})
		}
	}
	for src.ok || tgt.ok {
		var err error
		switch {
		case src.ok && (!tgt.ok || src.hash < tgt.hash):
			note(src.hash, RowMissing, src.n)
			err = src.next()
		case tgt.ok && (!src.ok || tgt.hash < src.hash):
			note(tgt.hash, RowExtra, tgt.n)
			err = tgt.next()
		default:
			if src.n > tgt.n {
				note(src.hash, RowMissing, src.n-tgt.n)
			} else if tgt.n > src.n {
				note(src.hash, RowExtra, tgt.n-src.n)
			}
			if err = src.next(); err == nil {
				err = tgt.next()
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return listed, nil
}

// showKeyless reads the rows of the listed hashes, from the source for rows
// missing on the target and from the target for extra ones, and adds them
// to d.
func (c *checker) showKeyless(ctx context.Context, d *ChunkDiff, listed []groupDiff) error {
	shown := map[string][]Value{}
	for _, side := range []struct {
		s    *session
		kind RowKind
	}{{c.src, RowMissing}, {c.tgt, RowExtra}} {
		var args []any
		for _, l := range listed {
			if l.kind == side.kind {
				args = append(args, l.hash)
			}
		}
		if args == nil {
			continue
		}
		err := side.s.each(ctx, c.p.rowsByHashSQL(side.s.from, len(args)), args, func(r *sql.Rows) error {
			var h string
			vals := make([]sql.NullString, len(c.p.cols))
			dest := []any{&h}
			for i := range vals {
				dest = append(dest, &vals[i])
			}
			if err := r.Scan(dest...); err != nil {
				return err
			}
			if _, ok := shown[h]; ok {
				return nil // a duplicate row
			}
			row := make([]Value, len(vals))
			for i, v := range vals {
				col := c.p.cols[i]
				switch {
				case !v.Valid:
					row[i] = Value{Null: true}
				case isBinary(col):
					row[i] = Value{Text: "0x" + v.String, bare: true}
				default:
					row[i] = Value{Text: v.String, bare: isNumeric(col)}
				}
			}
			shown[h] = row
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, l := range listed {
		row, ok := shown[l.hash]
		if !ok {
			return fmt.Errorf("row with hash %s vanished from the snapshot", l.hash)
		}
		c.list(d, l.kind, row, l.count)
	}
	return nil
}
