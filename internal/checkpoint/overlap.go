package checkpoint

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Streams that overlap: a table two streams write is the operator's
// choice (as on MariaDB's multi-source replica, where it is allowed and
// left alone), but paraply says so. Each stream records in its
// bookkeeping database the tables it has applied rows to; a stream
// learning of a new table compares it with the other streams' records,
// and status --target lists the tables written by more than one.

// RecordWritten records that the store's stream applied rows to tables
// (a table recorded already stays as it is).
func (s *Store) RecordWritten(ctx context.Context, tables []Object) error {
	for _, t := range tables {
		if _, err := s.db.ExecContext(ctx, s.sql("INSERT IGNORE INTO `paraply`.`tables` (`schema_name`, `table_name`) VALUES (?, ?)"), t.Schema, t.Table); err != nil {
			return fmt.Errorf("recording the tables stream %s writes: %w", s.stream, err)
		}
	}
	return nil
}

// SharedWith reports which of tables another stream on the target has
// applied rows to too, and which streams.
func (s *Store) SharedWith(ctx context.Context, tables []Object) (map[Object][]string, error) {
	writers, err := Writers(ctx, s.db)
	if err != nil {
		return nil, err
	}
	out := map[Object][]string{}
	for _, t := range tables {
		for _, w := range writers[t] {
			if w != s.stream {
				out[t] = append(out[t], w)
			}
		}
	}
	return out, nil
}

// Writers lists, for every table a stream on the target has recorded, the
// streams that applied rows to it, sorted.
func Writers(ctx context.Context, db *sql.DB) (map[Object][]string, error) {
	streams, err := streamSchemas(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("listing paraply's streams: %w", err)
	}
	out := map[Object][]string{}
	for _, st := range streams {
		if err := writtenBy(ctx, db, st, out); err != nil {
			return nil, err
		}
	}
	for _, ws := range out {
		sort.Strings(ws)
	}
	return out, nil
}

// writtenBy adds the tables st recorded to out.
func writtenBy(ctx context.Context, db *sql.DB, st StreamState, out map[Object][]string) error {
	rows, err := db.QueryContext(ctx, "SELECT `schema_name`, `table_name` FROM `"+st.Schema+"`.`tables`")
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1146 {
		return nil // kept by a paraply that did not record them
	}
	if err != nil {
		return fmt.Errorf("reading the tables stream %s writes: %w", st.Name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var o Object
		if err := rows.Scan(&o.Schema, &o.Table); err != nil {
			return err
		}
		out[o] = append(out[o], st.Name)
	}
	return rows.Err()
}

// Shared lists the tables more than one stream writes, as
// "db.table (stream, stream)", sorted.
func Shared(writers map[Object][]string) []string {
	var out []string
	for o, ws := range writers {
		if len(ws) > 1 {
			out = append(out, fmt.Sprintf("%s.%s (%s)", o.Schema, o.Table, strings.Join(ws, ", ")))
		}
	}
	sort.Strings(out)
	return out
}
