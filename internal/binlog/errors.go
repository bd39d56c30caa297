package binlog

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is through a PosError.
var (
	// ErrCorrupt is returned when an event fails its checksum, has an
	// impossible size, or cannot be decoded.
	ErrCorrupt = errors.New("corrupt binlog")
	// ErrTruncated is returned when a file ends inside an event, or inside
	// a transaction that never commits.
	ErrTruncated = errors.New("truncated binlog")
	// ErrUnknownEvent is returned for an event type this package does not
	// understand and the server did not mark ignorable.
	ErrUnknownEvent = errors.New("unknown binlog event type")
	// ErrUnsupported is returned for binlog content paraply knows but
	// cannot replicate safely (XA transactions, encrypted binlogs,
	// incidents, pre-5.0 formats).
	ErrUnsupported = errors.New("unsupported binlog content")
)

// PosError is an error tied to one event of a binlog: it names the file,
// the byte offset where the event starts and the event type.
type PosError struct {
	Pos   Pos
	Event string // event type name, "" when the header itself is bad
	Err   error
}

func (e *PosError) Error() string {
	if e.Event == "" {
		return fmt.Sprintf("%s at offset %d: %v", e.Pos.File, e.Pos.Offset, e.Err)
	}
	return fmt.Sprintf("%s at offset %d (%s): %v", e.Pos.File, e.Pos.Offset, e.Event, e.Err)
}

func (e *PosError) Unwrap() error { return e.Err }

// posErr wraps err (a sentinel or a wrapped sentinel) with the event's place.
func posErr(ev Event, err error) error {
	name := ""
	if len(ev.Data) >= HeaderSize {
		name = ev.Type().String()
	}
	return &PosError{Pos: ev.Pos, Event: name, Err: err}
}
