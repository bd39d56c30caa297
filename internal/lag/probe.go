package lag

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// sourceNow is the source's clock, in seconds since the epoch with
// microseconds. NOW(6) is the statement's start, the moment the source
// read it, which is what the round trip brackets.
const sourceNow = "SELECT UNIX_TIMESTAMP(NOW(6))"

// MeasureOffset reads the source's clock once and records its offset from
// paraply's: the source's time is taken to be the middle of the round trip.
func (t *Tracker) MeasureOffset(ctx context.Context, db *sql.DB) error {
	before := time.Now()
	var s string
	if err := db.QueryRowContext(ctx, sourceNow).Scan(&s); err != nil {
		return fmt.Errorf("reading the source's clock: %w", err)
	}
	after := time.Now()
	return t.addOffsetAt(s, before, after)
}

func (t *Tracker) addOffsetAt(source string, before, after time.Time) error {
	us, err := parseMicros(source)
	if err != nil {
		return fmt.Errorf("reading the source's clock: %w", err)
	}
	rtt := after.Sub(before)
	mid := before.Add(rtt / 2).UnixMicro()
	t.AddOffset(time.Duration(mid-us)*time.Microsecond, rtt)
	return nil
}

// parseMicros parses "1700000000.123456" into microseconds.
func parseMicros(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	secs, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	frac = (frac + "000000")[:6]
	us, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return secs*1e6 + us, nil
}

// RunOffset measures the source's clock offset now and every period until
// ctx is done. Failures are logged (the lag is then dated without the
// offset, as if the clocks agreed) and never end it.
func (t *Tracker) RunOffset(ctx context.Context, db *sql.DB, period time.Duration, log *slog.Logger) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		if err := t.MeasureOffset(ctx, db); err != nil && ctx.Err() == nil {
			log.Debug("could not measure the source's clock offset", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Heartbeat writes a row on the source every Interval, as pt-heartbeat
// does: (server_id, ts) = (ServerID, NOW(6)) into Table, created if it does
// not exist. A pt-heartbeat table works as it is (paraply writes only those
// two columns).
type Heartbeat struct {
	Table    string // db.table
	ServerID uint32
	Interval time.Duration
	Logger   *slog.Logger
}

// ErrNotLogged is returned when a heartbeat write left the session's
// @@last_gtid unchanged: the source does not log the heartbeat table to its
// binlog (binlog_ignore_db, sql_log_bin=0), so it would never arrive.
var ErrNotLogged = errors.New("the heartbeat write was not logged to the source's binlog")

// quoteTable quotes "db.table" as `db`.`table`.
func quoteTable(name string) (string, error) {
	db, table, ok := strings.Cut(name, ".")
	if !ok || db == "" || table == "" || strings.Contains(table, ".") {
		return "", fmt.Errorf("--heartbeat-table %q: want db.table", name)
	}
	q := func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
	return q(db) + "." + q(table), nil
}

// Validate checks the table name.
func (h Heartbeat) Validate() error {
	_, err := quoteTable(h.Table)
	return err
}

// Run writes heartbeats into t until ctx is done. A failure (no privilege,
// a MySQL source without @@last_gtid, the source down) is recorded in t,
// which then falls back to receive times, and retried after a pause; Run
// never fails the pipeline.
func (h Heartbeat) Run(ctx context.Context, db *sql.DB, t *Tracker) {
	log := h.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for ctx.Err() == nil {
		err := h.session(ctx, db, t)
		if ctx.Err() != nil {
			return
		}
		t.BeatFailed(err)
		log.Warn("heartbeat on the source failed; lag is dated by receive times meanwhile", "table", h.Table, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(10*h.Interval, 5*time.Second)):
		}
	}
}

// session writes heartbeats over one connection until an error: the write
// and the @@last_gtid that names it must run in the same session.
func (h Heartbeat) session(ctx context.Context, db *sql.DB, t *Tracker) error {
	table, err := quoteTable(h.Table)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// CREATE TABLE IF NOT EXISTS is logged even when the table exists: a
	// DDL (a barrier for every replica) at each start. Look first.
	schema, name, _ := strings.Cut(h.Table, ".")
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", schema, name).Scan(&n); err != nil {
		return fmt.Errorf("looking for %s on the source: %w", table, err)
	}
	if n == 0 {
		if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+table+
			" (ts VARCHAR(26) NOT NULL, server_id INT UNSIGNED NOT NULL PRIMARY KEY)"); err != nil {
			return fmt.Errorf("creating %s on the source: %w", table, err)
		}
	}
	write := "INSERT INTO " + table + " (server_id, ts) VALUES (?, NOW(6)) ON DUPLICATE KEY UPDATE ts = VALUES(ts)"
	tick := time.NewTicker(h.Interval)
	defer tick.Stop()
	last := ""
	for {
		before := time.Now()
		if _, err := conn.ExecContext(ctx, write, h.ServerID); err != nil {
			return fmt.Errorf("writing %s on the source: %w", table, err)
		}
		after := time.Now()
		var gtid, now string
		if err := conn.QueryRowContext(ctx, "SELECT @@last_gtid, UNIX_TIMESTAMP(NOW(6))").Scan(&gtid, &now); err != nil {
			return fmt.Errorf("reading the heartbeat's GTID (@@last_gtid, MariaDB only): %w", err)
		}
		done := time.Now()
		if gtid == "" || gtid == last {
			return ErrNotLogged
		}
		last = gtid
		// The commit happened during the write's round trip.
		t.Wrote(gtid, before.Add(after.Sub(before)/2))
		if err := t.addOffsetAt(now, after, done); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
