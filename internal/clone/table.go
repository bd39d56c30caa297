package clone

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paraply/paraply/internal/verify"
)

// tableRun is a table this run copies: how it is read and written, the
// holes it reads, and its progress. The reader that reads it and the
// workers that write its chunks share it.
type tableRun struct {
	t    *table
	def  *definition
	keys *verify.Keys // nil for a table read as one piece
	cols []column
	// from is what the chunks select from (with FOR SYSTEM_TIME ALL for
	// a system-versioned table's history); insert begins a statement
	// that inserts its rows on the target; load, if set, loads them
	// instead: LOAD DATA LOCAL INFILE of a file's name, then load; and
	// rows are written as its lines.
	from, insert, load string
	// keyCols is how many key values follow the columns in a chunk's
	// select list.
	keyCols int
	// holes are the key ranges to read; nextSegment numbers the next one.
	holes       []span
	nextSegment int
	// clear: a resumed run deletes on the target what a chunk's range
	// holds before it inserts the chunk (see chunk.clear).
	clear bool

	mu sync.Mutex // guards what follows
	// read: every hole was read; pending: chunks sent, not committed.
	read    bool
	pending int
	// finished once its indexes and triggers are added too.
	finished bool
	// rows and bytes copied, in this run and before it; chunks committed.
	rows, bytes int64
	chunks      int
	began, done time.Time
}

// newTableRun prepares t's copy: its columns, and for a keyed table the
// key it is read by.
func newTableRun(t *table, def *definition, keys *verify.Keys) (*tableRun, error) {
	tr := &tableRun{t: t, def: def}
	for i := range t.info.Columns {
		c := &t.info.Columns[i]
		if c.Generated != "" {
			continue // computed by the target from the others
		}
		col, err := newColumn(c)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t, err)
		}
		tr.cols = append(tr.cols, col)
	}
	tr.from = quoteTable(t.src.Schema, t.src.Name)
	if t.typ == versioned {
		tr.from += " FOR SYSTEM_TIME ALL"
		if def.implicitPeriod {
			// The history is inserted with its own row_start and row_end
			// (system_versioning_insert_history).
			tr.cols = append(tr.cols, column{name: "row_start", sel: "ROW_START", kind: quotedKind}, column{name: "row_end", sel: "ROW_END", kind: quotedKind})
		}
	} else if keys.Keyed() {
		// A system-versioned table's rows share their key with their
		// history: it is read as one piece.
		tr.keys = keys
		tr.keyCols = len(keys.Columns())
	}
	names := make([]string, len(tr.cols))
	for i, c := range tr.cols {
		names[i] = quote(c.name)
	}
	tr.insert = "INSERT INTO " + quoteTable(t.dst.Schema, t.dst.Name) + " (" + strings.Join(names, ", ") + ") VALUES "
	return tr, nil
}

// loadData makes tr write its rows with LOAD DATA LOCAL, whose fields
// the server parses as INSERT's values cost it to parse, a third more of
// the target's CPU (measured on sysbench rows): the file in CHARACTER
// SET binary, so that the bytes go as they are, as with the introducers
// of encode.go, the columns that need it through a user variable.
func (tr *tableRun) loadData() {
	var fields, sets []string
	for i, c := range tr.cols {
		if c.load == "" {
			fields = append(fields, quote(c.name))
			continue
		}
		v := "@v" + strconv.Itoa(i)
		fields = append(fields, v)
		sets = append(sets, quote(c.name)+" = "+strings.ReplaceAll(c.load, "@v", v))
	}
	q := " INTO TABLE " + quoteTable(tr.t.dst.Schema, tr.t.dst.Name) +
		" CHARACTER SET binary FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' (" + strings.Join(fields, ", ") + ")"
	if sets != nil {
		q += " SET " + strings.Join(sets, ", ")
	}
	tr.load = q
}

// keepName is the index tr is read by, which its definition keeps; ""
// for a table read as one piece.
func (tr *tableRun) keepName() string {
	if tr.keys == nil {
		return ""
	}
	return tr.keys.Name()
}

// selectList is what a chunk's query selects: the columns, then the raw
// key values of each row.
func (tr *tableRun) selectList() string {
	sels := make([]string, 0, len(tr.cols)+tr.keyCols)
	for _, c := range tr.cols {
		sels = append(sels, c.sel)
	}
	if tr.keys != nil {
		sels = append(sels, tr.keys.Raw()...)
	}
	return strings.Join(sels, ", ")
}

// sent counts a chunk sent to the workers.
func (tr *tableRun) sent() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.pending++
	if tr.began.IsZero() {
		tr.began = time.Now()
	}
}

// readAll records that every hole was read, and reports whether the
// table's rows are all in (nothing pending).
func (tr *tableRun) readAll() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.read = true
	return tr.pending == 0
}

// committed records a chunk committed, and reports whether the table's
// rows are now all in.
func (tr *tableRun) committed(rows, bytes int64) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.pending--
	tr.rows += rows
	tr.bytes += bytes
	tr.chunks++
	return tr.read && tr.pending == 0
}

// finish records that the table is done.
func (tr *tableRun) finish() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.finished, tr.done = true, time.Now()
}

// tableProgress is a table's progress, as the display and the metrics
// show it.
type tableProgress struct {
	Name        string
	Rows, Bytes int64
	EstRows     int64
	Chunks      int
	Finished    bool
	Began, Done time.Time
	Busy        bool
}

// progress reads tr's progress.
func (tr *tableRun) progress() tableProgress {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tableProgress{Name: tr.t.String(), Rows: tr.rows, Bytes: tr.bytes, EstRows: tr.t.estRows, Chunks: tr.chunks,
		Finished: tr.finished, Began: tr.began, Done: tr.done, Busy: !tr.began.IsZero() && !tr.finished}
}
