package binlog

import "encoding/binary"

// QuerySession are the settings of the session that ran a statement, as
// its query event's status variables carry them. A replica runs the
// statement with them (MariaDB's Query_log_event::do_apply_event): DDL
// and statement-format DML read the clock, the time zone, the character
// sets and the flags of the session that ran them, and a CREATE DATABASE
// without a character set gets Server's.
type QuerySession struct {
	// Client, Connection and Server are character_set_client,
	// collation_connection and collation_server (Q_CHARSET_CODE), as
	// collation IDs; 0 when the event does not carry them.
	Client, Connection, Server uint16
	// DefaultUTF8MB4 is MySQL 8's default_collation_for_utf8mb4
	// (Q_DEFAULT_COLLATION_FOR_UTF8MB4): what utf8mb4 without a collation
	// means.
	DefaultUTF8MB4 uint16
	// SQLMode is sql_mode (Q_SQL_MODE_CODE), when HasSQLMode.
	SQLMode    uint64
	HasSQLMode bool
	// Flags2 are the session's option bits a statement depends on
	// (Q_FLAGS2_CODE), when HasFlags2: see the Option constants.
	Flags2    uint32
	HasFlags2 bool
	// AutoIncrementIncrement and AutoIncrementOffset are the session's
	// auto_increment_increment and auto_increment_offset
	// (Q_AUTO_INCREMENT); 0 when the event does not carry them.
	AutoIncrementIncrement, AutoIncrementOffset uint16
	// TimeZone is the session's time_zone (Q_TIME_ZONE_CODE), carried when
	// the statement used it; "" when it did not, and then the server's
	// own default applies.
	TimeZone string
	// LCTimeNames is lc_time_names as a locale number (Q_LC_TIME_NAMES_CODE);
	// 0 is en_US, the default, which the event leaves out.
	LCTimeNames uint16
	// CharsetDatabase is collation_database as a collation ID
	// (Q_CHARSET_DATABASE_CODE); 0 when the event does not carry it, and
	// then the current database's default applies.
	CharsetDatabase uint16
	// Microseconds is the fraction of a second of the statement's start
	// (Q_MICROSECONDS, Q_HRNOW), which the event header's timestamp lacks.
	Microseconds uint32
	// ExplicitDefaultsTS is MySQL's explicit_defaults_for_timestamp
	// (Q_EXPLICIT_DEFAULTS_FOR_TIMESTAMP): 0 not carried, 1 OFF, 2 ON.
	ExplicitDefaultsTS uint8
	// InvokerUser and InvokerHost are the account the statement ran as
	// (Q_INVOKER), carried by statements whose effect names it, such as
	// CREATE ROLE, whose creator administers the role; "" when not
	// carried.
	InvokerUser, InvokerHost string
}

// The option bits of QuerySession.Flags2 (MariaDB and MySQL log_event.h,
// OPTIONS_WRITTEN_TO_BIN_LOG).
const (
	OptionAutoIsNull          = 1 << 14
	OptionNotAutocommit       = 1 << 19
	OptionNoForeignKeyChecks  = 1 << 26
	OptionRelaxedUniqueChecks = 1 << 27
	// MariaDB's only: check_constraint_checks=0 and sql_if_exists=1.
	OptionNoCheckConstraintChecks = 1 << 15
	OptionIfExists                = 1 << 28
	// MariaDB's (10.10 and later): explicit_defaults_for_timestamp=1.
	OptionExplicitDefaultsTS = 1 << 24
	// MariaDB's (10.11 and later): system_versioning_insert_history=1,
	// under which a statement writes a versioned table's ROW START and
	// ROW END as given (versioning/misc, data).
	OptionInsertHistory = 1 << 30
)

// Strict reports whether the session's sql_mode is known and strict
// (STRICT_TRANS_TABLES or STRICT_ALL_TABLES): only there does an INSERT of
// several rows fail on a value as an INSERT of one does (not strict, it
// stores the column's implicit default where the one-row INSERT stops),
// and a string too long for its column fail rather than be cut.
func (s *QuerySession) Strict() bool {
	return s.HasSQLMode && s.SQLMode&(ModeStrictTransTables|ModeStrictAllTables) != 0
}

// The sql_mode bits of QuerySession.SQLMode that a replica reads (MariaDB
// and MySQL sql_class.h, MODE_*).
const (
	ModeANSIQuotes         = 1 << 2
	ModeNoDirInCreate      = 1 << 7
	ModeNoAutoValueOnZero  = 1 << 19
	ModeNoBackslashEscapes = 1 << 20
	ModeStrictTransTables  = 1 << 21
	ModeStrictAllTables    = 1 << 22
)

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

// parseQuerySession reads the session settings from a query event's
// status variables. The variables carry no lengths, so reading stops at a
// code it does not know; what was read so far is kept.
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
		q.set(code, b[:n])
		b = b[n:]
	}
	return q
}

// set stores the value v of status variable code.
func (q *QuerySession) set(code byte, v []byte) {
	le := binary.LittleEndian
	switch code {
	case qFlags2:
		q.Flags2, q.HasFlags2 = le.Uint32(v), true
	case qSQLMode:
		q.SQLMode, q.HasSQLMode = le.Uint64(v), true
	case qAutoIncrement:
		q.AutoIncrementIncrement, q.AutoIncrementOffset = le.Uint16(v), le.Uint16(v[2:])
	case qCharset:
		q.Client, q.Connection, q.Server = le.Uint16(v), le.Uint16(v[2:]), le.Uint16(v[4:])
	case qTimeZone:
		q.TimeZone = string(v[1:])
	case qLCTimeNames:
		q.LCTimeNames = le.Uint16(v)
	case qCharsetDatabase:
		q.CharsetDatabase = le.Uint16(v)
	case qMicroseconds, qHRNow:
		q.Microseconds = uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16
	case qExplicitDefaultsTS:
		q.ExplicitDefaultsTS = 1 + min(v[0], 1)
	case qDefaultUTF8MB4:
		q.DefaultUTF8MB4 = le.Uint16(v)
	case qInvoker: // [length] user [length] host
		if n := int(v[0]); 1+n < len(v) {
			q.InvokerUser, q.InvokerHost = string(v[1:1+n]), string(v[2+n:])
		}
	}
}
