// Package mysqlerr sorts the errors of a MySQL or MariaDB server, and of
// the connection to one, by what the caller can do about them: run again,
// reconnect and run again, or stop. It is the one place that knows which
// server error numbers mean what, for both drivers paraply uses:
// go-sql-driver/mysql's (the target) and go-mysql's (the source's
// replication stream). What each class leads to is the caller's policy:
// the applier stops on anything not Retryable, the source's receiver
// reconnects on anything not Fatal.
package mysqlerr

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// Class is what an error says about running the statement again.
type Class uint8

// The classes, from the error alone.
const (
	// Other: neither the server's nor the connection's (the caller's own
	// error, a cancelled context).
	Other Class = iota
	// Retry: the same statements run again may succeed: a lock wait timed
	// out, a deadlock, the server has no connection to spare.
	Retry
	// ConnLost: the session is gone or did not answer (the server shut
	// down, the network broke, the query was killed, a deadline passed):
	// open a new session, then run again.
	ConnLost
	// Conflict: the server refused the statement (a duplicate key, a row
	// or table missing, any error number not listed here): run again, it
	// fails the same.
	Conflict
	// Fatal: the server refuses the account (access denied, a privilege
	// missing) or no longer has the binlog position asked for: nothing
	// succeeds until an operator acts.
	Fatal
)

// String names the class, for messages and tests.
func (c Class) String() string {
	switch c {
	case Retry:
		return "retry"
	case ConnLost:
		return "connection lost"
	case Conflict:
		return "conflict"
	case Fatal:
		return "fatal"
	}
	return "other"
}

// Server error numbers (the same in MySQL and MariaDB) that are not
// Conflict.
const (
	erConCount           = 1040 // too many connections
	erDBAccessDenied     = 1044
	erAccessDenied       = 1045
	erServerShutdown     = 1053
	erTooManyUserConn    = 1203 // ER_TOO_MANY_USER_CONNECTIONS
	erLockWaitTimeout    = 1205
	erLockDeadlock       = 1213
	erSpecificAccess     = 1227 // a privilege missing (SUPER, REPLICATION SLAVE)
	erBinlogPositionGone = 1236 // ER_MASTER_FATAL_ERROR_READING_BINLOG
	erQueryInterrupted   = 1317
)

// Classify sorts err, which may wrap a server error of either driver, a
// connection error or anything else.
func Classify(err error) Class {
	if n, ok := number(err); ok {
		switch n {
		case erLockWaitTimeout, erLockDeadlock, erConCount, erTooManyUserConn:
			return Retry
		case erServerShutdown, erQueryInterrupted:
			return ConnLost
		case erDBAccessDenied, erAccessDenied, erSpecificAccess, erBinlogPositionGone:
			return Fatal
		}
		return Conflict
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return ConnLost
	}
	// Timeouts too (context.DeadlineExceeded is a net.Error: a server that
	// did not answer in time is treated as gone), and any system call's
	// error (a syscall.Errno is one).
	var ne net.Error
	if errors.As(err, &ne) {
		return ConnLost
	}
	return Other
}

// Retryable reports whether running the statements again, on a new
// session if need be, may succeed: Retry or ConnLost.
func Retryable(err error) bool {
	c := Classify(err)
	return c == Retry || c == ConnLost
}

// Number is the server error number err wraps, of either driver, or 0.
func Number(err error) int {
	n, _ := number(err)
	return int(n)
}

func number(err error) (uint16, bool) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, true
	}
	var ge *gomysql.MyError
	if errors.As(err, &ge) {
		return ge.Code, true
	}
	return 0, false
}
