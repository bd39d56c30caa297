package verify

import (
	"context"
	"database/sql"
	"strings"
)

// What verify knows of reading a table chunk by chunk in key order, for
// the other commands that read tables so (paraply clone): the same key
// choice, the same exact round trip of boundary values and the same row
// hash (see the package doc).

// Table is a table as LoadTables reads it: its columns in order and its
// unique keys.
type Table = table

// Column is a column of a Table, as information_schema describes it.
type Column = column

// Index is a unique key of a Table.
type Index = index

// LoadTables reads the tables of the kinds given (information_schema's
// TABLE_TYPE: "BASE TABLE", "SYSTEM VERSIONED"; none: base tables) in
// schemas (none: all but the system databases and paraply's bookkeeping),
// with their columns and unique keys.
func LoadTables(ctx context.Context, db *sql.DB, schemas, types []string) (map[TableName]*Table, error) {
	return loadCatalog(ctx, db, scope{schemas: schemas, types: types}, true)
}

// Keys is how a table is read by its chunking key (Table's primary key,
// else its shortest usable unique key). A key value travels as the raw
// text of each column (Raw), exactly, and goes back to the server through
// the placeholders of Where and Equal, compared in the index's order.
type Keys struct {
	p *plan
}

// NewKeys returns the keys of t. Keyed is false when t has no usable key.
func NewKeys(t *Table) (*Keys, error) {
	p, err := newPlan(t)
	if err != nil {
		return nil, err
	}
	return &Keys{p: p}, nil
}

// Keyed reports whether the table has a key to be read by.
func (k *Keys) Keyed() bool { return k.p.key != nil }

// Name is the key's index name (PRIMARY for the primary key).
func (k *Keys) Name() string { return k.p.keyName }

// Columns are the key's columns, in order.
func (k *Keys) Columns() []string {
	out := make([]string, len(k.p.key))
	for i, c := range k.p.key {
		out[i] = c.name
	}
	return out
}

// Raw are the select expressions of the key's columns, each the column's
// value as text that goes back exactly through Where and Equal.
func (k *Keys) Raw() []string {
	out := make([]string, len(k.p.key))
	for i, c := range k.p.key {
		out[i] = c.raw
	}
	return out
}

// Where is the WHERE clause (with its leading space; "" for none) of the
// rows after lower and up to upper, in key order: raw key values, nil
// for no bound.
func (k *Keys) Where(lower, upper []string) (string, []any) { return k.p.where(lower, upper) }

// OrderBy is " ORDER BY" the key's columns.
func (k *Keys) OrderBy() string { return k.p.orderBy }

// Equal is the condition that a row's key is key (raw values), with its
// arguments.
func (k *Keys) Equal(key []string) (string, []any) {
	conds := make([]string, len(k.p.key))
	args := make([]any, len(k.p.key))
	for i, c := range k.p.key {
		conds[i] = quoteIdent(c.name) + " = " + c.param
		args[i] = key[i]
	}
	return strings.Join(conds, " AND "), args
}

// ChecksumSQL selects the row count and hash aggregates of the rows where
// selects (from Where) in table from, as verify compares chunks.
func (k *Keys) ChecksumSQL(from, where string) string { return k.p.checksumSQL(from, where, "") }

// HashesSQL selects the raw key and the row hash of each row where
// selects in table from, in key order.
func (k *Keys) HashesSQL(from, where string) string {
	return "SELECT " + strings.Join(k.Raw(), ", ") + ", " + k.p.hash + " FROM " + from + where + k.p.orderBy
}
