package binlog

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"
)

// Format is what a format description event says about the events after
// it: who wrote them, and whether they carry a checksum. Every transaction
// keeps a pointer to the Format it was read under, so a decoder can follow
// format changes at file boundaries.
type Format struct {
	// Event is the raw format description event (the relay log stores it).
	Event Event
	// ServerVersion is the version string of the server that wrote it.
	ServerVersion string
	Flavor        Flavor
	// Checksum is true when events end with a CRC32.
	Checksum bool
	fde      *replication.FormatDescriptionEvent
}

// SourceStarted reports whether the format description is the first the
// source wrote after it started (its created timestamp is set): the
// source's temporary tables are gone then, and a replica drops its own
// copies (MariaDB's Start_log_event_v3::do_apply_event). A source zeroes
// the timestamp in the format description it sends for a position inside
// a file, so a reconnection does not look like a start.
func (f *Format) SourceStarted() bool {
	return f.fde != nil && f.fde.CreateTimestamp != 0
}

// ParseFormat decodes a format description event.
func ParseFormat(ev Event) (*Format, error) {
	if err := ev.checkHeader(); err != nil {
		return nil, err
	}
	if ev.Type() != replication.FORMAT_DESCRIPTION_EVENT {
		return nil, fmt.Errorf("%w: expected a format description event, found %s", ErrCorrupt, ev.Type())
	}
	fde := &replication.FormatDescriptionEvent{}
	if err := safeDecode(fde, ev.Data[HeaderSize:]); err != nil {
		return nil, fmt.Errorf("%w: format description: %v", ErrCorrupt, err)
	}
	if fde.Version != 4 {
		return nil, fmt.Errorf("%w: binlog format version %d (only v4, MySQL 5.0 and later, is supported)", ErrUnsupported, fde.Version)
	}
	f := &Format{Event: ev, ServerVersion: fde.ServerVersion, fde: fde}
	f.Flavor = FlavorMySQL
	if strings.Contains(strings.ToLower(fde.ServerVersion), "mariadb") {
		f.Flavor = FlavorMariaDB
	}
	switch fde.ChecksumAlgorithm {
	case replication.BINLOG_CHECKSUM_ALG_CRC32:
		f.Checksum = true
	case replication.BINLOG_CHECKSUM_ALG_OFF, replication.BINLOG_CHECKSUM_ALG_UNDEF:
	default:
		return nil, fmt.Errorf("%w: checksum algorithm %d", ErrUnsupported, fde.ChecksumAlgorithm)
	}
	if f.Checksum {
		if err := ev.verifyCRC(); err != nil {
			return nil, err
		}
	}
	if err := checkPostHeaders(fde.EventTypeHeaderLengths); err != nil {
		return nil, err
	}
	return f, nil
}

// checkPostHeaders rejects a format whose event numbering is not that of a
// released server. Every MySQL and MariaDB release gives query events a
// 13-byte post-header and XID events none; development trees of MySQL 5.1
// and 5.2 (the wl2325 binlogs) numbered their events differently, so their
// table maps would be read as XIDs and their rows events as LOAD DATA.
func checkPostHeaders(lens []byte) error {
	want := []struct {
		t replication.EventType
		n byte
	}{{replication.QUERY_EVENT, 13}, {replication.XID_EVENT, 0}}
	for _, w := range want {
		i := int(w.t) - 1 // the table starts at event type 1
		if i < len(lens) && lens[i] != w.n {
			return fmt.Errorf("%w: the format description gives %s a %d-byte post-header, not %d: events are numbered as by no released server",
				ErrUnsupported, w.t, lens[i], w.n)
		}
	}
	return nil
}

// safeDecode runs a go-mysql decoder and turns a panic on malformed input
// into an error: the library indexes into event bodies without bounds checks.
func safeDecode(e replication.Event, body []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed event: %v", r)
		}
	}()
	return e.Decode(body)
}
