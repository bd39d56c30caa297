package sqlgen

import "errors"

var (
	// ErrMismatch is returned when a table definition and a table map event
	// disagree (column count, names or types), or when a row value does not
	// have the type the table map announces: applying it could write the
	// wrong columns.
	ErrMismatch = errors.New("table definition does not match the binary log")

	// ErrNoSchema is returned by NewTable when there is neither a table
	// definition nor column names in the table map (the source logs them
	// only with binlog_row_metadata=FULL).
	ErrNoSchema = errors.New("no column names: enable binlog_row_metadata=FULL on the source or give the table's schema")

	// ErrPartialJSON is returned for a MySQL partial JSON update (a JSON
	// diff instead of the whole value, binlog_row_value_options=PARTIAL_JSON),
	// which paraply does not apply.
	ErrPartialJSON = errors.New("partial JSON update (binlog_row_value_options=PARTIAL_JSON) is not supported")

	// ErrNoKey is returned when a before image lacks the columns needed to
	// find its row on the target: neither the chosen key nor the primary key
	// is complete in it, and the table has a key (so matching on the
	// columns present could hit another row).
	ErrNoKey = errors.New("row image lacks the key columns")
)
