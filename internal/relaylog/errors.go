package relaylog

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrCorrupt is returned when a record fails its checksum, is torn or
	// cannot be decoded where it should be intact: in a sealed segment, or
	// in a segment a Reader is reading. It comes wrapped in a *CorruptError.
	ErrCorrupt = errors.New("relay log corrupt")
	// ErrTooLarge is returned by Append for a transaction that cannot fit
	// in the log even when everything else is purged (Options.MaxBytes), or
	// whose record would exceed the 4 GiB a record length can express.
	ErrTooLarge = errors.New("transaction too large for the relay log")
	// ErrPurged is returned by Reader.Next when the index it would read
	// next has been purged.
	ErrPurged = errors.New("relay log index purged")
	// ErrClosed is returned by Append, Sync, Purge and Reader.Next after
	// Close.
	ErrClosed = errors.New("relay log closed")
	// ErrLocked is returned by Open when another Log, in this process or
	// another, has the directory open.
	ErrLocked = errors.New("relay log directory in use")
)

// CorruptError names a record that cannot be read: the segment file, the
// byte offset at which the record starts, and the relay index of the
// transaction the record holds or, for a FORMAT or POSITION record, of the
// transaction that should follow it.
type CorruptError struct {
	Path   string
	Offset int64
	Index  uint64
	Reason string
	// Err is the cause when another package gave one: a FORMAT record
	// that is intact but that binlog.ParseFormat rejects (say, a build
	// that no longer supports it) carries the binlog error here.
	Err error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("relaylog: %s at offset %d (index %d): %s: %s", e.Path, e.Offset, e.Index, ErrCorrupt, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true, and errors.Is and As see
// the cause, if any.
func (e *CorruptError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}

// isCorrupt reports whether err says that bytes are damaged, as opposed to
// an I/O failure that must not be mistaken for a torn tail.
func isCorrupt(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce)
}
