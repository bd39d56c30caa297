package relaylog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"github.com/paraply/paraply/internal/binlog"
)

// Segment header layout (see the package doc).
const (
	segMagic      = "PRLY"
	segVersion    = 1
	segHeaderSize = 32
)

// Record framing: u32 payload length, u32 CRC32-C of type and payload, u8
// type.
const (
	recHeaderSize = 9
	maxPayload    = math.MaxUint32
)

// Record types.
const (
	recFormat   byte = 1
	recTxn      byte = 2
	recPosition byte = 3
	recPart     byte = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var le = binary.LittleEndian

// errShort is what a payload decoder reports when bytes run out or are
// inconsistent; callers turn it into a CorruptError with the place.
var errShort = errors.New("payload ends early")

func encodeSegHeader(first uint64, created time.Time) []byte {
	b := make([]byte, segHeaderSize)
	copy(b, segMagic)
	le.PutUint16(b[4:], segVersion)
	le.PutUint16(b[6:], segHeaderSize)
	le.PutUint64(b[8:], first)
	le.PutUint64(b[16:], uint64(created.UnixNano()))
	le.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	return b
}

// checkSegHeader validates a segment header and returns the first index it
// names; the caller compares it with the file name.
func checkSegHeader(b []byte) (uint64, error) {
	switch {
	case len(b) < segHeaderSize:
		return 0, fmt.Errorf("segment header torn: %d of %d bytes", len(b), segHeaderSize)
	case string(b[:4]) != segMagic:
		return 0, fmt.Errorf("not a relay log segment (magic % x)", b[:4])
	case le.Uint32(b[28:]) != crc32.Checksum(b[:28], castagnoli):
		return 0, errors.New("segment header checksum mismatch")
	case le.Uint16(b[4:]) != segVersion:
		return 0, fmt.Errorf("segment format version %d, this build reads %d", le.Uint16(b[4:]), segVersion)
	case le.Uint16(b[6:]) != segHeaderSize:
		return 0, fmt.Errorf("segment header size %d, expected %d", le.Uint16(b[6:]), segHeaderSize)
	}
	return le.Uint64(b[8:]), nil
}

// putRecHeader fills the first recHeaderSize bytes of b for a record whose
// type is b[8] and whose payload has n bytes with checksum crc (computed
// over the type byte and the payload).
func putRecHeader(b []byte, n int, crc uint32) {
	le.PutUint32(b[0:], uint32(n))
	le.PutUint32(b[4:], crc)
}

// recordCRC is the checksum of a record: its type byte then its payload.
func recordCRC(typ byte, payload []byte) uint32 {
	return crc32.Update(typeCRC[typ], castagnoli, payload)
}

// typeCRC[t] is the checksum of the type byte t alone, where a record's
// checksum starts (a one-byte slice built per record was allocated).
var typeCRC = func() (c [256]uint32) {
	for t := range c {
		c[t] = crc32.Update(0, castagnoli, []byte{byte(t)})
	}
	return c
}()

// appendRecord appends a complete small record (header and payload) to b.
func appendRecord(b []byte, typ byte, payload []byte) []byte {
	var h [recHeaderSize]byte
	h[8] = typ
	putRecHeader(h[:], len(payload), recordCRC(typ, payload))
	return append(append(b, h[:]...), payload...)
}

// position is the content of a POSITION record: where the log stood when
// the segment was created.
type position struct {
	last   uint64
	gtid   binlog.GTID
	resume string
}

func appendPosition(b []byte, p position) []byte {
	b = le.AppendUint64(b, p.last)
	b = appendGTID(b, p.gtid)
	return appendString(b, p.resume)
}

// preambleSize is the size of a new segment's header and POSITION record.
func preambleSize(p position) int64 {
	n := segHeaderSize + recHeaderSize + 8 + gtidSize(p.gtid) + stringSize(p.resume)
	return int64(n)
}

// formatRecSize is the size of the FORMAT record of ev.
func formatRecSize(ev binlog.Event) int64 {
	n := recHeaderSize + stringSize(ev.Pos.File) + uvarintSize(uint64(ev.Pos.Offset)) + len(ev.Data)
	return int64(n)
}

func uvarintSize(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

func stringSize(s string) int { return uvarintSize(uint64(len(s))) + len(s) }

func gtidSize(g binlog.GTID) int {
	switch g.Flavor {
	case binlog.FlavorMariaDB:
		return 1 + 4 + 4 + 8
	case binlog.FlavorMySQL:
		return 1 + 16 + stringSize(g.Tag) + 8
	}
	return 1
}

func decodePosition(payload []byte) (position, error) {
	d := decoder{b: payload}
	p := position{last: d.u64(), gtid: d.gtid(), resume: d.str()}
	return p, d.done()
}

// appendFormat encodes a FORMAT record's payload.
func appendFormat(b []byte, ev binlog.Event) []byte {
	b = appendString(b, ev.Pos.File)
	b = binary.AppendUvarint(b, uint64(ev.Pos.Offset))
	return append(b, ev.Data...)
}

// decodeFormat decodes a FORMAT record's payload; the event's Data aliases
// payload.
func decodeFormat(payload []byte) (binlog.Event, error) {
	d := decoder{b: payload}
	file := d.str()
	off := d.offset()
	data := d.rest()
	if d.err != nil {
		return binlog.Event{}, d.err
	}
	if len(data) < binlog.HeaderSize {
		return binlog.Event{}, fmt.Errorf("format description event of %d bytes", len(data))
	}
	return binlog.Event{Data: data, Pos: binlog.Pos{File: file, Offset: off}}, nil
}

// appendTxnHead encodes the part of a TXN payload before the events.
func appendTxnHead(b []byte, index uint64, g binlog.GTID, file, resume string, events int) []byte {
	b = le.AppendUint64(b, index)
	b = appendGTID(b, g)
	b = appendString(b, file)
	b = appendString(b, resume)
	return binary.AppendUvarint(b, uint64(events))
}

// appendEventPrefix encodes what precedes an event's bytes in a TXN payload.
func appendEventPrefix(b []byte, ev binlog.Event) []byte {
	b = binary.AppendUvarint(b, uint64(ev.Pos.Offset))
	return binary.AppendUvarint(b, uint64(len(ev.Data)))
}

// minEventEncoding is the fewest bytes one event takes in a TXN payload.
const minEventEncoding = 2 + binlog.HeaderSize

// decodeTxn decodes a TXN payload. The events' Data alias payload, each
// capped at its own length.
func decodeTxn(payload []byte) (*Entry, error) {
	d := decoder{b: payload}
	e := &Entry{Index: d.u64(), GTID: d.gtid()}
	file := d.str()
	e.Resume = d.str()
	n := d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	if n == 0 || n > uint64(len(d.b)/minEventEncoding) {
		return nil, fmt.Errorf("event count %d impossible in %d bytes", n, len(d.b))
	}
	events := make([]binlog.Event, n)
	for i := range events {
		off := d.offset()
		size := d.uvarint()
		if d.err == nil && (size < binlog.HeaderSize || size > uint64(len(d.b))) {
			return nil, fmt.Errorf("event %d claims %d bytes, %d left", i, size, len(d.b))
		}
		data := d.bytes(int(size))
		if d.err != nil {
			return nil, d.err
		}
		events[i] = binlog.Event{Data: data[:size:size], Pos: binlog.Pos{File: file, Offset: off}}
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	e.Txn = &binlog.RawTxn{Events: events}
	return e, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendGTID(b []byte, g binlog.GTID) []byte {
	b = append(b, byte(g.Flavor))
	switch g.Flavor {
	case binlog.FlavorMariaDB:
		b = le.AppendUint32(b, g.Domain)
		b = le.AppendUint32(b, g.Server)
	case binlog.FlavorMySQL:
		b = append(b, g.SID[:]...)
		b = appendString(b, g.Tag)
	default:
		return b
	}
	return le.AppendUint64(b, g.Seq)
}

// checkGTID rejects a GTID that would not survive the round trip.
func checkGTID(g binlog.GTID) error {
	switch g.Flavor {
	case binlog.FlavorMariaDB:
		if len(g.Tag) != 0 || g.SID != [16]byte{} {
			return fmt.Errorf("MariaDB GTID %s with MySQL fields set", g)
		}
	case binlog.FlavorMySQL:
		if g.Domain != 0 || g.Server != 0 {
			return fmt.Errorf("MySQL GTID %s with MariaDB fields set", g)
		}
	case binlog.FlavorUnknown:
		if g != (binlog.GTID{}) {
			return errors.New("GTID without a flavor has fields set")
		}
	default:
		return fmt.Errorf("GTID flavor %d unknown", g.Flavor)
	}
	return nil
}

// decoder reads a payload; after the first problem every read returns zero
// values and err says what happened.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail(errShort)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() byte {
	if b := d.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return le.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return le.Uint64(b)
	}
	return 0
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errors.New("bad varint"))
		return 0
	}
	d.b = d.b[n:]
	return v
}

// offset reads a uvarint that must fit an int64 file offset.
func (d *decoder) offset() int64 {
	v := d.uvarint()
	if v > math.MaxInt64 {
		d.fail(fmt.Errorf("offset %d out of range", v))
		return 0
	}
	return int64(v)
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return ""
	}
	return string(d.bytes(int(n)))
}

func (d *decoder) gtid() binlog.GTID {
	g := binlog.GTID{Flavor: binlog.Flavor(d.u8())}
	switch g.Flavor {
	case binlog.FlavorUnknown:
		return g
	case binlog.FlavorMariaDB:
		g.Domain = d.u32()
		g.Server = d.u32()
	case binlog.FlavorMySQL:
		copy(g.SID[:], d.bytes(16))
		g.Tag = d.str()
	default:
		d.fail(fmt.Errorf("GTID flavor %d unknown", g.Flavor))
		return binlog.GTID{}
	}
	g.Seq = d.u64()
	return g
}

func (d *decoder) rest() []byte {
	if d.err != nil {
		return nil
	}
	v := d.b
	d.b = nil
	return v
}

// done reports an error if decoding failed or bytes are left over.
func (d *decoder) done() error {
	if d.err != nil {
		return d.err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%d unexpected bytes after the payload", len(d.b))
	}
	return nil
}
