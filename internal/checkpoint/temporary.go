package checkpoint

import (
	"context"
	"fmt"
)

// Temporary tables of statement-format binlogs live in the target session
// that applies their source connection's statements, and die with it: a
// restart of paraply, or of the target, loses them. paraply.temporary
// records, in the target transaction of each statement that creates or
// drops one, which are open, so that a restart knows which source
// connections lost theirs and never applies their statements as if the
// tables were there.

// TempTable is a temporary table a source connection holds.
type TempTable struct {
	Thread       uint32 // the source connection (pseudo_thread_id)
	Schema, Name string
	GTID         string // of the statement that created it
}

// TempCreatedSQL is the statement, and its arguments, that records t as
// open, in the target transaction of the statement that created it.
func (s *Store) TempCreatedSQL(t TempTable) (string, []any) {
	return s.sql("REPLACE INTO `paraply`.`temporary` (`thread_id`, `schema_name`, `table_name`, `gtid`) VALUES (?, ?, ?, ?)"),
		[]any{int64(t.Thread), t.Schema, t.Name, t.GTID}
}

// TempDroppedSQL is the statement that records a temporary table of a
// source connection as dropped.
func (s *Store) TempDroppedSQL(thread uint32, schema, name string) (string, []any) {
	return s.sql("DELETE FROM `paraply`.`temporary` WHERE `thread_id` = ? AND `schema_name` = ? AND `table_name` = ?"),
		[]any{int64(thread), schema, name}
}

// TempTables reads the temporary tables recorded as open: those the
// target sessions held when paraply last stopped, which it lost.
func (s *Store) TempTables(ctx context.Context) ([]TempTable, error) {
	rows, err := s.db.QueryContext(ctx, s.sql("SELECT `thread_id`, `schema_name`, `table_name`, `gtid` FROM `paraply`.`temporary` ORDER BY 1, 2, 3"))
	if err != nil {
		return nil, fmt.Errorf("reading paraply.temporary: %w", err)
	}
	defer rows.Close()
	var out []TempTable
	for rows.Next() {
		var t TempTable
		if err := rows.Scan(&t.Thread, &t.Schema, &t.Name, &t.GTID); err != nil {
			return nil, fmt.Errorf("reading paraply.temporary: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// TempForgetSQL removes the record of every temporary table: the source
// restarted, and its connections' temporary tables went with it.
func (s *Store) TempForgetSQL() string { return s.sql("DELETE FROM `paraply`.`temporary`") }
