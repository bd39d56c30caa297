package binlog

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/fixtures"
)

// sharedDir holds the real binlogs shared by every paraply package
// (testdata/binlogs/ at the repository root, see its README.md). Tests read
// them in place.
var sharedDir = fixtures.Binlogs()

// sharedPath is the path of a file under sharedDir, e.g.
// "rust-us__mysql-cdc-rs/binlog.000733".
func sharedPath(name string) string { return filepath.Join(sharedDir, filepath.FromSlash(name)) }

// sentinels are the errors every reader error must wrap.
var sentinels = []error{ErrCorrupt, ErrTruncated, ErrUnknownEvent, ErrUnsupported}

// checkReaderError fails t unless err is a *PosError wrapping one of the
// package's sentinels.
func checkReaderError(t testing.TB, what string, err error) {
	t.Helper()
	var pe *PosError
	if !errors.As(err, &pe) {
		t.Errorf("%s: error %T is not a *PosError: %v", what, err, err)
		return
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return
		}
	}
	t.Errorf("%s: error wraps no sentinel: %v", what, err)
}

// readResult is everything a Reader returned for some files.
type readResult struct {
	txns   []*Txn
	format *Format // the format in effect at the end
	err    error   // the error that ended the stream; nil for a clean io.EOF
	panic  string  // the panic and its stack, if reading panicked
}

// readAll reads every transaction of paths. A panic is caught and returned
// in the result, so that a damage test can name the input that caused it.
func readAll(paths ...string) (res readResult) {
	fr := NewFileReader(paths...)
	defer fr.Close()
	r := NewReader(fr)
	defer func() {
		if p := recover(); p != nil {
			res.panic = fmt.Sprintf("%v\n%s", p, debug.Stack())
		}
		res.format = r.Format()
	}()
	for {
		t, err := r.Next()
		if errors.Is(err, io.EOF) {
			return res
		}
		if err != nil {
			res.err = err
			return res
		}
		res.txns = append(res.txns, t)
	}
}

// renderTxn prints every field of a transaction that the rest of paraply
// uses, values included, so that two decodes can be compared as text.
func renderTxn(t *Txn) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d gtid=%q start=%s end=%d bytes=%d ts=%d thread=%d server=%d clock=%+v ddl=%t stmtdml=%t\n",
		t.Seq, t.GTID.String(), t.Start, t.End, t.Bytes, t.Timestamp, t.ThreadID, t.ServerID, t.Clock, t.DDL, t.StatementDML)
	for _, s := range t.Statements {
		fmt.Fprintf(&b, "  stmt schema=%q ddl=%t %q\n", s.Schema, s.Kind == StmtDDL, s.Query)
	}
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "  %s `%s`.`%s` id=%d cols=%d types=%x meta=%v flags=%#x before=%x after=%x partial=%t\n",
			r.Op, r.Schema(), r.Name(), r.Table.TableID, r.Table.ColumnCount, r.Table.ColumnType, r.Table.ColumnMeta,
			r.Flags, r.Before, r.After, r.PartialJSON)
		for _, img := range r.Images {
			b.WriteString("    (")
			for i, v := range img {
				if i > 0 {
					b.WriteString(", ")
				}
				renderValue(&b, v)
			}
			b.WriteString(")\n")
		}
	}
	return b.String()
}

func renderValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("NULL")
	case []byte:
		fmt.Fprintf(b, "x'%x'", v)
	case string:
		fmt.Fprintf(b, "%q", v)
	case *replication.JsonDiff:
		fmt.Fprintf(b, "jsondiff(%s %q %q)", v.Op, v.Path, v.Value)
	default:
		fmt.Fprintf(b, "%T(%v)", v, v)
	}
}

// diffLine returns the first line where a and b differ, for failure
// messages.
func diffLine(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, x, y)
		}
	}
	return "no difference"
}
