package clone

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/mysqlerr"
)

// writer inserts chunks on the target, each with its row in clone_chunks
// in one transaction: a chunk is on the target and recorded, or neither.
type writer struct {
	tgt    *sql.DB // writeSession's pool
	store  *checkpoint.CloneStore
	budget *budget
	// maxStatement bounds an INSERT (its rows are split over several).
	maxStatement int
	// maxPacket is the target's max_allowed_packet: a row larger cannot
	// be written.
	maxPacket int
	// done is told of each chunk committed (the table's progress).
	done func(c *chunk)
}

// attempts is how many times a chunk whose transaction fails for a
// reason that passes (a deadlock, a lost connection) is written.
const attempts = 5

// write writes c. A chunk read whole is written again after an error that
// running it again may cure; a chunk of parts cannot be (its parts are
// gone once written), and its error ends the run: the next run reads it
// again.
func (w *writer) write(ctx context.Context, c *chunk) error {
	var parts []part
	streamed := c.tr.keys == nil
	if !streamed {
		for p := range c.parts {
			parts = append(parts, p)
		}
		defer func() {
			for _, p := range parts {
				w.budget.give(p.held)
			}
		}()
	}
	var err error
	for n := 1; n <= attempts; n++ {
		if err = w.attempt(ctx, c, parts, streamed); err == nil || streamed || !mysqlerr.Retryable(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(time.Duration(n) * 200 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	if err != nil {
		return fmt.Errorf("table %s, chunk %d.%d (%d rows, keys after %s): writing it on the target: %w",
			c.tr.t, c.rec.Segment, c.rec.Seq, c.rec.Rows, showStored(c.rec.Lower), err)
	}
	w.done(c)
	return nil
}

// attempt runs c's transaction once: the rows, then its progress row.
func (w *writer) attempt(ctx context.Context, c *chunk, parts []part, streamed bool) error {
	tx, err := w.tgt.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after Commit, a no-op
	if c.tr.t.typ == versioned {
		// The history goes in with its own row_start and row_end.
		if _, err := tx.ExecContext(ctx, "SET @@session.system_versioning_insert_history = 1"); err != nil {
			return fmt.Errorf("a system-versioned table's history is inserted with system_versioning_insert_history (MariaDB 10.11), which the target refuses: %w", err)
		}
	}
	if c.clear != "" {
		if _, err := tx.ExecContext(ctx, c.clear); err != nil {
			return err
		}
	}
	if streamed {
		for {
			select {
			case p, ok := <-c.parts:
				if !ok {
					return w.commit(ctx, tx, c)
				}
				err := w.insert(ctx, tx, c.tr, p)
				w.budget.give(p.held)
				if err != nil {
					return err
				}
				c.rec.Rows += int64(p.rows())
				c.rec.Bytes += int64(len(p.data))
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	for _, p := range parts {
		if err := w.insert(ctx, tx, c.tr, p); err != nil {
			return err
		}
	}
	return w.commit(ctx, tx, c)
}

// commit records c in clone_chunks and commits.
func (w *writer) commit(ctx context.Context, tx *sql.Tx, c *chunk) error {
	if err := w.store.RecordChunk(ctx, tx, c.rec); err != nil {
		return fmt.Errorf("recording it in clone_chunks: %w", err)
	}
	return tx.Commit()
}

// files numbers the rows LOAD DATA reads (a name each, for the driver).
var files atomic.Uint64

// insert inserts p's rows, tr's: with LOAD DATA LOCAL when tr loads,
// else with as few statements as maxStatement allows.
func (w *writer) insert(ctx context.Context, tx *sql.Tx, tr *tableRun, p part) error {
	if p.rows() == 0 {
		return nil
	}
	if tr.load != "" {
		return w.loadData(ctx, tx, tr, p)
	}
	stmt := make([]byte, 0, min(len(tr.insert)+len(p.data)+p.rows(), w.maxStatement))
	for i := 0; i < p.rows(); {
		stmt = append(stmt[:0], tr.insert...)
		first := i
		for ; i < p.rows(); i++ {
			t := p.tuple(i)
			if i > first && len(stmt)+1+len(t) > w.maxStatement {
				break
			}
			if i > first {
				stmt = append(stmt, ',')
			}
			stmt = append(stmt, t...)
		}
		if len(stmt) >= w.maxPacket {
			return fmt.Errorf("a row of %d bytes (in a statement of %d bytes) does not fit the target's max_allowed_packet of %d bytes: "+
				"raise it on the target (SET GLOBAL max_allowed_packet = %d) and run clone again", len(p.tuple(first)), len(stmt), w.maxPacket, nextPower(len(stmt)+len(stmt)/2))
		}
		if _, err := tx.ExecContext(ctx, string(stmt)); err != nil {
			return err
		}
	}
	return nil
}

// loadData loads p's rows with LOAD DATA LOCAL, the driver reading them
// from memory. With LOCAL the server skips a row whose key is there
// already: a count short of p's rows is an error.
func (w *writer) loadData(ctx context.Context, tx *sql.Tx, tr *tableRun, p part) error {
	name := "paraply-clone-" + strconv.FormatUint(files.Add(1), 10)
	data := p.data
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(data) })
	defer mysql.DeregisterReaderHandler(name)
	res, err := tx.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"'"+tr.load)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n != int64(p.rows()) {
		return fmt.Errorf("LOAD DATA took %d of its %d rows: the target holds some of them already", n, p.rows())
	}
	return nil
}

// nextPower is the power of two at or above n, at most 1 GiB (the
// largest max_allowed_packet).
func nextPower(n int) int {
	p := 1024
	for p < n && p < 1<<30 {
		p <<= 1
	}
	return p
}

// showStored shows a stored bound in errors.
func showStored(s *string) string {
	b, err := decodeBound(s)
	if err != nil {
		return "?"
	}
	return showBound(b)
}
