package applier

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/stage"
)

// A worker's target session: how the driver sets it up, opening it,
// rolling back and losing it, and borrowing a source connection's.

// The time zone and sql_mode of a worker's session (see ConfigureSession).
const (
	sessionTimeZone = "+00:00"
	sessionSQLMode  = "NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,ALLOW_INVALID_DATES"
)

// ConfigureSession sets up the driver for worker sessions: one round trip
// per packet of statements (client-side interpolation of placeholders,
// several statements per packet), UPDATE counting matched rather than
// changed rows, TIMESTAMPs in UTC as the binlog holds them, zero dates and
// explicit zeros in AUTO_INCREMENT columns accepted as a replica's SQL
// thread accepts them, row locks only on the rows touched, and a short lock
// wait so that a commit-order deadlock is noticed quickly.
func ConfigureSession(c *mysql.Config) {
	c.InterpolateParams = true
	// The server's own max_allowed_packet, read at connect: a statement
	// larger than it is prepared, and the driver sends its values of a
	// packet's size and more in pieces (see worker.execLong).
	c.MaxAllowedPacket = 0
	c.MultiStatements = true
	c.ClientFoundRows = true
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	c.Params["time_zone"] = "'" + sessionTimeZone + "'"
	// The source accepted every value a row image holds, whatever its
	// sql_mode: the target must store it as given (a replica's row
	// applier copies the bytes), not check it again under a mode of its
	// own. Not strict, so nothing is refused; ALLOW_INVALID_DATES keeps
	// '2004-02-30', which the source stored under that mode, from turning
	// into '0000-00-00'.
	c.Params["sql_mode"] = "'" + sessionSQLMode + "'"
	c.Params["tx_isolation"] = "'READ-COMMITTED'"
	c.Params["innodb_lock_wait_timeout"] = "2"
}

// session returns the worker's target session, opening it if needed.
func (w *worker) session(ctx context.Context) (*sql.Conn, error) {
	if w.conn != nil {
		return w.conn, nil
	}
	c, err := w.p.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var version, charset, collation, format string
	var logBin bool
	if err := c.QueryRowContext(ctx, "SELECT @@max_allowed_packet, VERSION(), @@character_set_client, @@collation_connection, CURRENT_USER(), @@log_bin, @@session.binlog_format").
		Scan(&w.maxPacket, &version, &charset, &collation, &w.account, &logBin, &format); err != nil {
		c.Close()
		return nil, err
	}
	w.logsStatements = logBin && !strings.EqualFold(format, "ROW")
	w.mariadb = strings.Contains(strings.ToLower(version), "mariadb")
	w.insertHistory = w.mariadb && versionAtLeast(version, 10, 11)
	w.names = charset + " COLLATE " + collation
	// MariaDB runs compound statements outside stored programs since 10.1.1.
	w.compound = !w.p.cfg.NoCompound && w.mariadb
	w.conn = c
	return c, nil
}

// closeConn ends the worker's session for good: the next attempt opens
// another.
func (w *worker) closeConn() {
	if w.conn == nil {
		return
	}
	w.format = nil
	// Raw lets us discard the session so that the pool does not reuse a
	// connection in an unknown transaction state.
	_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
	w.conn.Close()
	w.conn = nil
}

// rollback ends the session's transaction, after the caller's context is
// done too; a target that does not answer within rollbackWait loses the
// session instead (the server rolls back when it ends).
func (w *worker) rollback(conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackWait)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		w.closeConn()
	}
}

// rollbackWait bounds a rollback.
const rollbackWait = 10 * time.Second

// borrowSession puts the session of t's source connection, which holds
// its temporary tables, in place of the worker's own for this work.
// giveBack puts the worker's own back; committed says the work committed
// (a connection that ends then gives its session up).
func (w *worker) borrowSession(ctx context.Context, t *stage.Txn) (conn *sql.Conn, giveBack func(committed bool), err error) {
	if conn, err = w.p.threads.take(ctx, w.p.db, t.Session); err != nil {
		return nil, nil, w.threadError(t, err)
	}
	own, format := w.conn, w.format
	w.conn, w.format = conn, nil // BINLOG statements give it the format anew
	return conn, func(committed bool) {
		w.p.threads.give(t.Session, w.conn, committed && t.SessionEnds)
		w.conn, w.format = own, format
	}, nil
}
