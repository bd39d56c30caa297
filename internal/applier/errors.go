package applier

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"github.com/paraply/paraply/internal/stage"
)

// class is what to do about an error from the target.
type class int

const (
	fatal     class = iota // stop replication
	retry                  // roll back and run again
	reconnect              // the session is gone: open a new one, then run again
	transient              // retry, possibly after a pause (server busy)
)

// MariaDB/MySQL error numbers that matter here.
const (
	erLockWaitTimeout     = 1205
	erLockDeadlock        = 1213
	erDupEntry            = 1062
	erDupKey              = 1022
	erDupEntryWithKeyName = 1586
	erAutoincReadFailed   = 1467
	erDBCreateExists      = 1007
	erDBDropExists        = 1008
	erTableExists         = 1050
	erBadTable            = 1051
	erUnknownSequences    = 4091 // MariaDB: DROP SEQUENCE of one that is not there
	erTriggerDoesNotExist = 1360
	erWrongObject         = 1965 // MariaDB's ER_IT_IS_A_VIEW
	erKeyNotFound         = 1032
	erLockTableFull       = 1206
	erNoSuchTable         = 1146
	erBadField            = 1054
	erNoReferencedRow     = 1452
	erRowIsReferenced     = 1451
	erQueryInterrupted    = 1317
	erConCount            = 1040
	erServerShutdown      = 1053
	erTooManyConn         = 1203
	erReadOnly            = 1290
)

// classify sorts an error from executing or committing on the target.
func classify(err error) class {
	if errors.Is(err, stage.ErrAborted) || errors.Is(err, errNotHead) {
		// errNotHead: run again at the commit turn, where a data error
		// is real (worker.apply); without this it stopped replication
		// at once, with the bare driver error.
		return retry
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case erLockWaitTimeout, erLockDeadlock:
			return retry
		case erServerShutdown, erQueryInterrupted:
			return reconnect
		case erConCount, erTooManyConn:
			return transient
		}
		return fatal
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return reconnect
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return reconnect
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fatal
	}
	return fatal
}

// Retryable reports whether an error from the target goes away by trying
// again (lock waits, deadlocks, lost connections, a server restarting).
func Retryable(err error) bool { return classify(err) != fatal }

// isLockWait reports a lock wait timeout or deadlock.
func isLockWait(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == erLockWaitTimeout || me.Number == erLockDeadlock)
}

// describe names a MySQL error for a conflict message.
func describe(err error) string {
	if hint := privilegeHint(err); hint != "" {
		return hint
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case erDupEntry:
			return "duplicate key on the target"
		case erKeyNotFound:
			return "row to change not found on the target"
		case erLockTableFull:
			return "the target cannot hold the transaction: its lock table is full (raise innodb_buffer_pool_size on the target)"
		case erNoSuchTable:
			return "table missing on the target"
		case erBadField:
			return "table differs on the target (unknown column)"
		case erNoReferencedRow:
			return "foreign key parent row missing on the target"
		case erRowIsReferenced:
			return "row still referenced by a child on the target"
		}
		return fmt.Sprintf("error %d from the target", me.Number)
	}
	if errors.Is(err, errPacketTooLarge) {
		return "a row is too large for the target's max_allowed_packet (raise max_allowed_packet on the target)"
	}
	return "error from the target"
}
