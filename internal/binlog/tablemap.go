package binlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// A table map event starts, after its header, with the table id (6 bytes
// in every binlog this package accepts), 2 bytes of flags, then the
// schema name (a length byte, the name, a NUL) and the table name in the
// same form; the column types and metadata follow. Rows events carry the
// same table id at the same place.
const (
	tableIDLen     = 6
	tableMapSchema = HeaderSize + tableIDLen + 2
)

// maxNameBytes is the most a length byte of a table map can say.
const maxNameBytes = 255

// TableID is the table id of a table map or rows event.
func TableID(ev Event) uint64 { return readTableID(ev.Data[HeaderSize:], tableIDLen) }

// readTableID reads the n-byte little-endian table id at the start of b.
func readTableID(b []byte, n int) uint64 {
	var id [8]byte
	copy(id[:], b[:n])
	return binary.LittleEndian.Uint64(id[:])
}

// TableMapNames reads the schema and table a raw table map event names.
func TableMapNames(ev Event) (schema, table string, err error) {
	s, t, _, err := tableMapNames(ev.Data)
	return string(s), string(t), err
}

// tableMapNames returns the names and the offset of the table name's
// length byte.
func tableMapNames(d []byte) (schema, table []byte, tableAt int, err error) {
	p := tableMapSchema
	if len(d) < p+1 || len(d) < p+1+int(d[p])+2 {
		return nil, nil, 0, fmt.Errorf("%w: table map event of %d bytes too short for its schema name", ErrCorrupt, len(d))
	}
	n := int(d[p])
	schema = d[p+1 : p+1+n]
	tableAt = p + 1 + n + 1
	m := int(d[tableAt])
	if len(d) < tableAt+1+m+1 {
		return nil, nil, 0, fmt.Errorf("%w: table map event of %d bytes too short for its table name", ErrCorrupt, len(d))
	}
	return schema, d[tableAt+1 : tableAt+1+m], tableAt, nil
}

// RewriteTableMapSchema returns a copy of the table map event ev naming
// schema instead of its own: the schema name and its length byte change,
// and with them the event size in the header and, when the events carry
// one (checksum), the CRC32 trailer. The header's log position is kept:
// it says where the event ended in the source's binlog.
func RewriteTableMapSchema(ev Event, schema string, checksum bool) (Event, error) {
	if len(schema) > maxNameBytes {
		return Event{}, fmt.Errorf("schema name of %d bytes does not fit a table map event", len(schema))
	}
	d := ev.Data
	old, _, tableAt, err := tableMapNames(d)
	if err != nil {
		return Event{}, err
	}
	end := len(d)
	if checksum {
		if end < tableAt+4 {
			return Event{}, fmt.Errorf("%w: table map event too short for its checksum", ErrCorrupt)
		}
		end -= 4
	}
	out := make([]byte, 0, len(d)-len(old)+len(schema))
	out = append(out, d[:tableMapSchema]...)
	out = append(out, byte(len(schema)))
	out = append(out, schema...)
	out = append(out, 0)
	out = append(out, d[tableAt:end]...)
	if checksum {
		out = binary.LittleEndian.AppendUint32(out, 0)
	}
	binary.LittleEndian.PutUint32(out[9:], uint32(len(out)))
	if checksum {
		n := len(out) - 4
		binary.LittleEndian.PutUint32(out[n:], crc32.ChecksumIEEE(out[:n]))
	}
	return Event{Data: out, Pos: ev.Pos}, nil
}
