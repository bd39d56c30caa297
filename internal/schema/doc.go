// Package schema holds what replication needs to know about each table: its
// columns in row-image order, its primary and unique keys, its foreign keys,
// and the character set and collation of every column.
//
// Binary log row events are positional (column i of a row image is column
// i of the table), and their table-map events carry at most the column
// names and the primary key: never unique keys, foreign keys or collations.
// Writesets (see DESIGN.md, "Dependency modes") need all of those: a hash
// per primary and unique key, compared as the column's collation compares,
// plus the parent keys of foreign keys, and the tables whose rows a cascade
// can change (Catalog.CascadeReach).
//
// A Catalog is filled from one of three sources and then follows DDL:
//
//   - a live server's information_schema: Load, LoadTable;
//   - a schema dump written by mariadb-dump or mysqldump --no-data: Parse,
//     ParseFile;
//   - DDL statements from the binary log: Catalog.ApplyDDL.
//
// Statements are parsed with the TiDB parser (a dependency of go-mysql).
// It lacks much MariaDB syntax; a statement it rejects is rewritten into
// syntax it accepts and parsed again (see rewriteForParser), and the
// character sets and collations of MariaDB it does not know are registered
// with it when this package is initialized.
//
// What a statement of a statement-format binlog changes and writes
// (StatementSubjects, StatementWrites) is read by shape: the first
// INSERT, REPLACE, UPDATE or DELETE of a shape (its text with integer
// literals and value strings left out) is parsed, and what its integer
// literals give is learnt from a probe; later statements of the shape are
// scanned, not parsed, and read from that template (see shapeCache).
//
// The catalog never guesses silently: a table whose definition a statement
// made uncertain is marked Unknown (Catalog.Unknown), and the statement's
// error says why (ErrUnparsed, ErrMismatch). Whoever computes writesets
// must treat a transaction that touches an Unknown table, or a table the
// catalog lacks, as a barrier.
package schema
