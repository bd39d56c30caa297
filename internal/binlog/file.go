package binlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// fileMagic starts every binlog file.
var fileMagic = []byte{0xfe, 'b', 'i', 'n'}

// FileReader reads raw events from binlog files, one file after the other.
// Every error it returns is a *PosError naming the file and offset.
type FileReader struct {
	paths []string
	idx   int
	f     *os.File
	r     *bufio.Reader
	off   int64
	// read counts bytes consumed across all files, for progress reports.
	read int64
}

// NewFileReader reads the given binlog files in order.
func NewFileReader(paths ...string) *FileReader {
	return &FileReader{paths: paths, idx: -1}
}

// BytesRead is the number of bytes consumed so far across all files.
func (r *FileReader) BytesRead() int64 { return r.read }

// TotalBytes is the sum of the files' sizes (0 for files that cannot be
// stat'ed; Next reports those).
func (r *FileReader) TotalBytes() int64 {
	var n int64
	for _, p := range r.paths {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// Close releases the open file, if any.
func (r *FileReader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// Next returns the next event, or io.EOF after the last event of the last
// file. A file that ends in the middle of an event is ErrTruncated.
func (r *FileReader) Next() (Event, error) {
	for {
		if r.f == nil {
			if err := r.openNext(); err != nil {
				return Event{}, err
			}
		}
		ev, err := r.readEvent()
		if errors.Is(err, io.EOF) {
			r.Close()
			continue
		}
		return ev, err
	}
}

func (r *FileReader) openNext() error {
	r.idx++
	if r.idx >= len(r.paths) {
		return io.EOF
	}
	path := r.paths[r.idx]
	f, err := os.Open(path)
	if err != nil {
		return &PosError{Pos: Pos{File: path}, Err: err}
	}
	magic := make([]byte, 4)
	n, err := io.ReadFull(f, magic)
	if err != nil || !bytes.Equal(magic, fileMagic) {
		f.Close()
		if n < 4 {
			return &PosError{Pos: Pos{File: path}, Err: fmt.Errorf("%w: file too short to be a binlog (%d bytes)", ErrTruncated, n)}
		}
		return &PosError{Pos: Pos{File: path}, Err: fmt.Errorf("%w: not a binlog file (bad magic bytes % x)", ErrCorrupt, magic)}
	}
	r.f, r.r, r.off = f, bufio.NewReaderSize(f, 1<<20), 4
	r.read += 4
	return nil
}

func (r *FileReader) readEvent() (Event, error) {
	pos := Pos{File: r.paths[r.idx], Offset: r.off}
	// The header is looked at in the reader's buffer, then read with the
	// rest into the event's own bytes: no copy of its own to allocate.
	hdr, err := r.r.Peek(HeaderSize)
	if errors.Is(err, io.EOF) && len(hdr) == 0 {
		return Event{}, io.EOF
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Event{}, &PosError{Pos: pos, Err: fmt.Errorf("%w: file ends inside an event header (%d of %d bytes)", ErrTruncated, len(hdr), HeaderSize)}
		}
		return Event{}, &PosError{Pos: pos, Err: err}
	}
	size := Event{Data: hdr}.Size()
	if size < HeaderSize || size > maxEventSize {
		return Event{}, &PosError{Pos: pos, Err: fmt.Errorf("%w: header claims an event size of %d bytes", ErrCorrupt, size)}
	}
	// A damaged size field can claim up to maxEventSize: check that the
	// file holds a large event before allocating (and zeroing) room for it.
	if size > 1<<20 {
		if st, err := r.f.Stat(); err == nil && st.Size()-r.off < int64(size) {
			ev := Event{Data: hdr, Pos: pos}
			return Event{}, &PosError{Pos: pos, Event: ev.Type().String(), Err: fmt.Errorf("%w: file ends inside the event (%d of %d bytes)", ErrTruncated, st.Size()-r.off, size)}
		}
	}
	data := make([]byte, size)
	if n, err := io.ReadFull(r.r, data); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			ev := Event{Data: data, Pos: pos}
			return Event{}, &PosError{Pos: pos, Event: ev.Type().String(), Err: fmt.Errorf("%w: file ends inside the event (%d of %d bytes)", ErrTruncated, n, size)}
		}
		return Event{}, &PosError{Pos: pos, Err: err}
	}
	r.off += int64(size)
	r.read += int64(size)
	return Event{Data: data, Pos: pos}, nil
}
