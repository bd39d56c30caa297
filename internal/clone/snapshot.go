package clone

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"
)

// snapshot is the source as of one binlog position: sessions each inside
// a consistent snapshot (REPEATABLE READ, START TRANSACTION WITH
// CONSISTENT SNAPSHOT) that sees exactly the transactions up to Position.
type snapshot struct {
	Position string
	sessions []*sql.Conn
	// Blocked is how long the source's commits were blocked to open the
	// sessions at one position (0: no lock was taken).
	Blocked time.Duration
}

// openSnapshot opens n reader sessions on src at one position.
//
// One session takes no lock at all: MariaDB tells the binlog position of
// a consistent snapshot (the status Binlog_snapshot_file and _position,
// which BINLOG_GTID_POS turns into a GTID position), as mariadb-dump
// --single-transaction --gtid uses it. Several sessions cannot share a
// snapshot, so they are opened while the source's commits are blocked
// (BACKUP STAGE BLOCK_COMMIT: running statements go on, commits wait; it
// needs RELOAD): they then all see the same transactions. The block lasts
// as long as opening them takes, which Blocked reports.
func openSnapshot(ctx context.Context, src *sql.DB, n int) (*snapshot, error) {
	s := &snapshot{}
	for range n {
		conn, err := src.Conn(ctx)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("source: %w", err)
		}
		s.sessions = append(s.sessions, conn)
		// The values come as the bytes stored (see encode.go); the
		// snapshot is the next transaction's.
		for _, q := range []string{"SET NAMES binary", "SET SESSION sql_mode = ''", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				s.close()
				return nil, fmt.Errorf("source: %s: %w", q, err)
			}
		}
	}
	var err error
	if n == 1 {
		s.Position, err = lockFree(ctx, s.sessions[0])
	} else {
		s.Position, s.Blocked, err = blockingCommits(ctx, src, s.sessions)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	if s.Position == "" {
		s.close()
		return nil, errors.New("source: its binlog holds no GTID yet, so no position to replicate from could be named; write one transaction on it (or seed the target with mariadb-dump) and run clone again")
	}
	return s, nil
}

// startSnapshot is the statement that opens a session's snapshot.
const startSnapshot = "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"

// lockFree opens conn's snapshot and reads its position from the source.
func lockFree(ctx context.Context, conn *sql.Conn) (string, error) {
	if _, err := conn.ExecContext(ctx, startSnapshot); err != nil {
		return "", fmt.Errorf("source: %s: %w", startSnapshot, err)
	}
	file, pos, err := snapshotPosition(ctx, conn)
	if err != nil {
		return "", fmt.Errorf("source: reading the snapshot's binlog position: %w", err)
	}
	if file == "" {
		return "", errors.New("source: no Binlog_snapshot_file: clone reads a MariaDB source with its binlog on (log_bin)")
	}
	var gtid sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT BINLOG_GTID_POS(?, ?)", file, pos).Scan(&gtid); err != nil {
		return "", fmt.Errorf("source: BINLOG_GTID_POS(%s, %s): %w", file, pos, err)
	}
	if !gtid.Valid {
		return "", fmt.Errorf("source: BINLOG_GTID_POS(%s, %s) is NULL: the snapshot's binlog file is gone", file, pos)
	}
	return gtid.String, nil
}

// snapshotPosition reads the binlog file and position of conn's snapshot.
func snapshotPosition(ctx context.Context, conn *sql.Conn) (file, pos string, err error) {
	rows, err := conn.QueryContext(ctx, "SHOW STATUS WHERE Variable_name IN ('Binlog_snapshot_file', 'Binlog_snapshot_position')")
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return "", "", err
		}
		if strings.EqualFold(name, "Binlog_snapshot_file") {
			file = value
		} else {
			pos = value
		}
	}
	return file, pos, rows.Err()
}

// blockingCommits opens the sessions' snapshots while the source's commits
// are blocked, and returns their position and how long the block lasted.
func blockingCommits(ctx context.Context, src *sql.DB, sessions []*sql.Conn) (string, time.Duration, error) {
	ctl, err := src.Conn(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("source: %w", err)
	}
	defer ctl.Close()
	// Whatever happens, the block ends with this connection: a failed END
	// closes it.
	ended := false
	defer func() {
		if !ended {
			_ = ctl.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	// Another backup holding its stage would make this one wait: give up
	// after a while rather than wait for ever.
	for _, q := range []string{"SET SESSION lock_wait_timeout = 30", "BACKUP STAGE START"} {
		if _, err := ctl.ExecContext(ctx, q); err != nil {
			return "", 0, fmt.Errorf("source: %s (several readers open their snapshots while commits are blocked, which needs RELOAD; --copy-readers 1 needs no lock): %w", q, err)
		}
	}
	began := time.Now()
	if _, err := ctl.ExecContext(ctx, "BACKUP STAGE BLOCK_COMMIT"); err != nil {
		return "", 0, fmt.Errorf("source: BACKUP STAGE BLOCK_COMMIT: %w", err)
	}
	for _, conn := range sessions {
		if _, err := conn.ExecContext(ctx, startSnapshot); err != nil {
			return "", 0, fmt.Errorf("source: %s: %w", startSnapshot, err)
		}
	}
	var pos string
	err = ctl.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&pos)
	if _, eerr := ctl.ExecContext(ctx, "BACKUP STAGE END"); eerr == nil {
		ended = true
	}
	blocked := time.Since(began)
	if err != nil {
		return "", blocked, fmt.Errorf("source: reading @@gtid_binlog_pos: %w", err)
	}
	return pos, blocked, nil
}

// close ends the sessions' snapshots and returns them to the pool.
func (s *snapshot) close() {
	for _, c := range s.sessions {
		endSession(c)
	}
	s.sessions = nil
}

// endSession ends conn's snapshot by closing it: its settings (binary
// results) must not go back to the pool, and closing a session ends its
// transaction and frees its metadata locks.
func endSession(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
}
