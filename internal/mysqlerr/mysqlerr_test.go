package mysqlerr

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// TestClassify: the errors each driver returns, bare and wrapped as
// callers wrap them, sort into the class that says what to do next.
func TestClassify(t *testing.T) {
	target := func(n uint16) error { return &mysql.MySQLError{Number: n, Message: "from the target"} }
	source := func(n uint16) error { return gomysql.NewError(n, "from the source") }
	dialRefused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	for _, c := range []struct {
		name string
		err  error
		want Class
	}{
		{"lock wait timeout", target(1205), Retry},
		{"deadlock", target(1213), Retry},
		{"deadlock, wrapped", fmt.Errorf("applying 0-1-5: %w", target(1213)), Retry},
		{"too many connections", target(1040), Retry},
		{"too many connections of the user", source(1203), Retry},
		{"server shutdown", target(1053), ConnLost},
		{"query interrupted (killed)", target(1317), ConnLost},
		{"source shutting down", source(1053), ConnLost},
		{"duplicate entry", target(1062), Conflict},
		{"row not found", target(1032), Conflict},
		{"no such table", fmt.Errorf("COMMIT: %w", target(1146)), Conflict},
		{"syntax error", target(1064), Conflict},
		{"unknown error number", target(65000), Conflict},
		{"source's unknown error number", source(1593), Conflict},
		{"access denied", target(1045), Fatal},
		{"source access denied", source(1045), Fatal},
		{"database access denied", source(1044), Fatal},
		{"privilege missing", source(1227), Fatal},
		{"binlog position gone", source(1236), Fatal},
		{"bad connection", driver.ErrBadConn, ConnLost},
		{"invalid connection", mysql.ErrInvalidConn, ConnLost},
		{"EOF", io.EOF, ConnLost},
		{"unexpected EOF, wrapped", fmt.Errorf("reading a packet: %w", io.ErrUnexpectedEOF), ConnLost},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}, ConnLost},
		{"connection refused", dialRefused, ConnLost},
		{"connection refused, bare", syscall.ECONNREFUSED, ConnLost},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), ConnLost},
		{"DNS failure", &net.DNSError{Err: "no such host", Name: "db"}, ConnLost},
		{"deadline exceeded", context.DeadlineExceeded, ConnLost},
		{"cancelled", context.Canceled, Other},
		// Any system call's error: a syscall.Errno is a net.Error.
		{"full disk", &os.PathError{Op: "write", Path: "relay", Err: syscall.ENOSPC}, ConnLost},
		{"plain error", errors.New("target answered 2 results for 3 statements"), Other},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("%s (%v): %v, want %v", c.name, c.err, got, c.want)
		}
		if got, want := Retryable(c.err), c.want == Retry || c.want == ConnLost; got != want {
			t.Errorf("%s: Retryable %v, want %v", c.name, got, want)
		}
	}
}

// TestNumber: the server error number of either driver's error, through
// wrapping; 0 for an error that is not the server's.
func TestNumber(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{&mysql.MySQLError{Number: 1062}, 1062},
		{fmt.Errorf("x: %w", gomysql.NewError(1236, "gone")), 1236},
		{io.EOF, 0},
		{nil, 0},
	} {
		if got := Number(c.err); got != c.want {
			t.Errorf("Number(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
