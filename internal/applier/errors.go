package applier

import (
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/mysqlerr"
	"github.com/paraply/paraply/internal/stage"
)

// MariaDB/MySQL error numbers that the applier's messages and DDL
// checks name (package mysqlerr knows which ones a retry cures).
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
)

// retryable reports whether work that failed with err may succeed if run
// again: the target says so (mysqlerr.Retryable), or the work gave way
// to earlier work (stage.ErrAborted), or met a data error before its turn
// (errNotHead: run again at the turn, where such an error is real;
// without this it stopped replication at once, with the bare driver
// error).
func retryable(err error) bool {
	return errors.Is(err, stage.ErrAborted) || errors.Is(err, errNotHead) || mysqlerr.Retryable(err)
}

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
