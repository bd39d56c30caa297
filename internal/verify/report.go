package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Report is the outcome of Run. It marshals to JSON as is.
type Report struct {
	Source    string        `json:"source"`
	Target    string        `json:"target"`
	ChunkSize int           `json:"chunk_size"`
	Tables    []TableReport `json:"tables"` // sorted by source schema and name
	Summary   Summary       `json:"summary"`
	Seconds   float64       `json:"seconds"`

	// Filters are the filter and rewrite rules the tables were compared
	// under (Options.Filter), written as the options that give them:
	// --include app.% --rewrite-db app=app_copy. Empty without rules.
	Filters string `json:"filters,omitempty"`

	// Stream is the stream compared (Options.Stream). OtherStreams are the
	// target's other streams, and OtherStreamsTables the target tables
	// left out as theirs, sorted.
	Stream             string      `json:"stream"`
	OtherStreams       []string    `json:"other_streams,omitempty"`
	OtherStreamsTables []TableName `json:"other_streams_tables,omitempty"`
}

// Summary counts the tables of a Report by status, and their rows.
type Summary struct {
	Equal      bool  `json:"equal"`
	Tables     int   `json:"tables"`
	OK         int   `json:"ok"`
	Different  int   `json:"different"`
	Errors     int   `json:"errors"`
	SourceRows int64 `json:"source_rows"`
	TargetRows int64 `json:"target_rows"`
}

// Equal reports whether every table compared equal, without errors.
func (r *Report) Equal() bool {
	for i := range r.Tables {
		if r.Tables[i].Status != StatusOK {
			return false
		}
	}
	return true
}

// summarize fills r.Summary from r.Tables.
func (r *Report) summarize() {
	s := Summary{Equal: r.Equal(), Tables: len(r.Tables)}
	for i := range r.Tables {
		t := &r.Tables[i]
		switch t.Status {
		case StatusOK:
			s.OK++
		case StatusDifferent:
			s.Different++
		default:
			s.Errors++
		}
		s.SourceRows += t.SourceRows
		s.TargetRows += t.TargetRows
	}
	r.Summary = s
}

// Status is the outcome for one table.
type Status string

const (
	StatusOK        Status = "ok"
	StatusDifferent Status = "different"
	StatusError     Status = "error" // the comparison failed; see TableReport.Error
)

// Problems of a table as a whole (TableReport.Problem).
const (
	ProblemMissingOnTarget = "missing on target"
	ProblemMissingOnSource = "missing on source"
	ProblemColumns         = "columns differ"
)

// TableReport is the outcome for one table, named by its source name
// (TableName). A table only on the target is named after the source table
// the rules would replicate into it.
type TableReport struct {
	TableName
	// TargetTable is the table's name on the target, when the rules
	// (--rewrite-db) give it another one; nil when it is TableName.
	TargetTable *TableName `json:"target_table,omitempty"`
	Status      Status     `json:"status"`
	// Problem is set when the table could not be compared row by row: one
	// of the Problem constants. ColumnDiffs details ProblemColumns.
	Problem     string   `json:"problem,omitempty"`
	ColumnDiffs []string `json:"column_diffs,omitempty"`
	Error       string   `json:"error,omitempty"`

	// KeyName is the key the table was walked by ("PRIMARY", a unique
	// key's name), or "" for a table without one, checksummed as one chunk.
	KeyName string `json:"key_name,omitempty"`
	// KeyColumns name the values of ChunkDiff bounds and RowDiff keys: the
	// key's columns, or for a keyless table every compared column.
	KeyColumns []string `json:"key_columns,omitempty"`

	Chunks     int         `json:"chunks"`
	SourceRows int64       `json:"source_rows"`
	TargetRows int64       `json:"target_rows"`
	Diffs      []ChunkDiff `json:"chunk_diffs,omitempty"`
	Seconds    float64     `json:"seconds"`
}

// ChunkDiff is a chunk whose rows differ: the rows with a key in
// (Lower, Upper]. A nil bound is open; both are nil for a keyless table.
type ChunkDiff struct {
	Chunk      int     `json:"chunk"` // 1-based
	Lower      []Value `json:"lower"`
	Upper      []Value `json:"upper"`
	SourceRows int64   `json:"source_rows"`
	TargetRows int64   `json:"target_rows"`
	// Drilled tells whether the rows were compared one by one, which is
	// done until the table's MaxRows differing rows are listed. Missing,
	// Extra and Changed count the differing rows then; Rows lists the first.
	Drilled bool      `json:"drilled"`
	Missing int       `json:"missing_on_target"`
	Extra   int       `json:"extra_on_target"`
	Changed int       `json:"changed"`
	Rows    []RowDiff `json:"rows,omitempty"`
}

// RowKind says how a row differs.
type RowKind string

const (
	RowMissing RowKind = "missing on target"
	RowExtra   RowKind = "extra on target"
	RowChanged RowKind = "changed"
)

// RowDiff is one differing row, identified by its key (TableReport's
// KeyColumns).
type RowDiff struct {
	Kind RowKind `json:"kind"`
	Key  []Value `json:"key"`
	// Count is the number of identical rows, for a keyless table; else 1.
	Count int `json:"count"`
}

// Value is a column value as text, or NULL. Bytes are shown as 0x and hex.
type Value struct {
	Text string
	Null bool
	bare bool // a number, written without quotes
}

// MarshalJSON writes the text, or null.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.Null {
		return []byte("null"), nil
	}
	return json.Marshal(v.Text)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Value) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = Value{Null: true}
		return nil
	}
	*v = Value{}
	return json.Unmarshal(b, &v.Text)
}

// maxShown is how many characters of a value String shows.
const maxShown = 80

// String writes v as an SQL literal: NULL, a number, 0x-hex or a quoted
// string, cut at maxShown characters.
func (v Value) String() string {
	if v.Null {
		return "NULL"
	}
	s := v.Text
	if utf8.RuneCountInString(s) > maxShown {
		s = string([]rune(s)[:maxShown]) + "…"
	}
	if v.bare {
		return s
	}
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			if r < ' ' || r == utf8.RuneError {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// maxChunksShown is how many differing chunks of a table WriteText lists.
const maxChunksShown = 20

// WriteText writes r for people: one line per table, the differing chunks
// and rows under it, and a summary line.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("verify %s against %s, %d rows per chunk\n", r.Target, r.Source, r.ChunkSize)
	if r.Filters != "" {
		ew.printf("filters: %s\n", r.Filters)
	}
	if len(r.OtherStreams) > 0 {
		ew.printf("stream %s; not compared: %d %s of the target's other streams (%s)", r.Stream, len(r.OtherStreamsTables),
			plural(len(r.OtherStreamsTables), "table"), strings.Join(r.OtherStreams, ", "))
		if len(r.OtherStreamsTables) > 0 {
			ew.printf(": %s", nameSample(r.OtherStreamsTables))
		}
		ew.printf("\n")
	}
	width := 0
	for i := range r.Tables {
		width = max(width, min(utf8.RuneCountInString(r.Tables[i].label()), 48))
	}
	for i := range r.Tables {
		r.Tables[i].writeText(ew, width)
	}
	s := r.Summary
	ew.printf("%d %s: %d ok, %d different, %d errors; %d rows on source, %d on target; %.1fs\n",
		s.Tables, plural(s.Tables, "table"), s.OK, s.Different, s.Errors, s.SourceRows, s.TargetRows, r.Seconds)
	if s.Equal {
		ew.printf("target equals source\n")
	} else {
		ew.printf("target DIFFERS from source\n")
	}
	return ew.err
}

// label names t for people: app.t, or app.t -> app_copy.t when its name
// on the target differs.
func (t *TableReport) label() string {
	if t.TargetTable == nil || *t.TargetTable == t.TableName {
		return t.String()
	}
	return t.String() + " -> " + t.TargetTable.String()
}

func (t *TableReport) writeText(ew *errWriter, width int) {
	name := t.label()
	pad := strings.Repeat(" ", max(0, width-utf8.RuneCountInString(name)))
	switch {
	case t.Status == StatusError:
		ew.printf("ERROR      %s%s  %s\n", name, pad, t.Error)
		return
	case t.Problem != "":
		ew.printf("DIFFERENT  %s%s  %s\n", name, pad, t.Problem)
		for _, d := range t.ColumnDiffs {
			ew.printf("             %s\n", d)
		}
		return
	case t.Status == StatusOK:
		ew.printf("ok         %s%s  %d rows, %d %s\n", name, pad, t.SourceRows, t.Chunks, plural(t.Chunks, "chunk"))
		return
	}
	ew.printf("DIFFERENT  %s%s  %d rows on source, %d on target; %d of %d chunks differ\n",
		name, pad, t.SourceRows, t.TargetRows, len(t.Diffs), t.Chunks)
	for i := range t.Diffs {
		if i == maxChunksShown {
			ew.printf("             ... and %d more differing chunks\n", len(t.Diffs)-i)
			break
		}
		d := &t.Diffs[i]
		ew.printf("             chunk %d, %s: %d rows on source, %d on target", d.Chunk, t.chunkRange(d), d.SourceRows, d.TargetRows)
		if d.Drilled {
			ew.printf(" (%d missing on target, %d extra, %d changed)", d.Missing, d.Extra, d.Changed)
		}
		ew.printf("\n")
		for _, row := range d.Rows {
			count := ""
			if row.Count > 1 {
				count = fmt.Sprintf(" (%d rows)", row.Count)
			}
			ew.printf("               %s%s: %s\n", row.Kind, count, t.keyText(row.Key))
		}
	}
}

// chunkRange describes the rows of a chunk, e.g. "`id` in (7, 14]".
func (t *TableReport) chunkRange(d *ChunkDiff) string {
	if t.KeyName == "" {
		return "whole table"
	}
	key := tuple(quotedNames(t.KeyColumns))
	switch {
	case d.Lower == nil && d.Upper == nil:
		return "whole table"
	case d.Lower == nil:
		return key + " <= " + valueTuple(d.Upper)
	case d.Upper == nil:
		return key + " > " + valueTuple(d.Lower)
	}
	return key + " in (" + valueTuple(d.Lower) + ", " + valueTuple(d.Upper) + "]"
}

// keyText shows a row's key as `a`=1, `b`='x'.
func (t *TableReport) keyText(key []Value) string {
	parts := make([]string, len(key))
	for i, v := range key {
		name := "?"
		if i < len(t.KeyColumns) {
			name = quoteIdent(t.KeyColumns[i])
		}
		parts[i] = name + "=" + v.String()
	}
	return strings.Join(parts, ", ")
}

func quotedNames(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return q
}

func valueTuple(vs []Value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return tuple(s)
}

// tuple writes one element as is and several in parentheses.
func tuple(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// errWriter keeps the first write error, so that WriteText checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// maxNamesShown is how many table names nameSample lists.
const maxNamesShown = 5

// nameSample writes the first maxNamesShown of names and how many more
// there are: "a.t1, a.t2 and 7 more".
func nameSample(names []TableName) string {
	shown := make([]string, 0, maxNamesShown)
	for _, n := range names[:min(len(names), maxNamesShown)] {
		shown = append(shown, n.String())
	}
	list := strings.Join(shown, ", ")
	if more := len(names) - len(shown); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return list
}

// plural writes noun for n of it: "table", "tables".
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
