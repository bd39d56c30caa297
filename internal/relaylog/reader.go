package relaylog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/paraply/paraply/internal/binlog"
)

// Entry is one transaction read back from the log.
type Entry struct {
	Index  uint64
	GTID   binlog.GTID
	Resume string // the Record's Resume
	// Txn holds the events as appended, with their source positions, and
	// the format description in effect (one *binlog.Format is shared by
	// consecutive entries read under it). For a large transaction it holds
	// its last piece only: the pieces before are in Parts.
	Txn *binlog.RawTxn
	// Parts locate the pieces of a large transaction appended before Txn
	// (see Log.AppendPart), in order; read them with Log.ReadPart. They are
	// not read into memory with the entry.
	Parts []PartRef
}

// PartRef locates one piece of a large transaction in a segment file.
type PartRef struct {
	Path   string
	Offset int64 // of the PART record
	Size   int64 // of the record, header included
	Index  uint64
}

// Reader reads entries in index order from the segment files, through its
// own file handle. Use one Reader from one goroutine at a time; any number
// of Readers may read one Log.
type Reader struct {
	l      *Log
	next   uint64
	cur    *cursor
	format *binlog.Format // last format seen, reused by the next segment
	err    error          // sticky: corruption, or Close
	parts  []PartRef      // of the entry being read
}

// NewReader returns a Reader whose first entry is index from (0 means 1).
// An index that has been purged, or is purged before the Reader gets to it,
// is ErrPurged; an index not appended yet is waited for.
func (l *Log) NewReader(from uint64) *Reader {
	return &Reader{l: l, next: max(from, 1)}
}

// Next returns the next entry. At the end of the log it waits until another
// transaction is appended, ctx is done (ctx.Err() is returned) or the log
// is closed (ErrClosed); at the end of a sealed log (Log.Seal) it returns
// io.EOF. A damaged record is a *CorruptError (ErrCorrupt);
// it, like ErrPurged, is returned again by every later call.
func (r *Reader) Next(ctx context.Context) (*Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		seg, ok, wait, err := r.l.locate(r.next)
		if errors.Is(err, ErrPurged) {
			r.closeCursor() // let the purged file's space go
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if r.cur == nil || r.cur.first != seg.first {
			if err := r.open(seg); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue // purged since locate: locate says so now
				}
				return nil, r.fail(err)
			}
		}
		e, err := r.read(seg)
		if err != nil {
			return nil, r.fail(err)
		}
		r.next++
		return e, nil
	}
}

// open switches to segment seg. A segment missing although the log lists
// it is damage, not a reason to retry forever: open reports os.ErrNotExist
// only when the index has been purged meanwhile.
func (r *Reader) open(seg segment) error {
	r.closeCursor()
	path := r.l.path(seg.first)
	c, err := openCursor(path, seg.first, seg.size)
	if errors.Is(err, os.ErrNotExist) {
		if _, _, _, lerr := r.l.locate(r.next); !errors.Is(lerr, ErrPurged) {
			return &CorruptError{Path: path, Index: r.next, Reason: "segment file is missing"}
		}
	}
	if err != nil {
		return err
	}
	c.reuse = r.format
	r.cur = c
	return nil
}

// read returns entry r.next from the current segment, whose published
// records end at seg.size, skipping the entries before it.
func (r *Reader) read(seg segment) (*Entry, error) {
	c := r.cur
	for {
		e, err := c.step(seg.size)
		if errors.Is(err, errEnd) {
			// r.next was appended and belongs here: the segment lacks it.
			return nil, c.corrupt(c.off, "segment ends before index %d", r.next)
		}
		if err != nil {
			return nil, err
		}
		if c.format != nil {
			r.format = c.format
		}
		if c.part != nil {
			if c.part.Index == r.next {
				r.parts = append(r.parts, *c.part)
			}
			continue
		}
		if e != nil && e.Index == r.next {
			e.Parts, r.parts = r.parts, nil
			return e, nil
		}
	}
}

// fail closes the current segment, so that the next call starts over from
// the segment's beginning, and makes corruption sticky.
func (r *Reader) fail(err error) error {
	r.closeCursor()
	if isCorrupt(err) {
		r.err = err
		return err
	}
	return fmt.Errorf("relaylog: reading index %d: %w", r.next, err)
}

func (r *Reader) closeCursor() {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
}

// Close releases the Reader's file handle. The Reader must not be used
// afterwards.
func (r *Reader) Close() error {
	r.closeCursor()
	r.err = ErrClosed
	return nil
}

// ReadPart reads one piece of a large transaction (see Entry.Parts) and
// checks it. The events belong to the format description of the entry's
// Txn. A damaged piece is a *CorruptError.
func (l *Log) ReadPart(ref PartRef) ([]binlog.Event, error) {
	bad := func(format string, args ...any) error {
		return &CorruptError{Path: ref.Path, Offset: ref.Offset, Index: ref.Index, Reason: fmt.Sprintf(format, args...)}
	}
	if ref.Size < recHeaderSize+8 || ref.Size-recHeaderSize > maxPayload {
		return nil, bad("PART record of %d bytes", ref.Size)
	}
	f, err := os.Open(ref.Path)
	if err != nil {
		return nil, fmt.Errorf("relaylog: reading a piece of index %d: %w", ref.Index, err)
	}
	defer f.Close()
	b := make([]byte, ref.Size)
	if n, err := f.ReadAt(b, ref.Offset); n < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, bad("file ends %d bytes into a PART record of %d", n, ref.Size)
		}
		return nil, fmt.Errorf("relaylog: reading a piece of index %d: %w", ref.Index, err)
	}
	n, sum, typ := le.Uint32(b[0:]), le.Uint32(b[4:]), b[8]
	payload := b[recHeaderSize:]
	switch {
	case typ != recPart:
		return nil, bad("record of type %d where a PART record was", typ)
	case int64(n) != int64(len(payload)):
		return nil, bad("PART record length %d, %d expected", n, len(payload))
	case recordCRC(typ, payload) != sum:
		return nil, bad("record checksum mismatch")
	}
	e, err := decodeTxn(payload)
	if err != nil {
		return nil, bad("PART record: %v", err)
	}
	if e.Index != ref.Index {
		return nil, bad("PART record holds index %d, expected %d", e.Index, ref.Index)
	}
	return e.Txn.Events, nil
}
