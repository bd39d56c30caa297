package checkpoint

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// A clone (paraply clone) keeps its progress in the stream's bookkeeping
// database, beside the checkpoint it hands over to replicate:
//
//   - clone: one row, the position the tables copied whole stand at and
//     how many runs the copy took; finished_at once replicate may start.
//   - clone_tables: each table the clone copies, its state and the
//     definition it was created from.
//   - clone_segments and clone_chunks: the key ranges copied. A chunk's
//     rows and its row in clone_chunks commit in one target transaction,
//     so a chunk is either wholly on the target and recorded, or neither.
//     A segment is a key range that one run reads chunk after chunk (the
//     whole table, or a range a killed run left uncopied); its chunks
//     are numbered in key order (see package clone).

var cloneDDL = []string{
	"CREATE TABLE IF NOT EXISTS `paraply`.`clone` (" +
		"`id` TINYINT UNSIGNED NOT NULL PRIMARY KEY," +
		"`position` MEDIUMTEXT CHARACTER SET ascii NOT NULL," +
		"`runs` INT UNSIGNED NOT NULL," +
		"`started_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)," +
		"`finished_at` TIMESTAMP(6) NULL DEFAULT NULL) ENGINE=InnoDB",
	"CREATE TABLE IF NOT EXISTS `paraply`.`clone_tables` (" +
		"`schema_name` " + nameColumn + "," +
		"`table_name` " + nameColumn + "," +
		"`state` VARCHAR(16) CHARACTER SET ascii NOT NULL," +
		"`definition` LONGTEXT " + utf8 + " NOT NULL," +
		"`updated_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)," +
		"PRIMARY KEY (`schema_name`, `table_name`)) ENGINE=InnoDB",
	"CREATE TABLE IF NOT EXISTS `paraply`.`clone_segments` (" +
		"`schema_name` " + nameColumn + "," +
		"`table_name` " + nameColumn + "," +
		"`segment` INT UNSIGNED NOT NULL," +
		"`lower_key` MEDIUMTEXT " + utf8 + " NULL," +
		"`upper_key` MEDIUMTEXT " + utf8 + " NULL," +
		"PRIMARY KEY (`schema_name`, `table_name`, `segment`)) ENGINE=InnoDB",
	"CREATE TABLE IF NOT EXISTS `paraply`.`clone_chunks` (" +
		"`schema_name` " + nameColumn + "," +
		"`table_name` " + nameColumn + "," +
		"`segment` INT UNSIGNED NOT NULL," +
		"`seq` INT UNSIGNED NOT NULL," +
		"`lower_key` MEDIUMTEXT " + utf8 + " NULL," +
		"`upper_key` MEDIUMTEXT " + utf8 + " NULL," +
		"`last` TINYINT(1) NOT NULL," +
		"`row_count` BIGINT UNSIGNED NOT NULL," +
		"`bytes` BIGINT UNSIGNED NOT NULL," +
		"`position` MEDIUMTEXT CHARACTER SET ascii NOT NULL," +
		"`committed_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)," +
		"PRIMARY KEY (`schema_name`, `table_name`, `segment`, `seq`)) ENGINE=InnoDB",
}

// The states of a table in clone_tables.
const (
	// CloneCreating: the table is being created on the target (a run
	// killed then may have left it there, empty).
	CloneCreating = "creating"
	// CloneCopying: created; its rows are being copied.
	CloneCopying = "copying"
	// CloneRows: every row is copied; its deferred indexes and its
	// triggers are being added.
	CloneRows = "rows"
	// CloneDone: copied whole, with its indexes and triggers.
	CloneDone = "done"
)

// CloneStore reads and writes a stream's clone progress. Its methods may
// be called from several goroutines.
type CloneStore struct {
	db     *sql.DB
	schema string
	s      *Store // for sql(): the stream's database in the statements
}

// NewCloneStore keeps the clone progress of stream on db, a pool on the
// target.
func NewCloneStore(db *sql.DB, stream string) *CloneStore {
	return &CloneStore{db: db, schema: SchemaOf(stream), s: NewStreamStore(db, Replicate, stream)}
}

// Init creates the clone's tables in the stream's bookkeeping database
// (Store.Init creates the database), in that database as Store.Init does.
func (c *CloneStore) Init(ctx context.Context) error {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	defer func() { _ = conn.Raw(func(any) error { return driver.ErrBadConn }) }()
	if _, err := conn.ExecContext(ctx, "USE `"+c.schema+"`"); err != nil {
		return fmt.Errorf("creating the clone's bookkeeping tables on the target: %w", err)
	}
	for _, q := range cloneDDL {
		if _, err := conn.ExecContext(ctx, c.s.sql(q)); err != nil {
			return fmt.Errorf("creating the clone's bookkeeping tables on the target: %w", err)
		}
	}
	return nil
}

// CloneRun is the clone row: Position is where the tables copied whole
// stand, unless the stream's checkpoint holds a position (a resumed clone
// brought them forward to it).
type CloneRun struct {
	Position string
	Runs     int
	Finished bool
}

// CloneTable is a table's row in clone_tables.
type CloneTable struct {
	Schema, Name string
	State        string
	Definition   string
}

// CloneChunk is a chunk copied: chunk Seq of segment Segment of a table,
// the rows after Lower up to Upper in key order (raw key values as the
// clone encodes them; nil: open). Last says it reached its segment's
// upper bound.
type CloneChunk struct {
	Schema, Name  string
	Segment, Seq  int
	Lower, Upper  *string
	Last          bool
	Rows, Bytes   int64
	Position      string
	SegmentBounds [2]*string // the segment's bounds, recorded with its first chunk
}

// CloneSegment is a key range of a table that a run reads in chunks.
type CloneSegment struct {
	Schema, Name string
	Segment      int
	Lower, Upper *string
}

// CloneState is everything clone_* holds; Run is nil before the first
// run began.
type CloneState struct {
	Run      *CloneRun
	Tables   []CloneTable
	Segments []CloneSegment
	Chunks   []CloneChunk
}

// Load reads the clone's progress (Init first).
func (c *CloneStore) Load(ctx context.Context) (*CloneState, error) {
	st := &CloneState{}
	var run CloneRun
	var finished sql.NullString
	err := c.db.QueryRowContext(ctx, c.s.sql("SELECT `position`, `runs`, `finished_at` FROM `paraply`.`clone` WHERE `id` = 1")).
		Scan(&run.Position, &run.Runs, &finished)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("reading %s.clone: %w", c.schema, err)
	default:
		run.Finished = finished.Valid
		st.Run = &run
	}
	if err := c.each(ctx, "SELECT `schema_name`, `table_name`, `state`, `definition` FROM `paraply`.`clone_tables` ORDER BY 1, 2", func(r *sql.Rows) error {
		var t CloneTable
		err := r.Scan(&t.Schema, &t.Name, &t.State, &t.Definition)
		st.Tables = append(st.Tables, t)
		return err
	}); err != nil {
		return nil, err
	}
	if err := c.each(ctx, "SELECT `schema_name`, `table_name`, `segment`, `lower_key`, `upper_key` FROM `paraply`.`clone_segments` ORDER BY 1, 2, 3", func(r *sql.Rows) error {
		var s CloneSegment
		var lo, hi sql.NullString
		err := r.Scan(&s.Schema, &s.Name, &s.Segment, &lo, &hi)
		s.Lower, s.Upper = nullable(lo), nullable(hi)
		st.Segments = append(st.Segments, s)
		return err
	}); err != nil {
		return nil, err
	}
	err = c.each(ctx, "SELECT `schema_name`, `table_name`, `segment`, `seq`, `lower_key`, `upper_key`, `last`, `row_count`, `bytes`, `position` "+
		"FROM `paraply`.`clone_chunks` ORDER BY 1, 2, 3, 4", func(r *sql.Rows) error {
		var ch CloneChunk
		var lo, hi sql.NullString
		err := r.Scan(&ch.Schema, &ch.Name, &ch.Segment, &ch.Seq, &lo, &hi, &ch.Last, &ch.Rows, &ch.Bytes, &ch.Position)
		ch.Lower, ch.Upper = nullable(lo), nullable(hi)
		st.Chunks = append(st.Chunks, ch)
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// each runs q (written for the paraply database) and calls scan per row.
func (c *CloneStore) each(ctx context.Context, q string, scan func(*sql.Rows) error) error {
	rows, err := c.db.QueryContext(ctx, c.s.sql(q))
	if err != nil {
		return fmt.Errorf("reading the clone's progress in %s: %w", c.schema, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("reading the clone's progress in %s: %w", c.schema, err)
		}
	}
	return rows.Err()
}

// BeginRun records a run of the clone: the first (runs 1), or one more,
// with the position the tables copied whole now stand at.
func (c *CloneStore) BeginRun(ctx context.Context, position string) error {
	_, err := c.db.ExecContext(ctx, c.s.sql("INSERT INTO `paraply`.`clone` (`id`, `position`, `runs`) VALUES (1, ?, 1) "+
		"ON DUPLICATE KEY UPDATE `position` = VALUES(`position`), `runs` = `runs` + 1"), position)
	if err != nil {
		return fmt.Errorf("recording the clone's run in %s.clone: %w", c.schema, err)
	}
	return nil
}

// Finish records that the clone is over: replicate may start.
func (c *CloneStore) Finish(ctx context.Context) error {
	if _, err := c.db.ExecContext(ctx, c.s.sql("UPDATE `paraply`.`clone` SET `finished_at` = NOW(6) WHERE `id` = 1")); err != nil {
		return fmt.Errorf("recording the clone's end in %s.clone: %w", c.schema, err)
	}
	return nil
}

// SaveTable records table t's state and definition.
func (c *CloneStore) SaveTable(ctx context.Context, t CloneTable) error {
	_, err := c.db.ExecContext(ctx, c.s.sql("INSERT INTO `paraply`.`clone_tables` (`schema_name`, `table_name`, `state`, `definition`) VALUES (?, ?, ?, ?) "+
		"ON DUPLICATE KEY UPDATE `state` = VALUES(`state`), `definition` = VALUES(`definition`)"), t.Schema, t.Name, t.State, t.Definition)
	if err != nil {
		return fmt.Errorf("recording the clone's table %s.%s in %s.clone_tables: %w", t.Schema, t.Name, c.schema, err)
	}
	return nil
}

// SetState records that table schema.name is in state.
func (c *CloneStore) SetState(ctx context.Context, schema, name, state string) error {
	_, err := c.db.ExecContext(ctx, c.s.sql("UPDATE `paraply`.`clone_tables` SET `state` = ? WHERE `schema_name` = ? AND `table_name` = ?"), state, schema, name)
	if err != nil {
		return fmt.Errorf("recording the clone's table %s.%s as %s: %w", schema, name, state, err)
	}
	return nil
}

// Forget deletes what the clone recorded of table schema.name: it is
// copied again from the start, or no longer copied.
func (c *CloneStore) Forget(ctx context.Context, schema, name string) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after Commit, a no-op
	for _, t := range []string{"clone_chunks", "clone_segments", "clone_tables"} {
		if _, err := tx.ExecContext(ctx, c.s.sql("DELETE FROM `paraply`.`"+t+"` WHERE `schema_name` = ? AND `table_name` = ?"), schema, name); err != nil {
			return fmt.Errorf("forgetting the clone's table %s.%s: %w", schema, name, err)
		}
	}
	return tx.Commit()
}

// RecordChunk adds to tx, the target transaction that copies ch's rows,
// its rows in clone_segments (the first chunk of a segment records it)
// and clone_chunks.
func (c *CloneStore) RecordChunk(ctx context.Context, tx *sql.Tx, ch CloneChunk) error {
	if _, err := tx.ExecContext(ctx, c.s.sql("INSERT IGNORE INTO `paraply`.`clone_segments` (`schema_name`, `table_name`, `segment`, `lower_key`, `upper_key`) VALUES (?, ?, ?, ?, ?)"),
		ch.Schema, ch.Name, ch.Segment, ch.SegmentBounds[0], ch.SegmentBounds[1]); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, c.s.sql("INSERT INTO `paraply`.`clone_chunks` (`schema_name`, `table_name`, `segment`, `seq`, `lower_key`, `upper_key`, `last`, `row_count`, `bytes`, `position`) "+
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"), ch.Schema, ch.Name, ch.Segment, ch.Seq, ch.Lower, ch.Upper, ch.Last, ch.Rows, ch.Bytes, ch.Position)
	return err
}

// CloneUnfinished reports whether stream's bookkeeping on db holds a
// clone that has not finished: its target holds part of the source's
// data, and replicating it would apply changes to rows it lacks.
func CloneUnfinished(ctx context.Context, db *sql.DB, stream string) (bool, error) {
	s := NewStreamStore(db, Replicate, stream)
	var finished sql.NullString
	err := db.QueryRowContext(ctx, s.sql("SELECT `finished_at` FROM `paraply`.`clone` WHERE `id` = 1")).Scan(&finished)
	var me *mysql.MySQLError
	switch {
	// 1049 unknown database, 1146 no such table: no clone ever ran.
	case errors.Is(err, sql.ErrNoRows), errors.As(err, &me) && (me.Number == 1049 || me.Number == 1146):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %s.clone: %w", s.schema, err)
	}
	return !finished.Valid, nil
}
