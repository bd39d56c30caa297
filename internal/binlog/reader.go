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
// composition of an EventSource, a Framer and a Decoder; or, from
// NewRawReader, of a Decoder and raw transactions framed elsewhere.
type Reader struct {
	src     EventSource
	framer  *Framer
	raw     func() (*RawTxn, error)
	format  *Format // raw: the format of the last transaction
	decoder *Decoder
	seq     uint64
	ended   bool
}

// NewReader reads transactions from src.
func NewReader(src EventSource) *Reader {
	r := &Reader{src: src, framer: NewFramer(), decoder: NewDecoder()}
	r.raw = r.frame
	return r
}

// NewRawReader decodes the raw transactions next returns, in stream
// order, until it returns an error (io.EOF at the end): what a Framer
// made of the stream elsewhere, such as in a goroutine that reads ahead
// (it must not recycle them). A transaction larger than its PartBytes
// comes in pieces, as from NewReader with SetPartBytes.
func NewRawReader(next func() (*RawTxn, error)) *Reader {
	return &Reader{raw: next, decoder: NewDecoder()}
}

// Format is the format description in effect (nil before the first); for
// a raw reader, that of the last transaction returned.
func (r *Reader) Format() *Format {
	if r.framer == nil {
		return r.format
	}
	return r.framer.Format()
}

// SetPartBytes bounds the memory of one transaction: one larger than n
// bytes is decoded piece by piece, without its row images (see
// Decoder.DecodePieces). 0, the default, decodes every transaction whole.
// A raw reader's pieces are its Framer's.
func (r *Reader) SetPartBytes(n int) {
	if r.framer != nil {
		r.framer.PartBytes = n
	}
}

// Next returns the next complete transaction, numbered from 1, or io.EOF.
// A stream that ends inside a transaction is ErrTruncated.
func (r *Reader) Next() (*Txn, error) {
	rt, err := r.raw()
	if err != nil {
		return nil, err
	}
	r.format = rt.Format
	var t *Txn
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

// frame returns the next transaction the framer makes of the events of
// src, or io.EOF at its end.
func (r *Reader) frame() (*RawTxn, error) {
	for {
		if rt := r.framer.Next(); rt != nil {
			return rt, nil
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
		if next == nil && !done {
			rt, err := r.raw()
			if errors.Is(err, io.EOF) {
				return nil, &PosError{Pos: first.Events[0].Pos, Err: fmt.Errorf("%w: the stream ends inside the transaction that starts here", ErrTruncated)}
			}
			if err != nil {
				return nil, err
			}
			next = rt
		}
		rt := next
		next = nil
		if rt != nil && !rt.Part {
			done = true
		}
		return rt, nil
	}
}
