package replicate

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
)

// checkPreserveGTIDs refuses --preserve-gtids on a target whose binlog
// could not be a native replica's: each source transaction is to commit
// there under its own GTID (the session's gtid_domain_id, server_id and
// gtid_seq_no), so that replicas of the target can be pointed at the
// source, or the target promoted, with MASTER_USE_GTID.
//
// paraply's checkpoint rows commit in the same target transactions. They
// must stay out of the target's binlog, or its replicas would receive them
// under the source's GTIDs (and need the paraply schema): MariaDB keeps its
// own replica's position in mysql.gtid_slave_pos unlogged, a client cannot
// (sql_log_bin cannot change inside a transaction). binlog_ignore_db does
// it, for row events by each table's database: hence binlog-ignore-db=
// paraply and binlog_format=ROW.
func checkPreserveGTIDs(ctx context.Context, tgt *sql.DB, source binlog.Flavor, book string) error {
	if source != binlog.FlavorMariaDB {
		return errors.New("the source is not MariaDB: a MariaDB target cannot commit under MySQL GTIDs")
	}
	var version, format string
	var logBin bool
	if err := tgt.QueryRowContext(ctx, "SELECT VERSION(), @@global.log_bin, @@global.binlog_format").Scan(&version, &logBin, &format); err != nil {
		return err
	}
	switch {
	case !strings.Contains(strings.ToLower(version), "mariadb"):
		return fmt.Errorf("the target is not MariaDB (%s)", version)
	case !logBin:
		return errors.New("the target has no binary log (log_bin=OFF): there are no GTIDs to keep; start it with log-bin")
	case !strings.EqualFold(format, "ROW"):
		return fmt.Errorf("the target's binlog_format is %s: paraply's checkpoint rows stay out of its binlog only in ROW format; run SET GLOBAL binlog_format=ROW there (and set it in its configuration)", format)
	}
	ignored, err := ignoresCheckpoint(ctx, tgt, book)
	if err != nil {
		return err
	}
	if !ignored {
		return fmt.Errorf("the target logs the %s database to its binlog: its replicas would receive paraply's checkpoint under the source's GTIDs; add binlog-ignore-db=%s to the target's configuration and restart it", book, book)
	}
	// The session variables need BINLOG REPLAY (or SUPER): find out now,
	// not at the first transaction.
	conn, err := tgt.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	defer func() { _ = conn.Raw(func(any) error { return driver.ErrBadConn }) }() // do not reuse the session
	if _, err := conn.ExecContext(ctx, "SET SESSION gtid_domain_id = @@global.gtid_domain_id, server_id = @@global.server_id"); err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1227 {
			return errors.New("the target account may not set gtid_domain_id, server_id and gtid_seq_no: GRANT BINLOG REPLAY ON *.* to it")
		}
		return err
	}
	return nil
}

// ignoresCheckpoint reports whether the target leaves the checkpoint's
// database out of its binlog (binlog-ignore-db, or a binlog-do-db list
// without it).
func ignoresCheckpoint(ctx context.Context, tgt *sql.DB, book string) (bool, error) {
	rows, err := tgt.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1227 {
			return false, errors.New("--preserve-gtids reads the target's binlog filters (SHOW MASTER STATUS), which needs BINLOG MONITOR: GRANT BINLOG MONITOR ON *.* to the target account")
		}
		return false, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return false, err
	}
	if !rows.Next() {
		return false, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return false, err
	}
	list := func(name string) []string {
		i := slices.Index(cols, name)
		if i < 0 || vals[i].String == "" {
			return nil
		}
		return strings.Split(vals[i].String, ",")
	}
	do, ignore := list("Binlog_Do_DB"), list("Binlog_Ignore_DB")
	return slices.Contains(ignore, book) || len(do) > 0 && !slices.Contains(do, book), nil
}
