package binlog

import (
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// A VARCHAR column of a table created before MySQL 5.0.3 (SHOW CREATE
// TABLE says "varchar(30)/*old*/") is a CHAR that strips trailing spaces:
// its table map type is VAR_STRING, with a CHAR's metadata (the real type
// byte, then the length in bytes, whose bits 8 and 9 are in the type
// byte), and its values a CHAR's (a length byte, two above 255 bytes,
// then the bytes). go-mysql, like every reader, takes VAR_STRING's
// metadata for VARCHAR's (the maximum length, two bytes little-endian),
// so it reads a length of 30 as 7933 and each value's length from two
// bytes: the rows panic, or decode to garbage. MariaDB's own replica
// cannot apply them either (it finds the next column's metadata shifted).
// The Decoder replaces the metadata of such a column, once per table map
// decoded, by the length it means, which go-mysql and the Decoder's own
// reading (decodeSimple) then take as the VARCHAR maximum length it is
// read as: one length byte up to 255, two beyond, as the CHAR's values.

// tableMapOld decodes a table map as tableMap does, then fixes the
// metadata of its old VARCHAR columns the first time these bytes are
// decoded (the decoded table map is kept and shared: fixing it twice
// would read a fixed length as metadata).
func (d *Decoder) tableMapOld(ev Event) (*replication.BinlogEvent, error) {
	_, seen := d.maps[string(d.body(ev))]
	be, err := d.tableMap(ev)
	if err != nil || seen {
		return be, err
	}
	if tm, ok := be.Event.(*replication.TableMapEvent); ok {
		fixOldVarchar(tm)
	}
	return be, nil
}

// fixOldVarchar replaces the metadata of tm's VAR_STRING columns whose
// metadata is a CHAR's by the length in bytes it holds.
func fixOldVarchar(tm *replication.TableMapEvent) {
	for i, tp := range tm.ColumnType {
		if tp != mysql.MYSQL_TYPE_VAR_STRING || i >= len(tm.ColumnMeta) {
			continue
		}
		if length, ok := oldVarcharLength(tm.ColumnMeta[i]); ok {
			tm.ColumnMeta[i] = uint16(length)
		}
	}
}

// oldVarcharLength reads a CHAR's metadata as go-mysql holds it for a
// VAR_STRING column (the two bytes little-endian: the type byte low);
// false if its type byte is neither VAR_STRING nor STRING.
func oldVarcharLength(meta uint16) (int, bool) {
	b0, b1 := byte(meta), byte(meta>>8)
	if t := b0 | 0x30; t != mysql.MYSQL_TYPE_VAR_STRING && t != mysql.MYSQL_TYPE_STRING {
		return 0, false
	}
	return int(b1) | int((b0&0x30)^0x30)<<4, true
}
