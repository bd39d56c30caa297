// Package filter applies a replica's filter and rewrite options to the
// transactions paraply applies, as MariaDB's replica applies
// replicate_wild_do_table, replicate_wild_ignore_table and
// replicate_rewrite_db:
//
//   - --rewrite-db SRC=DST renames a database first: the rows of SRC's
//     tables, and statements run with SRC as their default database, go
//     to DST; the patterns then name DST.
//   - A table's changes are applied when it matches an --include pattern
//     (or there is none) and no --exclude pattern (see Pattern).
//   - The rows of a transaction are kept table by table: a transaction
//     whose every change is left out is still recorded as applied, so
//     that the checkpoint moves past it.
//   - A DDL statement is applied when one of the tables it changes is
//     (schema.StatementSubjects), and then whole, as MariaDB's replica
//     runs it, a DROP TABLE with IF EXISTS, as that replica does by
//     default (slave_ddl_exec_mode=IDEMPOTENT). CREATE, ALTER and DROP
//     DATABASE, and the stored programs of a database, are applied when
//     a table of the database could be included and the database is not
//     excluded as a whole (db.%). Statements that change no table and no
//     database (GRANT, CREATE USER) are applied.
//   - Statement-format DML is left out when every table it writes is;
//     otherwise paraply refuses it, filtered or not.
//
// Where paraply differs from MariaDB, it is on purpose:
//
//   - MariaDB 10.11 compares the patterns without regard to case (a
//     replica with replicate_wild_do_table=App.% applied app.t, measured);
//     paraply compares names case-sensitively, as the server itself does
//     with lower_case_table_names=0.
//   - MariaDB lets the first rule that matches decide, a do rule before
//     an ignore rule and a statement's first table before the others, so
//     that app.% with %.tmp_% applies app.tmp_x, and DROP TABLE x, y and
//     DROP TABLE y, x may differ; paraply applies a table when it is
//     included and not excluded, and a statement when one of its tables
//     is, whatever their order.
//   - MariaDB rewrites only the default database of a statement: a DDL
//     naming SRC.t runs on SRC (and fails, or worse); paraply renames the
//     databases a DDL names too, where the TiDB parser proves the name a
//     database's (schema.RenameDatabases), and stops with an error naming
//     the transaction where it cannot. It rewrites CREATE, ALTER and DROP
//     DATABASE SRC too, which MariaDB runs on SRC.
//
// The binlog apply path sends the source's events: Raw leaves out the
// table map and rows events of tables left out, rewrites the database of
// the table maps it keeps, and moves the end-of-statement flag to the
// last rows event it keeps of a statement.
package filter
