package binlog

import (
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

// Next returns the next complete transaction, numbered from 1, or io.EOF.
// A stream that ends inside a transaction is ErrTruncated.
func (r *Reader) Next() (*Txn, error) {
	for {
		if rt := r.framer.Next(); rt != nil {
			t, err := r.decoder.Decode(rt)
			if err != nil {
				return nil, err
			}
			r.seq++
			t.Seq = r.seq
			return t, nil
		}
		if r.ended {
			return nil, io.EOF
		}
		ev, err := r.src.Next()
		if err == io.EOF {
			r.ended = true
			if err := r.framer.End(); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := r.framer.Push(ev); err != nil {
			return nil, err
		}
	}
}
