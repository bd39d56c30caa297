package relaylog

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults for Options.
const (
	DefaultMaxBytes     int64 = 1 << 30
	DefaultSegmentBytes int64 = 64 << 20
	DefaultSyncInterval       = 100 * time.Millisecond
)

// minMaxBytes keeps MaxBytes above a segment preamble and a small record.
const minMaxBytes = 1 << 10

// SyncPolicy says when Append calls fsync. Make one with SyncInterval, or
// use SyncEveryTxn or SyncNever; the zero value is SyncInterval of
// DefaultSyncInterval.
type SyncPolicy int64

// The policies that are not intervals.
const (
	// SyncEveryTxn syncs each transaction before Append returns.
	SyncEveryTxn SyncPolicy = -1
	// SyncNever leaves syncing to the kernel, except at Close: the log then
	// survives a crash of the process but not of the machine, and a power
	// loss may damage sealed segments too.
	SyncNever SyncPolicy = -2
)

// SyncInterval syncs when Append finds that d has passed since the last
// sync (there is no background goroutine: call Sync when the stream goes
// idle to bound the unsynced tail). A d of zero or less is SyncEveryTxn.
func SyncInterval(d time.Duration) SyncPolicy {
	if d <= 0 {
		return SyncEveryTxn
	}
	return SyncPolicy(d)
}

// interval is how often Append syncs under p; 0 for SyncEveryTxn, -1 for
// SyncNever.
func (p SyncPolicy) interval() time.Duration {
	switch {
	case p == SyncNever:
		return -1
	case p == SyncEveryTxn:
		return 0
	case p == 0:
		return DefaultSyncInterval
	}
	return time.Duration(p)
}

func (p SyncPolicy) String() string {
	switch d := p.interval(); {
	case d < 0:
		return "never"
	case d == 0:
		return "every-txn"
	default:
		return "interval " + d.String()
	}
}

// Options configure a Log. Only Dir is required.
type Options struct {
	// Dir is the log's directory; Open creates it if needed. One Log at a
	// time may have it open.
	Dir string

	// MaxBytes bounds the size of all segment files together. When an
	// Append would exceed it, Append waits for Purge (see the package doc).
	// Default DefaultMaxBytes (1 GiB); at least 1 KiB.
	MaxBytes int64

	// SegmentBytes is the size at which Append starts a new segment; a
	// segment holds more only when a single transaction is larger. Purge
	// frees space a segment at a time, so MaxBytes should hold several.
	// Default DefaultSegmentBytes (64 MiB) or MaxBytes/4 if that is less;
	// at most MaxBytes.
	SegmentBytes int64

	// Sync says when Append fsyncs. Default SyncInterval(100ms).
	Sync SyncPolicy

	// Logger receives what recovery cut and back-pressure waits. Default:
	// discard.
	Logger *slog.Logger
}

// withDefaults returns a copy of o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = min(DefaultSegmentBytes, o.MaxBytes/4)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// validate reports the first invalid field of o, which must have its
// defaults applied.
func (o Options) validate() error {
	switch {
	case o.Dir == "":
		return errors.New("relaylog: Options.Dir is required")
	case o.MaxBytes < minMaxBytes:
		return fmt.Errorf("relaylog: MaxBytes %d is less than the minimum %d", o.MaxBytes, minMaxBytes)
	case o.SegmentBytes <= 0 || o.SegmentBytes > o.MaxBytes:
		return fmt.Errorf("relaylog: SegmentBytes %d out of range 1..MaxBytes (%d)", o.SegmentBytes, o.MaxBytes)
	case o.Sync < SyncNever:
		return fmt.Errorf("relaylog: invalid SyncPolicy %d", int64(o.Sync))
	}
	return nil
}
