package relaylog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
)

const (
	segPrefix = "relay-"
	segSuffix = ".seg"
	segDigits = 16
)

// segment is one segment file as the Log accounts for it.
type segment struct {
	first uint64 // index of its first transaction, its name
	size  int64  // bytes of complete records (for the active segment: published ones)
}

func segName(first uint64) string {
	return fmt.Sprintf("%s%0*d%s", segPrefix, segDigits, first, segSuffix)
}

// parseSegName returns the first index a segment file name holds, and false
// for a name that is not a segment's.
func parseSegName(name string) (uint64, bool) {
	if len(name) != len(segPrefix)+segDigits+len(segSuffix) ||
		!strings.HasPrefix(name, segPrefix) || !strings.HasSuffix(name, segSuffix) {
		return 0, false
	}
	digits := name[len(segPrefix) : len(segPrefix)+segDigits]
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, false
	}
	return n, true
}

// listSegments returns the first indexes of the segments in dir, ascending.
func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("relaylog: %w", err)
	}
	var firsts []uint64
	for _, e := range ents {
		if n, ok := parseSegName(e.Name()); ok && e.Type().IsRegular() {
			if n == 0 {
				return nil, fmt.Errorf("relaylog: %s: segment numbers start at 1", filepath.Join(dir, e.Name()))
			}
			firsts = append(firsts, n)
		}
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	return firsts, nil
}

// readAhead is the size of a cursor's read window.
const readAhead = 64 << 10

// errEnd is returned by cursor.step at the read limit, between records.
var errEnd = errors.New("end of segment data")

// A cursor reads the records of one segment file in order, up to a limit
// the caller gives at each step: the file's size for a sealed segment, the
// published size for the one being written. Bytes below the limit never
// change, so the read window cannot hold stale data. Not safe for
// concurrent use.
type cursor struct {
	f      segmentFile
	path   string
	first  uint64         // index the name gives
	off    int64          // start of the next record
	expect uint64         // index the next TXN record must have
	pos    *position      // the POSITION record, nil until read
	format *binlog.Format // FORMAT in effect; nil before the first
	// reuse is a Format from an earlier segment, kept instead of an equal
	// new one so that a Decoder does not reparse it.
	reuse *binlog.Format

	// win holds file bytes [woff, woff+len(win)). A new array is read
	// each time, never overwritten, so that records may point into it:
	// entries keep the window they came from alive, instead of a copy
	// each (bytes.Clone per record was a tenth of the preparer's CPU on
	// sysbench's write_only backlog).
	win  []byte
	woff int64
	// part is set when the last step passed a PART record: where it is.
	// Its payload is not read (nor checked) then: ReadPart does that when
	// the piece is wanted, so that a large transaction never sits whole
	// in memory.
	part *PartRef
}

// segmentFile is what a cursor reads: an *os.File, or bytes in a test.
type segmentFile interface {
	io.ReaderAt
	io.Closer
}

// openCursor opens a segment and checks its header against limit and the
// index its name gives. The POSITION record is read by the first step.
func openCursor(path string, first uint64, limit int64) (*cursor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return newCursor(f, path, first, limit)
}

// newCursor reads segment first from f, which it closes on error.
func newCursor(f segmentFile, path string, first uint64, limit int64) (*cursor, error) {
	c := &cursor{f: f, path: path, first: first, expect: first, off: segHeaderSize}
	if err := c.checkHeader(limit); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

func (c *cursor) Close() error { return c.f.Close() }

func (c *cursor) corrupt(off int64, format string, args ...any) *CorruptError {
	return &CorruptError{Path: c.path, Offset: off, Index: c.expect, Reason: fmt.Sprintf(format, args...)}
}

func (c *cursor) checkHeader(limit int64) error {
	n := min(limit, segHeaderSize)
	b, err := c.read(0, int(max(n, 0)), limit)
	if err != nil {
		return err
	}
	first, err := checkSegHeader(b)
	if err != nil {
		return c.corrupt(0, "%v", err)
	}
	if first != c.first {
		return c.corrupt(0, "header says the first index is %d, the file name %d", first, c.first)
	}
	return nil
}

// read returns the n bytes at off, which the caller has checked end at or
// before limit. The result may alias the read window, which is never
// overwritten: it may be kept.
func (c *cursor) read(off int64, n int, limit int64) ([]byte, error) {
	if off >= c.woff && off+int64(n) <= c.woff+int64(len(c.win)) {
		return c.win[off-c.woff : off-c.woff+int64(n)], nil
	}
	if n > readAhead/2 {
		p := make([]byte, n)
		if err := c.readAt(p, off); err != nil {
			return nil, err
		}
		return p, nil
	}
	buf := make([]byte, min(readAhead, limit-off))
	k, err := c.f.ReadAt(buf, off)
	if k < n {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, c.corrupt(off, "file ends at offset %d, %d bytes before the data it should hold", off+int64(k), limit-off-int64(k))
		}
		return nil, fmt.Errorf("relaylog: %s: %w", c.path, err)
	}
	c.win, c.woff = buf[:k], off
	return c.win[:n], nil
}

// readFresh is read for a slice the caller keeps: it may not grow into
// what follows it in the window.
func (c *cursor) readFresh(off int64, n int, limit int64) ([]byte, error) {
	b, err := c.read(off, n, limit)
	if err != nil {
		return nil, err
	}
	return b[:n:n], nil
}

func (c *cursor) readAt(p []byte, off int64) error {
	k, err := c.f.ReadAt(p, off)
	if k == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return c.corrupt(off, "file ends at offset %d inside a record", off+int64(k))
	}
	return fmt.Errorf("relaylog: %s: %w", c.path, err)
}

// step reads the record at c.off. It returns the entry of a TXN record,
// nil for a POSITION or FORMAT record (which update the cursor), errEnd at
// limit, and a *CorruptError for a record that is torn, fails its checksum
// or does not decode; c.off then stays at that record's start.
func (c *cursor) step(limit int64) (*Entry, error) {
	if c.off >= limit {
		return nil, errEnd
	}
	if left := limit - c.off; left < recHeaderSize {
		return nil, c.corrupt(c.off, "torn record: %d bytes left, a record header has %d", left, recHeaderSize)
	}
	h, err := c.read(c.off, recHeaderSize, limit)
	if err != nil {
		return nil, err
	}
	n, sum, typ := le.Uint32(h[0:]), le.Uint32(h[4:]), h[8]
	if left := limit - c.off - recHeaderSize; int64(n) > left {
		return nil, c.corrupt(c.off, "torn record: length %d, %d bytes left", n, left)
	}
	c.part = nil
	if typ == recPart && c.pos != nil {
		return nil, c.skipPart(n, limit)
	}
	payload, err := c.readFresh(c.off+recHeaderSize, int(n), limit)
	if err != nil {
		return nil, err
	}
	if got := recordCRC(typ, payload); got != sum {
		return nil, c.corrupt(c.off, "record checksum mismatch (stored %08x, computed %08x)", sum, got)
	}
	if c.pos == nil && typ != recPosition {
		return nil, c.corrupt(c.off, "segment does not start with a POSITION record (type %d)", typ)
	}
	var e *Entry
	switch typ {
	case recPosition:
		err = c.position(payload)
	case recFormat:
		err = c.formatRecord(payload)
	case recTxn:
		e, err = c.txn(payload)
	default:
		err = c.corrupt(c.off, "unknown record type %d", typ)
	}
	if err != nil {
		return nil, err
	}
	c.off += recHeaderSize + int64(n)
	return e, nil
}

// skipPart steps over a PART record of n payload bytes, reading only the
// index it belongs to, which must be the next transaction's.
func (c *cursor) skipPart(n uint32, limit int64) error {
	if n < 8 {
		return c.corrupt(c.off, "PART record of %d bytes", n)
	}
	b, err := c.read(c.off+recHeaderSize, 8, limit)
	if err != nil {
		return err
	}
	if idx := le.Uint64(b); idx != c.expect {
		return c.corrupt(c.off, "PART record holds index %d, expected %d", idx, c.expect)
	}
	if c.format == nil {
		return c.corrupt(c.off, "PART record before any FORMAT record")
	}
	c.part = &PartRef{Path: c.path, Offset: c.off, Size: recHeaderSize + int64(n), Index: c.expect}
	c.off += recHeaderSize + int64(n)
	return nil
}

func (c *cursor) position(payload []byte) error {
	if c.pos != nil {
		return c.corrupt(c.off, "second POSITION record")
	}
	p, err := decodePosition(payload)
	if err != nil {
		return c.corrupt(c.off, "POSITION record: %v", err)
	}
	if p.last+1 != c.first {
		return c.corrupt(c.off, "POSITION record says the log ended at index %d before a segment that starts at %d", p.last, c.first)
	}
	c.pos = &p
	return nil
}

func (c *cursor) formatRecord(payload []byte) error {
	ev, err := decodeFormat(payload)
	if err != nil {
		return c.corrupt(c.off, "FORMAT record: %v", err)
	}
	for _, old := range []*binlog.Format{c.format, c.reuse} {
		if old != nil && sameEvent(old.Event, ev) {
			c.format = old
			return nil
		}
	}
	fm, err := binlog.ParseFormat(ev)
	if err != nil {
		ce := c.corrupt(c.off, "FORMAT record: %v", err)
		ce.Err = err
		return ce
	}
	c.format = fm
	return nil
}

func (c *cursor) txn(payload []byte) (*Entry, error) {
	e, err := decodeTxn(payload)
	if err != nil {
		return nil, c.corrupt(c.off, "TXN record: %v", err)
	}
	if e.Index != c.expect {
		return nil, c.corrupt(c.off, "TXN record holds index %d, expected %d", e.Index, c.expect)
	}
	if c.format == nil {
		return nil, c.corrupt(c.off, "TXN record before any FORMAT record")
	}
	e.Txn.Format = c.format
	c.expect++
	return e, nil
}

// sameEvent reports whether two format description events are the same
// event at the same source position.
func sameEvent(a, b binlog.Event) bool {
	return a.Pos == b.Pos && bytes.Equal(a.Data, b.Data)
}
