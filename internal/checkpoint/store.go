// Package checkpoint keeps, on the target itself, what paraply has applied,
// so that a restart after a crash at any instant neither loses nor repeats
// a transaction.
//
// Every target transaction inserts one row into paraply.applied, in the same
// transaction as the changes: keyed by the GTID of the newest source
// transaction it applies, with the others it applies (target batching) in a
// list beside it. A GTID is in that table exactly when its changes are on
// the target. One row per target transaction rather than one per source
// transaction keeps the bookkeeping a small part of the target's work
// (docs/benchmark.md, "The measurements behind the defaults"). A
// single row in paraply.progress (whose id says which command keeps it, see
// Origin) holds a low-water mark: the source position below which everything
// is applied, written now and then by the coordinator (never by workers, so
// it is not a hot row), together with deleting the applied rows it covers:
// those whose key it passed, since a row's other GTIDs come before its key
// in the stream. After a crash the source is streamed again from the
// low-water mark and every transaction whose GTID is in paraply.applied is
// skipped.
//
// DDL cannot share a transaction with the bookkeeping on MariaDB, so it is
// bracketed instead: a row in paraply.ddl records the statement and a
// fingerprint of the objects it changes before it runs, and is replaced by
// the applied row after. A restart that finds the row compares fingerprints
// to tell whether the DDL took effect.
package checkpoint

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/schema"
)

// Schema is the target database paraply keeps its bookkeeping in.
const Schema = "paraply"

// utf8 is the character set and collation of the columns that hold names
// of databases and tables, and statements naming them: what the server
// keeps them in, compared byte for byte as it compares table names.
// nameColumn is such a name.
const (
	utf8       = "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
	nameColumn = "VARCHAR(64) " + utf8 + " NOT NULL"
)

var ddlStatements = []string{
	"CREATE DATABASE IF NOT EXISTS `paraply`",
	"CREATE TABLE IF NOT EXISTS `paraply`.`applied` (" +
		"`gtid` VARCHAR(120) CHARACTER SET ascii NOT NULL PRIMARY KEY," +
		"`applied_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)," +
		"`others` MEDIUMTEXT CHARACTER SET ascii NULL) ENGINE=InnoDB",
	"CREATE TABLE IF NOT EXISTS `paraply`.`progress` (" +
		"`id` TINYINT UNSIGNED NOT NULL PRIMARY KEY," +
		"`position` MEDIUMTEXT CHARACTER SET ascii NOT NULL," +
		"`relay_index` BIGINT UNSIGNED NOT NULL," +
		"`updated_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)," +
		"`started` MEDIUMTEXT CHARACTER SET ascii NULL," +
		"`relay_log` VARCHAR(64) CHARACTER SET ascii NULL) ENGINE=InnoDB",
	"CREATE TABLE IF NOT EXISTS `paraply`.`temporary` (" +
		"`thread_id` INT UNSIGNED NOT NULL," +
		"`schema_name` " + nameColumn + "," +
		"`table_name` " + nameColumn + "," +
		"`gtid` VARCHAR(120) CHARACTER SET ascii NOT NULL," +
		"PRIMARY KEY (`thread_id`, `schema_name`, `table_name`)) ENGINE=InnoDB",
	"CREATE TABLE IF NOT EXISTS `paraply`.`ddl` (" +
		"`gtid` VARCHAR(120) CHARACTER SET ascii NOT NULL PRIMARY KEY," +
		"`schema_name` " + nameColumn + "," +
		"`query` LONGTEXT " + utf8 + " NOT NULL," +
		"`fingerprint` CHAR(32) CHARACTER SET ascii NOT NULL," +
		"`objects` MEDIUMTEXT " + utf8 + " NOT NULL," +
		"`started_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB",
	// How far behind the stream was at its last save (see streams.go).
	"CREATE TABLE IF NOT EXISTS `paraply`.`lag` (" +
		"`id` TINYINT UNSIGNED NOT NULL PRIMARY KEY," +
		"`oldest_pending_us` BIGINT UNSIGNED NOT NULL," +
		"`updated_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)) ENGINE=InnoDB",
	// The tables the stream applied rows to (see overlap.go).
	"CREATE TABLE IF NOT EXISTS `paraply`.`tables` (" +
		"`schema_name` " + nameColumn + "," +
		"`table_name` " + nameColumn + "," +
		"`first_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)," +
		"PRIMARY KEY (`schema_name`, `table_name`)) ENGINE=InnoDB",
}

// Origin says which paraply command keeps a checkpoint. Each has its own
// row in paraply.progress (its id), and neither reads the other's: a
// relay index belongs to the relay log of the command that wrote it, and
// the position `paraply apply` records describes the binlog files it was
// given, which a live source's stream is not (started with
// --start-position alone, it covers only what apply applied, not what the
// restored backup held, and replicate would ask the source for the rest
// again). paraply.applied is shared, but it is only meaningful next to its
// own low-water mark. So a target holds the checkpoint of one command at a
// time, and Load refuses the other's (ForeignCheckpointError).
type Origin uint8

// The origins, and their row ids in paraply.progress.
const (
	// Replicate is `paraply replicate`: a live source, through a relay log
	// that survives restarts.
	Replicate Origin = 1
	// Apply is `paraply apply`: binlog files (point-in-time recovery).
	Apply Origin = 2
)

// String names the command whose checkpoint it is.
func (o Origin) String() string {
	switch o {
	case Replicate:
		return "paraply replicate"
	case Apply:
		return "paraply apply"
	}
	return fmt.Sprintf("origin %d", uint8(o))
}

// ForeignCheckpointError is returned by Load when the target holds the
// checkpoint of another command (see Origin).
type ForeignCheckpointError struct {
	// Origin wrote the checkpoint; Position is its low-water mark.
	Origin   Origin
	Position string
	// Want is the origin of the Store that found it; Schema is the
	// stream's bookkeeping database.
	Want   Origin
	Schema string
}

// Error says whose checkpoint the target holds and what to do.
func (e *ForeignCheckpointError) Error() string {
	schema := cmp.Or(e.Schema, Schema)
	return fmt.Sprintf("the target holds the checkpoint of %s (%s.progress id %d, position %q), not of %s: "+
		"the two do not read each other's checkpoints. If the target should now be applied to by %s "+
		"(for example after a point-in-time recovery has finished), DROP DATABASE `%s` on the target "+
		"and start with --start-gtid set to that position",
		e.Origin, schema, uint8(e.Origin), e.Position, e.Want, e.Want, schema)
}

// Store reads and writes the bookkeeping tables. Its methods may be called
// from several goroutines (each uses its own connection from the pool).
type Store struct {
	db     *sql.DB
	origin Origin
	// stream is the stream whose bookkeeping this is, in database schema
	// (see stream.go); applied is AppliedSQL's statement for it.
	stream, schema, applied string
}

// NewStore uses db, a pool on the target, for the checkpoint of
// `paraply replicate`.
func NewStore(db *sql.DB) *Store { return NewStoreFor(db, Replicate) }

// NewStoreFor uses db for the checkpoint of origin.
func NewStoreFor(db *sql.DB, origin Origin) *Store {
	return NewStreamStore(db, origin, DefaultStream)
}

// NewStreamStore uses db for the checkpoint of origin in stream (a valid
// name: ValidStream).
func NewStreamStore(db *sql.DB, origin Origin, stream string) *Store {
	s := &Store{db: db, origin: origin, stream: stream, schema: SchemaOf(stream)}
	s.applied = s.sql(appliedSQL)
	return s
}

// Stream is the stream whose checkpoint the store keeps.
func (s *Store) Stream() string { return s.stream }

// Schema is the database the store keeps it in.
func (s *Store) Schema() string { return s.schema }

// Init creates the bookkeeping schema and tables if they are missing. It
// runs them in the paraply database, so that a target started with
// binlog-ignore-db=paraply keeps them out of its binlog (that option
// filters DDL by the session's database), as it keeps the bookkeeping
// rows out (see --preserve-gtids).
func (s *Store) Init(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The session's database must not outlive Init: the pool would give
	// the session to a worker, whose statements binlog-ignore-db would
	// then leave out.
	defer func() { _ = conn.Raw(func(any) error { return driver.ErrBadConn }) }()
	for i, q := range ddlStatements {
		if _, err := conn.ExecContext(ctx, s.sql(q)); err != nil {
			return fmt.Errorf("creating paraply's bookkeeping tables on the target: %w", err)
		}
		if i == 0 {
			if _, err := conn.ExecContext(ctx, "USE `"+s.schema+"`"); err != nil {
				return fmt.Errorf("creating paraply's bookkeeping tables on the target: %w", err)
			}
		}
	}
	// A target that an older paraply kept lacks columns added since: the
	// list of others in paraply.applied (one row per GTID reads the
	// same), paraply.progress's record of the first start's --start-gtid
	// (unknown reads as none was given) and of its relay log (none: the
	// relay log found is taken for the checkpoint's, as that release did).
	for _, c := range []struct{ table, column, def string }{
		{"applied", "others", "MEDIUMTEXT CHARACTER SET ascii NULL"},
		{"progress", "started", "MEDIUMTEXT CHARACTER SET ascii NULL"},
		{"progress", "relay_log", "VARCHAR(64) CHARACTER SET ascii NULL"},
	} {
		if err := s.addColumn(ctx, conn, c.table, c.column, c.def); err != nil {
			return err
		}
	}
	return s.utf8Columns(ctx, conn)
}

// utf8Columns gives the columns that hold names, and statements naming
// them, the character set and collation ddlStatements declares (utf8mb4,
// compared byte for byte as the server compares table names) on a target
// that an older paraply kept. Theirs were the server's defaults: latin1 on
// a MariaDB that no configuration file changes, which cannot hold a table
// named in Japanese, or a case-insensitive collation, under which t and T
// are one table.
func (s *Store) utf8Columns(ctx context.Context, conn *sql.Conn) error {
	defs := map[string]string{
		"temporary.schema_name": nameColumn, "temporary.table_name": nameColumn,
		"ddl.schema_name": nameColumn, "ddl.query": "LONGTEXT " + utf8 + " NOT NULL", "ddl.objects": "MEDIUMTEXT " + utf8 + " NOT NULL",
		"tables.schema_name": nameColumn, "tables.table_name": nameColumn,
	}
	var stale []string
	err := schema.EachRow(ctx, conn, "SELECT TABLE_NAME, COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?",
		[]any{s.schema}, func(rows *sql.Rows) error {
			var table, column string
			var collation sql.NullString
			if err := rows.Scan(&table, &column, &collation); err != nil {
				return err
			}
			if def, ok := defs[table+"."+column]; ok && collation.String != "utf8mb4_bin" {
				stale = append(stale, "ALTER TABLE `paraply`.`"+table+"` MODIFY `"+column+"` "+def)
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("reading the columns of %s's tables: %w", s.schema, err)
	}
	for _, q := range stale {
		if _, err := conn.ExecContext(ctx, s.sql(q)); err != nil {
			return fmt.Errorf("giving paraply's bookkeeping columns the utf8mb4 character set: %w", err)
		}
	}
	return nil
}

// addColumn adds column (with definition def) to the bookkeeping table
// if it lacks it.
func (s *Store) addColumn(ctx context.Context, conn *sql.Conn, table, column, def string) error {
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.COLUMNS "+
		"WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?", s.schema, table, column).Scan(&n); err != nil {
		return fmt.Errorf("reading paraply.%s's columns: %w", table, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := conn.ExecContext(ctx, s.sql("ALTER TABLE `paraply`.`"+table+"` ADD COLUMN `"+column+"` "+def)); err != nil {
		return fmt.Errorf("adding the column %s to paraply.%s: %w", column, table, err)
	}
	return nil
}

// State is what the target says has been applied.
type State struct {
	// Position is the source position (a GTID set in the source's text
	// form) below which everything is applied; "" if nothing was ever
	// checkpointed.
	Position string
	// RelayIndex is the relay log index of the transaction at Position.
	RelayIndex uint64
	// Started is the start position the checkpoint's first start was
	// given (--start-gtid, as given), "" if none or not known.
	Started string
	// RelayLog identifies the relay log the checkpoint's relay indexes
	// belong to (relaylog.Log.Owner), "" if none was recorded.
	RelayLog string
	// Applied holds the GTIDs applied beyond Position (and possibly some
	// below it, in rows whose key is beyond it or that compaction has not
	// reached yet: skipping those is harmless, the stream never yields
	// them again).
	Applied map[string]bool
	// PendingDDL is a DDL that started and whose outcome is unknown.
	PendingDDL *PendingDDL
}

// PendingDDL is a DDL bracketed in paraply.ddl.
type PendingDDL struct {
	GTID        string
	Schema      string
	Query       string
	Fingerprint string
	Objects     []string // encoded: schema NUL table per entry
}

// Load reads the state. Call Init first. A checkpoint of another origin
// is a *ForeignCheckpointError.
func (s *Store) Load(ctx context.Context) (*State, error) {
	st := &State{Applied: map[string]bool{}}
	if err := s.loadProgress(ctx, st); err != nil {
		return nil, err
	}
	if err := s.scanApplied(ctx, "", nil, func(g string) { st.Applied[g] = true }); err != nil {
		return nil, err
	}
	var err error
	if st.PendingDDL, err = s.pendingDDL(ctx, ""); err != nil {
		return nil, err
	}
	return st, nil
}

// scanApplied calls found for every GTID of the rows of paraply.applied
// that where (a WHERE clause with args, or "" for all rows) selects.
func (s *Store) scanApplied(ctx context.Context, where string, args []any, found func(gtid string)) error {
	rows, err := s.db.QueryContext(ctx, s.sql("SELECT `gtid`, `others` FROM `paraply`.`applied` "+where), args...)
	if err != nil {
		return fmt.Errorf("reading paraply.applied: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		var others sql.NullString
		if err := rows.Scan(&g, &others); err != nil {
			return fmt.Errorf("reading paraply.applied: %w", err)
		}
		found(g)
		if others.Valid && others.String != "" {
			for o := range strings.SplitSeq(others.String, ",") {
				found(o)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading paraply.applied: %w", err)
	}
	return nil
}

// loadProgress reads the store's row of paraply.progress into st, and
// refuses a row of another origin.
func (s *Store) loadProgress(ctx context.Context, st *State) error {
	rows, err := s.db.QueryContext(ctx, s.sql("SELECT `id`, `position`, `relay_index`, `started`, `relay_log` FROM `paraply`.`progress`"))
	if err != nil {
		return fmt.Errorf("reading paraply.progress: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uint8
		var pos string
		var relay uint64
		var started, relayLog sql.NullString
		if err := rows.Scan(&id, &pos, &relay, &started, &relayLog); err != nil {
			return fmt.Errorf("reading paraply.progress: %w", err)
		}
		if Origin(id) != s.origin {
			return &ForeignCheckpointError{Origin: Origin(id), Position: pos, Want: s.origin, Schema: s.schema}
		}
		st.Position, st.RelayIndex, st.Started, st.RelayLog = pos, relay, started.String, relayLog.String
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading paraply.progress: %w", err)
	}
	return nil
}

// pendingDDL reads the bracket row of gtid (any, if gtid is ""); nil if
// there is none.
func (s *Store) pendingDDL(ctx context.Context, gtid string) (*PendingDDL, error) {
	var p PendingDDL
	var objects string
	err := s.db.QueryRowContext(ctx, s.sql("SELECT `gtid`, `schema_name`, `query`, `fingerprint`, `objects` FROM `paraply`.`ddl` "+
		"WHERE ? = '' OR `gtid` = ? ORDER BY `started_at` LIMIT 1"), gtid, gtid).
		Scan(&p.GTID, &p.Schema, &p.Query, &p.Fingerprint, &objects)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading paraply.ddl: %w", err)
	}
	if objects != "" {
		p.Objects = strings.Split(objects, "\n")
	}
	return &p, nil
}

// SaveProgress records the low-water mark and deletes the applied rows it
// now covers, in one transaction: covered are the keys of those rows (a
// key that is no row's, a GTID in another row's list, deletes nothing).
func (s *Store) SaveProgress(ctx context.Context, position string, relayIndex uint64, covered []string) error {
	return s.saveProgress(ctx, position, relayIndex, covered, nil)
}

// SaveProgressBehind is SaveProgress that records, in the same
// transaction, how far behind the stream is (status --target's lag):
// oldestPending is the source commit time (µs since the epoch) of the
// oldest transaction waiting to be applied, 0 when none waits.
func (s *Store) SaveProgressBehind(ctx context.Context, position string, relayIndex uint64, covered []string, oldestPending int64) error {
	return s.saveProgress(ctx, position, relayIndex, covered, &oldestPending)
}

func (s *Store) saveProgress(ctx context.Context, position string, relayIndex uint64, covered []string, oldestPending *int64) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx,
		s.sql("INSERT INTO `paraply`.`progress` (`id`, `position`, `relay_index`) VALUES (?, ?, ?) "+
			"ON DUPLICATE KEY UPDATE `position` = VALUES(`position`), `relay_index` = VALUES(`relay_index`)"),
		uint8(s.origin), position, relayIndex); err != nil {
		return fmt.Errorf("writing paraply.progress: %w", err)
	}
	if oldestPending != nil {
		if _, err := tx.ExecContext(ctx, s.sql("INSERT INTO `paraply`.`lag` (`id`, `oldest_pending_us`) VALUES (?, ?) "+
			"ON DUPLICATE KEY UPDATE `oldest_pending_us` = VALUES(`oldest_pending_us`)"), uint8(s.origin), *oldestPending); err != nil {
			return fmt.Errorf("writing paraply.lag: %w", err)
		}
	}
	for len(covered) > 0 {
		n := min(len(covered), compactGTIDs)
		q := compactSQL
		if n < compactGTIDs {
			q = deleteAppliedSQL(n)
		}
		q = s.sql(q)
		args := make([]any, n)
		for i, g := range covered[:n] {
			args[i] = g
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("compacting paraply.applied: %w", err)
		}
		covered = covered[n:]
	}
	return tx.Commit()
}

// SaveStart records the start position the first start was given
// (--start-gtid as given, "current" included), after SaveProgress wrote
// the checkpoint's first row: a later start given the same is the same
// command started again, not another position (see State.Started).
func (s *Store) SaveStart(ctx context.Context, given string) error {
	if _, err := s.db.ExecContext(ctx, s.sql("UPDATE `paraply`.`progress` SET `started` = ? WHERE `id` = ?"), given, uint8(s.origin)); err != nil {
		return fmt.Errorf("writing paraply.progress: %w", err)
	}
	return nil
}

// SaveRelayLog records the relay log the checkpoint's relay indexes
// belong to (see State.RelayLog), after SaveProgress wrote the row.
func (s *Store) SaveRelayLog(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, s.sql("UPDATE `paraply`.`progress` SET `relay_log` = ? WHERE `id` = ?"), id, uint8(s.origin)); err != nil {
		return fmt.Errorf("writing paraply.progress: %w", err)
	}
	return nil
}

// compactGTIDs is how many GTIDs one statement deletes from
// paraply.applied; compactSQL is that statement.
const compactGTIDs = 200

var compactSQL = deleteAppliedSQL(compactGTIDs)

// deleteAppliedSQL deletes n rows from paraply.applied, each looked up by
// its key: the GTIDs are a derived table joined first (STRAIGHT_JOIN) to
// the key. A DELETE with an IN list may be run as a scan, which waits on
// the rows that workers inserted and have not committed yet
// (TestSaveProgressDoesNotWaitForWorkers); one DELETE statement per GTID,
// which this replaces, cost the target more than twice the CPU per GTID
// (docs/benchmark.md, "The measurements behind the defaults").
func deleteAppliedSQL(n int) string {
	var b strings.Builder
	// An ascii value, as the column: a join on values of another
	// character set would not use the key.
	b.WriteString("DELETE `paraply`.`applied` FROM (SELECT CONVERT(? USING ascii) AS `gtid`")
	for range n - 1 {
		b.WriteString(" UNION ALL SELECT CONVERT(? USING ascii)")
	}
	b.WriteString(") AS `covered` STRAIGHT_JOIN `paraply`.`applied` ON `paraply`.`applied`.`gtid` = `covered`.`gtid`")
	return b.String()
}

const appliedSQL = "INSERT INTO `paraply`.`applied` (`gtid`, `others`) VALUES (?, ?)"

// AppliedSQL is the statement a worker adds to a target transaction to
// record the GTIDs it applies, with its arguments: one row, keyed by the
// GTID of its newest source transaction, with the others it applies.
func (s *Store) AppliedSQL(key string, others []string) (string, []any) {
	q := s.applied
	if len(others) == 0 {
		return q, []any{key, nil}
	}
	return q, []any{key, strings.Join(others, ",")}
}

// Applied reports how many of gtids are recorded (after an ambiguous
// commit, to learn its outcome). The key of every row that may hold them
// must be among them, as it is for a work's GTIDs (AppliedSQL).
func (s *Store) Applied(ctx context.Context, gtids []string) (int, error) {
	if len(gtids) == 0 {
		return 0, nil
	}
	want := make(map[string]bool, len(gtids))
	args := make([]any, len(gtids))
	for i, g := range gtids {
		want[g] = true
		args[i] = g
	}
	n := 0
	err := s.scanApplied(ctx, "WHERE `gtid` IN (?"+strings.Repeat(",?", len(gtids)-1)+")", args, func(g string) {
		if want[g] {
			n++
			delete(want, g) // counted once, however many rows hold it
		}
	})
	return n, err
}

// Skip records gtids as applied without applying them: `paraply skip`,
// for a transaction that stops replication and that the operator settles
// by hand. Recording one twice changes nothing.
func (s *Store) Skip(ctx context.Context, gtids []string) error {
	for _, g := range gtids {
		if _, err := s.db.ExecContext(ctx, s.sql("INSERT IGNORE INTO `paraply`.`applied` (`gtid`) VALUES (?)"), g); err != nil {
			return fmt.Errorf("recording %s as applied: %w", g, err)
		}
	}
	return nil
}
