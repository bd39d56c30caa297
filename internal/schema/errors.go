package schema

import "errors"

var (
	// ErrUnparsed is returned by ApplyDDL (and reported as a Warning by Parse)
	// when a statement that may change tables cannot be parsed, or uses a
	// feature whose effect on columns and keys this package does not model
	// (system-versioned tables, unique keys on expressions). Every table the
	// statement may touch is marked Unknown.
	ErrUnparsed = errors.New("schema: statement not understood")
	// ErrMismatch is returned when a statement does not fit what the catalog
	// knows: it alters or renames a table the catalog does not have, adds a
	// column that exists, drops one that does not... The catalog was out of
	// date; the tables involved are marked Unknown.
	ErrMismatch = errors.New("schema: statement does not fit the catalog")
)
