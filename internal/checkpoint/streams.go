package checkpoint

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-sql-driver/mysql"
)

// StreamState is what a target says of one stream: where its checkpoint
// stands and whether a paraply process holds its lock.
type StreamState struct {
	Name   string
	Schema string
	// Origin is the command whose checkpoint it is (0: none yet).
	Origin Origin
	// Position is the checkpoint's low-water mark, Saved when it was
	// written.
	Position string
	Saved    time.Time
	// Running says a paraply process holds the stream's lock.
	Running bool
	// Lag is how far behind the source the stream was when it last saved
	// its checkpoint (the oldest transaction waiting then), and LagKnown
	// whether the stream records it (a paraply before streams did not).
	Lag      time.Duration
	LagKnown bool
}

// Streams lists the streams whose bookkeeping the target holds, by name.
func Streams(ctx context.Context, db *sql.DB) ([]StreamState, error) {
	out, err := streamSchemas(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("listing paraply's streams: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := range out {
		if err := out[i].read(ctx, db); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// StreamNames lists, sorted, the streams whose bookkeeping database the
// target has (that the account can see), without reading their state.
func StreamNames(ctx context.Context, db *sql.DB) ([]string, error) {
	states, err := streamSchemas(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("listing paraply's streams: %w", err)
	}
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = s.Name
	}
	sort.Strings(names)
	return names, nil
}

// streamSchemas lists the bookkeeping databases on the target.
func streamSchemas(ctx context.Context, db *sql.DB) ([]StreamState, error) {
	rows, err := db.QueryContext(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE NOT ("+BookkeepingSQL("SCHEMA_NAME")+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StreamState
	for rows.Next() {
		var schema string
		if err := rows.Scan(&schema); err != nil {
			return nil, err
		}
		if name, ok := StreamOf(schema); ok {
			out = append(out, StreamState{Name: name, Schema: schema})
		}
	}
	return out, rows.Err()
}

// read fills s from its progress row and its lock.
func (s *StreamState) read(ctx context.Context, db *sql.DB) error {
	var id uint8
	var saved float64
	err := db.QueryRowContext(ctx, "SELECT `id`, `position`, UNIX_TIMESTAMP(`updated_at`) FROM `"+s.Schema+"`.`progress` ORDER BY `id` LIMIT 1").
		Scan(&id, &s.Position, &saved)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("reading %s.progress: %w", s.Schema, err)
	default:
		s.Origin, s.Saved = Origin(id), time.UnixMicro(int64(saved*1e6))
	}
	if err := s.readLag(ctx, db); err != nil {
		return err
	}
	var holder sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", lockNameOf(s.Name)).Scan(&holder); err != nil {
		return fmt.Errorf("reading the lock of stream %s: %w", s.Name, err)
	}
	s.Running = holder.Valid
	return nil
}

// readLag fills s.Lag from the stream's lag row, if it keeps one.
func (s *StreamState) readLag(ctx context.Context, db *sql.DB) error {
	var oldest int64
	var at float64
	err := db.QueryRowContext(ctx, "SELECT `oldest_pending_us`, UNIX_TIMESTAMP(`updated_at`) FROM `"+s.Schema+"`.`lag` ORDER BY `id` LIMIT 1").Scan(&oldest, &at)
	var me *mysql.MySQLError
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.As(err, &me) && me.Number == 1146:
		return nil
	case err != nil:
		return fmt.Errorf("reading %s.lag: %w", s.Schema, err)
	}
	s.LagKnown = true
	if oldest > 0 {
		s.Lag = max(0, time.UnixMicro(int64(at*1e6)).Sub(time.UnixMicro(oldest)))
	}
	return nil
}
