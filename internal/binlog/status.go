package binlog

import "encoding/binary"

// QuerySession are the settings of the session that ran a statement, as
// its query event's status variables carry them: character sets as
// collation IDs (0 when the event does not carry one), and sql_mode. DDL
// inherits them on the source: a CREATE DATABASE without a character set
// gets Server's; a replica runs the statement with them.
type QuerySession struct {
	// Client, Connection and Server are character_set_client,
	// collation_connection and collation_server (Q_CHARSET_CODE).
	Client, Connection, Server uint16
	// DefaultUTF8MB4 is MySQL 8's default_collation_for_utf8mb4
	// (Q_DEFAULT_COLLATION_FOR_UTF8MB4): what utf8mb4 without a collation
	// means.
	DefaultUTF8MB4 uint16
	// SQLMode is sql_mode (Q_SQL_MODE_CODE), when HasSQLMode.
	SQLMode    uint64
	HasSQLMode bool
}

// Query event status variable codes (MySQL log_event.h, MariaDB log_event.h).
const (
	qFlags2             = 0
	qSQLMode            = 1
	qCatalog            = 2
	qAutoIncrement      = 3
	qCharset            = 4
	qTimeZone           = 5
	qCatalogNZ          = 6
	qLCTimeNames        = 7
	qCharsetDatabase    = 8
	qTableMapForUpdate  = 9
	qMasterDataWritten  = 10
	qInvoker            = 11
	qUpdatedDBNames     = 12
	qMicroseconds       = 13
	qExplicitDefaultsTS = 16
	qDDLLoggedWithXID   = 17
	qDefaultUTF8MB4     = 18
	qRequirePrimaryKey  = 19
	qDefaultEncryption  = 20
	qHRNow              = 128 // MariaDB
	qXID                = 129 // MariaDB
	qGTIDFlags3         = 130 // MariaDB
)

// fixedStatusLen is the length of the status variables with a fixed one.
var fixedStatusLen = map[byte]int{
	qFlags2: 4, qSQLMode: 8, qAutoIncrement: 4, qCharset: 6, qLCTimeNames: 2, qCharsetDatabase: 2,
	qTableMapForUpdate: 8, qMasterDataWritten: 4, qMicroseconds: 3, qExplicitDefaultsTS: 1,
	qDDLLoggedWithXID: 8, qDefaultUTF8MB4: 2, qRequirePrimaryKey: 1, qDefaultEncryption: 1,
	qHRNow: 3, qXID: 8, qGTIDFlags3: 1,
}

// parseQuerySession reads the session settings (character sets, sql_mode)
// from a query event's status
// variables. The variables carry no lengths, so reading stops at a code it
// does not know; what was read so far is kept.
func parseQuerySession(b []byte) QuerySession {
	var q QuerySession
	for len(b) > 0 {
		code := b[0]
		b = b[1:]
		n, fixed := fixedStatusLen[code]
		switch {
		case fixed:
		case code == qCatalog && len(b) > 0:
			n = 1 + int(b[0]) + 1 // length, name, NUL
		case (code == qTimeZone || code == qCatalogNZ) && len(b) > 0:
			n = 1 + int(b[0])
		case code == qInvoker && len(b) > 0:
			n = 1 + int(b[0])
			if n < len(b) {
				n += 1 + int(b[n])
			}
		case code == qUpdatedDBNames && len(b) > 0:
			n = 1
			if count := int(b[0]); count != 254 { // 254: too many to list
				for i := 0; i < count && n < len(b); i++ {
					for n < len(b) && b[n] != 0 {
						n++
					}
					n++ // the NUL
				}
			}
		default:
			return q
		}
		if n > len(b) {
			return q
		}
		switch code {
		case qCharset:
			q.Client = binary.LittleEndian.Uint16(b)
			q.Connection = binary.LittleEndian.Uint16(b[2:])
			q.Server = binary.LittleEndian.Uint16(b[4:])
		case qDefaultUTF8MB4:
			q.DefaultUTF8MB4 = binary.LittleEndian.Uint16(b)
		case qSQLMode:
			q.SQLMode, q.HasSQLMode = binary.LittleEndian.Uint64(b), true
		}
		b = b[n:]
	}
	return q
}
