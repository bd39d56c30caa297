package clone

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/checkpoint"
)

// mend brings the chunks a killed run committed of a table it had not
// finished to this run's snapshot: their rows are as of that run's
// snapshot, the source may have changed them since, and such a table's
// changes are not replicated to it (they would meet the rows not copied
// yet). Each chunk's range is compared as verify compares chunks (a
// checksum on each side, then key and row hash of each row where they
// differ), and the rows that differ are written again, from the source's
// snapshot, in one target transaction per chunk: the rows changed since,
// not the chunk. mend returns how many rows it wrote or deleted.
func (c *Cloner) mend(ctx context.Context, src *sql.Conn, w *writer, tr *tableRun, chunks []checkpoint.CloneChunk) (int64, error) {
	var fixed int64
	for _, ch := range chunks {
		n, err := c.mendChunk(ctx, src, w, tr, ch)
		if err != nil {
			return fixed, fmt.Errorf("table %s, chunk %d.%d (keys after %s): comparing it with the source again: %w", tr.t, ch.Segment, ch.Seq, showStored(ch.Lower), err)
		}
		fixed += n
	}
	return fixed, nil
}

// mendChunk mends one chunk's range.
func (c *Cloner) mendChunk(ctx context.Context, src *sql.Conn, w *writer, tr *tableRun, ch checkpoint.CloneChunk) (int64, error) {
	lower, err := decodeBound(ch.Lower)
	if err != nil {
		return 0, err
	}
	upper, err := decodeBound(ch.Upper)
	if err != nil {
		return 0, err
	}
	where, args := tr.keys.Where(lower, upper)
	srcFrom, dstFrom := tr.from, quoteTable(tr.t.dst.Schema, tr.t.dst.Name)
	_, s, err := firstRow(ctx, src.QueryContext, inline(tr.keys.ChecksumSQL(srcFrom, where), args))
	if err != nil {
		return 0, fmt.Errorf("source: %w", err)
	}
	_, t, err := firstRow(ctx, w.tgt.QueryContext, inline(tr.keys.ChecksumSQL(dstFrom, where), args))
	if err != nil {
		return 0, fmt.Errorf("target: %w", err)
	}
	if strings.Join(s, " ") == strings.Join(t, " ") {
		return 0, nil
	}
	srcRows, err := hashes(ctx, src.QueryContext, inline(tr.keys.HashesSQL(srcFrom, where), args), tr.keyCols)
	if err != nil {
		return 0, fmt.Errorf("source: %w", err)
	}
	tgtRows, err := hashes(ctx, w.tgt.QueryContext, inline(tr.keys.HashesSQL(dstFrom, where), args), tr.keyCols)
	if err != nil {
		return 0, fmt.Errorf("target: %w", err)
	}
	var gone, write []bound // rows to delete on the target; to write from the source
	for id, r := range tgtRows {
		if s, ok := srcRows[id]; !ok || s.hash != r.hash {
			gone = append(gone, r.key)
		}
	}
	for id, r := range srcRows {
		if t, ok := tgtRows[id]; !ok || t.hash != r.hash {
			write = append(write, r.key)
		}
	}
	return int64(len(gone) + len(write)), c.rewrite(ctx, src, w, tr, gone, write)
}

// rewrite deletes the rows gone on the target and writes those of write
// from the source, in one target transaction.
func (c *Cloner) rewrite(ctx context.Context, src *sql.Conn, w *writer, tr *tableRun, gone, write []bound) error {
	tx, err := w.tgt.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after Commit, a no-op
	dst := quoteTable(tr.t.dst.Schema, tr.t.dst.Name)
	for _, k := range gone {
		cond, args := tr.keys.Equal(k)
		if _, err := tx.ExecContext(ctx, inline("DELETE FROM "+dst+" WHERE "+cond, args)); err != nil {
			return fmt.Errorf("target: %w", err)
		}
	}
	const batch = 100
	for i := 0; i < len(write); i += batch {
		var conds []string
		var args []any
		for _, k := range write[i:min(i+batch, len(write))] {
			cond, a := tr.keys.Equal(k)
			conds, args = append(conds, "("+cond+")"), append(args, a...)
		}
		q := inline("SELECT "+tr.selectList()+" FROM "+tr.from+" WHERE "+strings.Join(conds, " OR "), args)
		p, _, _, err := (&reader{conn: src, bytes: 1 << 62}).rowsOf(ctx, tr, q, len(write))
		if err != nil {
			return fmt.Errorf("source: %w", err)
		}
		if err := w.insert(ctx, tx, tr, p); err != nil {
			return fmt.Errorf("target: %w", err)
		}
	}
	return tx.Commit()
}

// keyedHash is a row's key and row hash.
type keyedHash struct {
	key  bound
	hash string
}

// hashes runs q (Keys.HashesSQL) and returns its rows by key.
func hashes(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error), q string, keyCols int) (map[string]keyedHash, error) {
	rows, err := query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]keyedHash{}
	vals, dest := scanDest(keyCols + 1)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		k := make(bound, keyCols)
		for i := range k {
			k[i] = string(vals[i])
		}
		out[strings.Join(k, "\x00")] = keyedHash{key: k, hash: string(vals[keyCols])}
	}
	return out, rows.Err()
}

// firstRow runs q and returns its columns and its first row's values as
// text (NULL as "").
func firstRow(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error), q string) ([]string, []string, error) {
	rows, err := query(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	vals, dest := scanDest(len(cols))
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%s: no row", q)
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, nil, err
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return cols, out, rows.Err()
}
