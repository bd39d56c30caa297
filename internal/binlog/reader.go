package binlog

import (
	"errors"
	"fmt"
	"io"
)

// EventSource yields raw events in stream order and io.EOF at the end.
type EventSource interface {
	Next() (Event, error)
}

// Reader decodes a stream of events into numbered transactions: the
// composition of an EventSource, a Framer and a Decoder.
type Reader struct {
	src     EventSource
	framer  *Framer
	decoder *Decoder
	seq     uint64
	ended   bool
}

// NewReader reads transactions from src.
func NewReader(src EventSource) *Reader {
	return &Reader{src: src, framer: NewFramer(), decoder: NewDecoder()}
}

// Format is the format description in effect (nil before the first).
func (r *Reader) Format() *Format { return r.framer.Format() }

// SetPartBytes bounds the memory of one transaction: one larger than n
// bytes is decoded piece by piece, without its row images (see
// Decoder.DecodePieces). 0, the default, decodes every transaction whole.
func (r *Reader) SetPartBytes(n int) { r.framer.PartBytes = n }

// Next returns the next complete transaction, numbered from 1, or io.EOF.
// A stream that ends inside a transaction is ErrTruncated.
func (r *Reader) Next() (*Txn, error) {
	for {
		if rt := r.framer.Next(); rt != nil {
			var t *Txn
			var err error
			if rt.Part {
				t, err = r.decoder.DecodePieces(r.pieces(rt))
			} else {
				t, err = r.decoder.Decode(rt)
			}
			if err != nil {
				return nil, err
			}
			r.seq++
			t.Seq = r.seq
			return t, nil
		}
		ok, err := r.read()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, io.EOF
		}
	}
}

// read pushes the next event into the framer; false at the end of the
// stream.
func (r *Reader) read() (bool, error) {
	if r.ended {
		return false, nil
	}
	ev, err := r.src.Next()
	if errors.Is(err, io.EOF) {
		r.ended = true
		return true, r.framer.End()
	}
	if err != nil {
		return false, err
	}
	return true, r.framer.Push(ev)
}

// pieces returns the pieces of the large transaction whose first piece is
// first, one call at a time, reading events as they are needed.
func (r *Reader) pieces(first *RawTxn) func() (*RawTxn, error) {
	next, done := first, false
	return func() (*RawTxn, error) {
		for next == nil && !done {
			next = r.framer.Next()
			if next != nil {
				break
			}
			ok, err := r.read()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, &PosError{Pos: first.Events[0].Pos, Err: fmt.Errorf("%w: the stream ends inside the transaction that starts here", ErrTruncated)}
			}
		}
		rt := next
		next = nil
		if rt != nil && !rt.Part {
			done = true
		}
		return rt, nil
	}
}
