package sqlgen

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// DefaultMaxStatement is the size (SQL text plus arguments) beyond which a
// Batch stops growing a multi-row statement and starts a new one.
const DefaultMaxStatement = 1 << 20

// Expect is what one statement of a Batch must report as its affected-row
// count (matched rows for UPDATE, with clientFoundRows=true), and what to
// say when it does not.
type Expect struct {
	// Rows is the expected count; -1 for statements added with Raw,
	// which are not checked. For a statement of a compacting Batch it
	// counts rows, not row changes: the net change of each row.
	Rows  int64
	Op    binlog.Op
	Table schema.TableName
	// Key renders the key of the statement's first row, as "id=5" or
	// "a=1,b='x'" (the first few columns for a keyless table).
	Key string
	// Txn is the caller's index of the source transaction of the first
	// row; LastTxn that of the last row, which differs only when INSERTs
	// of several transactions were merged, or when a compacting Batch
	// merged or grouped changes of several transactions: then the
	// statement applies changes of transactions Txn to LastTxn (and
	// maybe not of all of them). Both are -1 for Raw.
	Txn, LastTxn int
}

// Batch accumulates the statements of one target transaction as one
// multi-statement text with ? placeholders, to be executed with
// go-sql-driver's interpolateParams=true, multiStatements=true and
// clientFoundRows=true on a utf8mb4 connection. A Batch is not safe for
// concurrent use; its zero value is ready.
//
// Args holds references to the values of the row images (strings and byte
// slices are not copied): the Rows given to Add must not change until the
// batch has been executed.
type Batch struct {
	// MaxStatement caps the size of a multi-row statement (SQL text plus
	// arguments); 0 means DefaultMaxStatement. A single row larger than
	// the cap still makes one statement.
	MaxStatement int
	// Compact turns on compaction (see the package doc): the row changes
	// of Compactable tables are collected, each row's changes are merged
	// into one net change, and the net changes are written grouped, a
	// few statements per table. The statements of a Batch are meant to
	// run as one transaction, in which their order is invisible to other
	// sessions. Set it before the first Add; Reset keeps it.
	Compact bool
	// MaxGroupRows caps the rows of one grouped statement of a compacting
	// Batch; 0 means DefaultMaxGroupRows.
	MaxGroupRows int

	buf      []byte
	args     []any
	starts   []stmtAt // where each statement starts (see Packet)
	expects  []Expect
	argBytes int

	// The statement being written: where its text starts in buf and the
	// value of argBytes before its first argument.
	stmtStart, stmtArgs int
	// ins is the table of the last statement if it is an INSERT that later
	// rows with the same column bitmap may join; nil otherwise.
	ins      *Table
	insAfter []byte

	// seg holds the changes collected by a compacting Batch, not yet
	// written (see flush).
	seg segment
	// compound is Compound's buffer.
	compound []byte
}

// Add appends the statements for every row change of r, a rows event on
// table t; txn is recorded in their Expects. On error the batch is left as
// it was before the call, or, when compacting, with the changes collected
// so far written out.
//
// A compacting Batch collects the changes of r if t is Compactable and r
// carries whole row images, to write them later (see the package doc).
// Otherwise it writes r's statements as without compaction, right away,
// after writing what it collected of the same table, if anything: a
// statement on another table, which commutes with the collected changes,
// does not stop compaction.
func (b *Batch) Add(t *Table, r *binlog.Rows, txn int) error {
	if r.Table == nil || !t.Matches(r.Table) {
		return fmt.Errorf("sqlgen: %s: %w: the table map differs from the one the Table was built from", t.Name, ErrMismatch)
	}
	if b.Compact {
		ok, err := b.addCompact(t, r, txn)
		if err != nil {
			return fmt.Errorf("sqlgen: %s: %w", t.Name, err)
		}
		if ok {
			return nil
		}
		if b.seg.holds(t.Name) {
			b.flush()
		}
	}
	m := b.mark()
	var err error
	switch r.Op {
	case binlog.Insert:
		err = b.insert(t, r, txn)
	case binlog.Update:
		err = b.update(t, r, txn)
	case binlog.Delete:
		err = b.delete(t, r, txn)
	default:
		err = fmt.Errorf("unknown row operation %d", r.Op)
	}
	if err != nil {
		b.restore(m)
		return fmt.Errorf("sqlgen: %s: %w", t.Name, err)
	}
	return nil
}

// Raw appends a statement whose affected-row count is not checked, such
// as SET foreign_key_checks=0 or the checkpoint insert. args must be of the
// types the driver interpolates (nil, int64, uint64, float64, bool, string,
// []byte, time.Time). No row change moves across it.
func (b *Batch) Raw(sql string, args ...any) {
	b.flush()
	b.begin(Expect{Rows: -1, Txn: -1, LastTxn: -1})
	b.buf = append(b.buf, sql...)
	for _, a := range args {
		b.push(a)
	}
}

// SQL returns the statements, separated by semicolons. It, and the other
// methods that look at the statements, first write the changes that a
// compacting Batch collected.
func (b *Batch) SQL() string {
	b.flush()
	return string(b.buf)
}

// Args returns the values of the placeholders of SQL, in order. The slice
// is the batch's own: it changes with the next Add, Raw or Reset.
func (b *Batch) Args() []any {
	b.flush()
	return b.args
}

// NamedValues appends the arguments to dst as driver.NamedValues (ordinals
// from 1), for driver.ExecerContext.ExecContext under sql.Conn.Raw: the
// only way to get go-sql-driver's Result with AllRowsAffected.
func (b *Batch) NamedValues(dst []driver.NamedValue) []driver.NamedValue {
	b.flush()
	for i, a := range b.args {
		dst = append(dst, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return dst
}

// Expects returns one Expect per statement, in order. The slice is the
// batch's own.
func (b *Batch) Expects() []Expect {
	b.flush()
	return b.expects
}

// Len is the number of statements.
func (b *Batch) Len() int {
	b.flush()
	return len(b.expects)
}

// Bytes estimates the size of the interpolated text: the SQL plus the
// arguments' raw size (escaping can add up to the size of string
// arguments). Keep it under the target's max_allowed_packet: go-sql-driver
// refuses to interpolate a larger packet.
func (b *Batch) Bytes() int {
	b.flush()
	return len(b.buf) + b.argBytes
}

// Reset empties the batch, keeping its memory and settings.
func (b *Batch) Reset() {
	clear(b.args) // drop references to row values
	clear(b.expects)
	b.seg.reset()
	*b = Batch{MaxStatement: b.MaxStatement, Compact: b.Compact, MaxGroupRows: b.MaxGroupRows,
		buf: b.buf[:0], args: b.args[:0], expects: b.expects[:0], starts: b.starts[:0], seg: b.seg, compound: b.compound}
}

// Check compares the affected-row counts of an execution of the batch
// (go-sql-driver's Result.AllRowsAffected) with the Expects. It returns a
// *RowCountError for the first statement that differs.
func (b *Batch) Check(affected []int64) error {
	b.flush()
	if len(affected) != len(b.expects) {
		return fmt.Errorf("sqlgen: %d results for %d statements", len(affected), len(b.expects))
	}
	for i, e := range b.expects {
		if e.Rows >= 0 && affected[i] != e.Rows {
			return &RowCountError{Statement: i, Expect: e, Affected: affected[i]}
		}
	}
	return nil
}

// RowCountError is a statement whose affected-row count differs from the
// number of row changes it applies: the target's data differs from the
// source's (a row is missing, or a keyless row is duplicated).
type RowCountError struct {
	Statement int // index in the batch
	Expect    Expect
	Affected  int64
}

func (e *RowCountError) Error() string {
	head := fmt.Sprintf("%s %s %s", strings.ToUpper(e.Expect.Op.String()), e.Expect.Table, e.Expect.Key)
	switch {
	case e.Affected == 0 && e.Expect.Rows == 1:
		return head + ": row not found on the target"
	case e.Affected < e.Expect.Rows:
		return fmt.Sprintf("%s: %d of %d rows not found on the target", head, e.Expect.Rows-e.Affected, e.Expect.Rows)
	}
	return fmt.Sprintf("%s: %d rows affected on the target, %d expected", head, e.Affected, e.Expect.Rows)
}

// insert appends INSERT statements, merging rows into the previous
// statement while it is an INSERT into the same table with the same
// columns and stays under the size cap.
func (b *Batch) insert(t *Table, r *binlog.Rows, txn int) error {
	shape := &t.insertAll
	if r.After != nil {
		s := t.insertShape(r.After)
		shape = &s
	}
	limit := b.limit()
	for _, img := range r.Images {
		if len(img) != len(t.Columns) {
			return imageError(t, img)
		}
		argsBefore, nArgs := b.argBytes, len(b.args)
		for _, i := range shape.cols {
			if err := b.arg(&t.Columns[i], img[i]); err != nil {
				return err
			}
		}
		// The statement's size with this row: its text so far, the
		// arguments including this row's, and ",(?,?)".
		if b.ins == t && bytes.Equal(b.insAfter, r.After) && b.stmtBytes()+1+len(shape.group) <= limit {
			b.buf = append(b.buf, ',')
			b.buf = append(b.buf, shape.group...)
			e := &b.expects[len(b.expects)-1]
			e.Rows++
			e.LastTxn = txn
			continue
		}
		key, bm := t.keyCols(r.After), r.After
		b.begin(Expect{Rows: 1, Op: binlog.Insert, Table: t.Name, Key: t.keyString(key, bm, img), Txn: txn, LastTxn: txn})
		// The row's arguments, pushed above, belong to the new statement.
		b.stmtArgs = argsBefore
		at := &b.starts[len(b.starts)-1]
		at.args, at.argBytes = nArgs, argsBefore
		b.buf = append(b.buf, shape.prefix...)
		b.buf = append(b.buf, shape.group...)
		b.ins, b.insAfter = t, r.After
	}
	return nil
}

// delete appends DELETE statements: for a keyed table one per event (IN
// list or OR of key conditions, split at the size cap), for a keyless
// table one per row with LIMIT 1.
func (b *Batch) delete(t *Table, r *binlog.Rows, txn int) error {
	loc, keyless, err := t.find(r.Before)
	if err != nil {
		return err
	}
	for _, img := range r.Images {
		if len(img) != len(t.Columns) {
			return imageError(t, img)
		}
	}
	if keyless {
		for _, img := range r.Images {
			b.begin(Expect{Rows: 1, Op: binlog.Delete, Table: t.Name, Key: t.keyString(nil, r.Before, img), Txn: txn, LastTxn: txn})
			b.buf = append(b.buf, "DELETE FROM "...)
			b.buf = append(b.buf, t.quoted...)
			b.buf = append(b.buf, " WHERE "...)
			if err := b.allColumns(t, r.Before, img); err != nil {
				return err
			}
			b.buf = append(b.buf, " LIMIT 1"...)
		}
		return nil
	}
	return b.deleteKeyed(t, loc, r.Images, txn)
}

func (b *Batch) deleteKeyed(t *Table, loc *locator, imgs [][]any, txn int) error {
	limit := b.limit()
	single := len(loc.cols) == 1
	var e *Expect // the open statement
	for k, img := range imgs {
		if e == nil {
			b.begin(Expect{Op: binlog.Delete, Table: t.Name, Key: t.keyString(loc.cols, nil, img), Txn: txn, LastTxn: txn})
			e = &b.expects[len(b.expects)-1]
			b.buf = append(b.buf, "DELETE FROM "...)
			b.buf = append(b.buf, t.quoted...)
			b.buf = append(b.buf, " WHERE "...)
			if k == len(imgs)-1 { // one row: plain key equality
				e.Rows = 1
				b.buf = append(b.buf, loc.eq...)
				return b.keyArgs(t, loc.cols, img)
			}
			if single {
				b.buf = append(b.buf, t.Columns[loc.cols[0]].quoted...)
				b.buf = append(b.buf, " IN ("...)
			}
		} else if single {
			b.buf = append(b.buf, ',')
		} else {
			b.buf = append(b.buf, " OR "...)
		}
		if single {
			b.buf = append(b.buf, t.Columns[loc.cols[0]].wherePh...)
		} else {
			b.buf = append(b.buf, '(')
			b.buf = append(b.buf, loc.eq...)
			b.buf = append(b.buf, ')')
		}
		if err := b.keyArgs(t, loc.cols, img); err != nil {
			return err
		}
		e.Rows++
		if b.stmtBytes() >= limit || k == len(imgs)-1 {
			if single {
				b.buf = append(b.buf, ')')
			}
			e = nil
		}
	}
	return nil
}

// update appends one UPDATE per row change: SET the columns that changed,
// WHERE the key of the before image.
func (b *Batch) update(t *Table, r *binlog.Rows, txn int) error {
	if len(r.Images)%2 != 0 {
		return fmt.Errorf("%w: update with an odd number of row images", ErrMismatch)
	}
	loc, keyless, err := t.find(r.Before)
	if err != nil {
		return err
	}
	for k := 0; k < len(r.Images); k += 2 {
		before, after := r.Images[k], r.Images[k+1]
		if len(before) != len(t.Columns) || len(after) != len(t.Columns) {
			return imageError(t, before)
		}
		var key []int
		if !keyless {
			key = loc.cols
		}
		b.begin(Expect{Rows: 1, Op: binlog.Update, Table: t.Name, Key: t.keyString(key, r.Before, before), Txn: txn, LastTxn: txn})
		b.buf = append(b.buf, "UPDATE "...)
		b.buf = append(b.buf, t.quoted...)
		b.buf = append(b.buf, " SET "...)
		if err := b.set(t, r, before, after); err != nil {
			return err
		}
		b.buf = append(b.buf, " WHERE "...)
		if keyless {
			if err := b.allColumns(t, r.Before, before); err != nil {
				return err
			}
			b.buf = append(b.buf, " LIMIT 1"...)
			continue
		}
		b.buf = append(b.buf, loc.eq...)
		if err := b.keyArgs(t, loc.cols, before); err != nil {
			return err
		}
	}
	return nil
}

// set appends the SET list of an UPDATE: the columns of the after image
// that are not generated and differ from the before image (or are missing
// from it), and its TIMESTAMP and DATETIME columns (Column.stamped). When
// none is, it sets one column to the value it has, so
// that the statement still matches, and counts, exactly one row: the first
// writable column of the after image, else of the before image.
func (b *Batch) set(t *Table, r *binlog.Rows, before, after []any) error {
	n, first := 0, -1
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Generated || !present(r.After, i) {
			continue
		}
		if first < 0 {
			first = i
		}
		if present(r.Before, i) && equal(before[i], after[i]) && !c.stamped {
			continue
		}
		if err := b.assign(c, n, after[i]); err != nil {
			return err
		}
		n++
	}
	if n > 0 {
		return nil
	}
	if first >= 0 {
		return b.assign(&t.Columns[first], 0, after[first])
	}
	for i := range t.Columns {
		if !t.Columns[i].Generated && present(r.Before, i) {
			return b.assign(&t.Columns[i], 0, before[i])
		}
	}
	return fmt.Errorf("%w: update without a writable column in either image", ErrNoKey)
}

// assign appends "`c`=?" (preceded by ", " unless it is the n=0th).
func (b *Batch) assign(c *Column, n int, v any) error {
	if n > 0 {
		b.buf = append(b.buf, ", "...)
	}
	b.buf = append(b.buf, c.quoted...)
	b.buf = append(b.buf, '=')
	b.buf = append(b.buf, c.ph...)
	return b.arg(c, v)
}

// allColumns appends the WHERE condition of a keyless table: every column
// present in the image and not generated, compared with <=> (NULL-safe),
// and text columns also byte by byte (see Column.exact).
func (b *Batch) allColumns(t *Table, bm []byte, img []any) error {
	n := 0
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Generated || !present(bm, i) {
			continue
		}
		if n > 0 {
			b.buf = append(b.buf, " AND "...)
		}
		b.buf = append(b.buf, c.quoted...)
		b.buf = append(b.buf, " <=> "...)
		b.buf = append(b.buf, c.wherePh...)
		a, err := value(c, img[i])
		if err != nil {
			return err
		}
		b.push(a)
		if c.exact != "" {
			b.buf = append(b.buf, " AND CAST("...)
			b.buf = append(b.buf, c.quoted...)
			b.buf = append(b.buf, " AS BINARY) <=> "...)
			b.buf = append(b.buf, c.exact...)
			b.push(a)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%w: keyless row image without a stored column", ErrNoKey)
	}
	return nil
}

// keyArgs appends the values of the key columns cols of img.
func (b *Batch) keyArgs(t *Table, cols []int, img []any) error {
	for _, i := range cols {
		if err := b.arg(&t.Columns[i], img[i]); err != nil {
			return err
		}
	}
	return nil
}

// keyCols returns the key to show for an image with column bitmap bm:
// Key, else the primary key, else nil (show the columns).
func (t *Table) keyCols(bm []byte) []int {
	switch {
	case t.Key != nil && allPresent(bm, t.Key):
		return t.Key
	case t.Primary != nil && allPresent(bm, t.Primary):
		return t.Primary
	}
	return nil
}

// arg converts v for column c and appends it to the arguments.
func (b *Batch) arg(c *Column, v any) error {
	a, err := value(c, v)
	if err != nil {
		return err
	}
	b.push(a)
	return nil
}

// push appends a converted argument.
func (b *Batch) push(a any) {
	b.args = append(b.args, a)
	b.argBytes += argSize(a)
}

// argSize estimates the interpolated size of an argument.
func argSize(a any) int {
	switch x := a.(type) {
	case nil:
		return 4
	case string:
		return len(x) + 2
	case []byte:
		return len(x) + 9 // _binary'...'
	}
	return 20
}

// begin starts a statement: a separator, its Expect, and the end of any
// INSERT that rows could join.
func (b *Batch) begin(e Expect) {
	if len(b.expects) > 0 {
		b.buf = append(b.buf, ';')
	}
	b.starts = append(b.starts, stmtAt{buf: len(b.buf), args: len(b.args), argBytes: b.argBytes})
	b.expects = append(b.expects, e)
	b.stmtStart, b.stmtArgs = len(b.buf), b.argBytes
	b.ins, b.insAfter = nil, nil
}

// stmtBytes is the size of the statement being written.
func (b *Batch) stmtBytes() int {
	return len(b.buf) - b.stmtStart + b.argBytes - b.stmtArgs
}

func (b *Batch) limit() int {
	if b.MaxStatement > 0 {
		return b.MaxStatement
	}
	return DefaultMaxStatement
}

// batchMark is the state of a Batch that restore returns to.
type batchMark struct {
	buf, args, expects, argBytes int
	stmtStart, stmtArgs          int
	ins                          *Table
	insAfter                     []byte
	last                         Expect // the last Expect, which an INSERT may grow
}

func (b *Batch) mark() batchMark {
	m := batchMark{buf: len(b.buf), args: len(b.args), expects: len(b.expects), argBytes: b.argBytes,
		stmtStart: b.stmtStart, stmtArgs: b.stmtArgs, ins: b.ins, insAfter: b.insAfter}
	if len(b.expects) > 0 {
		m.last = b.expects[len(b.expects)-1]
	}
	return m
}

func (b *Batch) restore(m batchMark) {
	clear(b.args[m.args:])
	b.buf, b.args, b.expects, b.starts = b.buf[:m.buf], b.args[:m.args], b.expects[:m.expects], b.starts[:m.expects]
	b.argBytes, b.stmtStart, b.stmtArgs, b.ins, b.insAfter = m.argBytes, m.stmtStart, m.stmtArgs, m.ins, m.insAfter
	if m.expects > 0 {
		b.expects[m.expects-1] = m.last
	}
}

func imageError(t *Table, img []any) error {
	return fmt.Errorf("%w: row image with %d columns for a table of %d", ErrMismatch, len(img), len(t.Columns))
}
