package binlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/go-mysql-org/go-mysql/replication"
)

// HeaderSize is the size of a binlog event header (binlog format v4).
const HeaderSize = 19

// maxEventSize bounds what a header may claim, so that a corrupt size field
// is reported instead of allocating gigabytes. Servers cap events at
// max_allowed_packet (1 GiB at most).
const maxEventSize = 1 << 30

// Event is one raw binlog event: header, body and, when the binlog has
// checksums, the 4-byte CRC32 trailer.
type Event struct {
	Data []byte
	Pos  Pos
}

// Type is the event type from the header.
func (e Event) Type() replication.EventType { return replication.EventType(e.Data[4]) }

// Timestamp is the header timestamp, in seconds since the epoch.
func (e Event) Timestamp() uint32 { return binary.LittleEndian.Uint32(e.Data[0:]) }

// ServerID is the server_id of the server that originated the event.
func (e Event) ServerID() uint32 { return binary.LittleEndian.Uint32(e.Data[5:]) }

// Size is the event size claimed by the header.
func (e Event) Size() uint32 { return binary.LittleEndian.Uint32(e.Data[9:]) }

// LogPos is the header's end position of the event in the source binlog.
func (e Event) LogPos() uint32 { return binary.LittleEndian.Uint32(e.Data[13:]) }

// Flags are the header flags.
func (e Event) Flags() uint16 { return binary.LittleEndian.Uint16(e.Data[17:]) }

// checkHeader validates what can be validated without the format: the size
// field against the bytes present.
func (e Event) checkHeader() error {
	if len(e.Data) < HeaderSize {
		return fmt.Errorf("%w: event of %d bytes is shorter than a header", ErrTruncated, len(e.Data))
	}
	if n := e.Size(); n < HeaderSize || n > maxEventSize {
		return fmt.Errorf("%w: header claims an event size of %d bytes", ErrCorrupt, n)
	}
	if int(e.Size()) != len(e.Data) {
		return fmt.Errorf("%w: header claims %d bytes, %d present", ErrTruncated, e.Size(), len(e.Data))
	}
	return nil
}

// verifyCRC checks the CRC32 trailer. A format description event is
// checksummed by the server before it sets or clears the "binlog in use"
// header flag, so that flag is masked out first: otherwise every file copied
// while its server had it open would look corrupt.
func (e Event) verifyCRC() error {
	if len(e.Data) < HeaderSize+4 {
		return fmt.Errorf("%w: event too short for a checksum", ErrCorrupt)
	}
	body := e.Data[:len(e.Data)-4]
	want := binary.LittleEndian.Uint32(e.Data[len(e.Data)-4:])
	var got uint32
	if e.Type() == replication.FORMAT_DESCRIPTION_EVENT && e.Flags()&replication.LOG_EVENT_BINLOG_IN_USE_F != 0 {
		hdr := make([]byte, HeaderSize)
		copy(hdr, body[:HeaderSize])
		binary.LittleEndian.PutUint16(hdr[17:], e.Flags()&^replication.LOG_EVENT_BINLOG_IN_USE_F)
		got = crc32.Update(crc32.ChecksumIEEE(hdr), crc32.IEEETable, body[HeaderSize:])
	} else {
		got = crc32.ChecksumIEEE(body)
	}
	if got != want {
		return fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, want, got)
	}
	return nil
}

// RotateName returns the name of the binlog file a rotate event points
// to; fm is the format description in effect (nil before the first one:
// a replication stream opens with a rotate event).
func RotateName(ev Event, fm *Format) (string, error) {
	body := ev.Data[HeaderSize:]
	if fm != nil && fm.Checksum {
		body = body[:max(len(body)-4, 0)]
	}
	if len(body) < 8 {
		return "", posErr(ev, fmt.Errorf("%w: rotate event of %d bytes", ErrCorrupt, len(ev.Data)))
	}
	return string(body[8:]), nil
}
