// Package sqlgen turns row changes from the binary log into SQL for the
// target: the statements of one target transaction, as one multi-statement
// text with ? placeholders and the affected-row count each statement must
// report.
//
// A Table is built once per table map (NewTable checks the table's
// definition against it and caches the quoted names and WHERE fragments); a
// Batch then takes rows events (Add) and checkpoint or session statements
// (Raw). The applier executes Batch.SQL with Batch.Args through
// go-sql-driver with interpolateParams=true (the driver escapes every
// value), multiStatements=true and clientFoundRows=true (so that an UPDATE
// counts the rows it matched, not the rows it changed), on a connection
// whose character set is utf8mb4 and whose session has time_zone='+00:00'
// (TIMESTAMP values are decoded in UTC) and a sql_mode without NO_ZERO_DATE
// and with NO_AUTO_VALUE_ON_ZERO. It compares the driver's AllRowsAffected
// with the Expects (Batch.Check) before COMMIT: a mismatch means the target's
// data differs from the source's. On a MariaDB target it sends
// Batch.Compound's text instead, which checks the counts in the server.
//
// # Statements
//
// Identifiers are always quoted with backticks (doubled inside), values
// always go through placeholders.
//
//	INSERT INTO `db`.`t` (`a`,`b`) VALUES (?,?),(?,?)    columns present in the after image, not generated;
//	                                                     merged with the previous statement when it is an
//	                                                     INSERT into the same table with the same columns,
//	                                                     up to Batch.MaxStatement
//	DELETE FROM `db`.`t` WHERE `id`=?                    one row
//	DELETE FROM `db`.`t` WHERE `id` IN (?,?,?)           one statement per event, single-column key
//	DELETE FROM `db`.`t` WHERE (`a`=? AND `b`=?) OR (`a`=? AND `b`=?)   composite key
//	DELETE FROM `db`.`t` WHERE `a` <=> ? AND `b` <=> ? LIMIT 1          keyless, one per row
//	UPDATE `db`.`t` SET `c`=?, `d`=? WHERE `id`=?        one per row; SET what changed (and TIMESTAMPs)
//	UPDATE `db`.`t` SET `c`=? WHERE `a` <=> ? AND `b` <=> ? LIMIT 1     keyless
//
// In a keyless WHERE a text column `s` is compared twice:
// `s` <=> ? AND CAST(`s` AS BINARY) <=> CAST(? AS BINARY). The first
// comparison uses the column's collation, so an index on `s` can serve it;
// the second tells apart rows that the collation finds equal ('a', 'A',
// 'a '), which a keyless table may hold side by side. A key, being unique
// under its collation, needs only the first.
//
// A row is located by Table.Key: the primary key, else the first UNIQUE key
// whose columns are all NOT NULL. When a before image lacks a column of it
// (binlog_row_image=MINIMAL logs only the primary key) the primary key is
// used; a table without either is keyless and compares every column
// present. A keyless table logged with binlog_row_image=NOBLOB or MINIMAL
// is compared on the columns the image carries only, so a row that differs
// only in a missing column can be matched instead: MariaDB's own replica
// has the same limit.
//
// An UPDATE sets the columns of the after image that are not generated and
// whose value differs from the before image (or that the before image
// lacks), and every TIMESTAMP and DATETIME column of the after image: one
// may be ON UPDATE CURRENT_TIMESTAMP, which the target would otherwise
// set to its own clock where the source's image kept the value (an update
// in the same second as the last). If none is set, it sets one column to
// the value it has anyway, so that the statement still matches one row and
// proves that it exists.
//
// # Compaction
//
// A Batch with Compact set rewrites the changes of Compactable tables
// (a primary key that compares exactly, no other unique key, no foreign
// key as parent or child; see Table.Compactable and NewTableIn), given
// with whole row images, into as few statements as it can while keeping
// their effect. A Batch is one target transaction, so only the state it
// leaves and the conflicts it detects matter, not the order inside it.
//
// First, the changes of each row (by primary key, in order) become one
// net change, from the row's state before the batch to its state after:
//
//	update, update, ...      UPDATE of the columns that differ between the
//	                         first before image and the last after image
//	                         (none: SET `c`=`c`, which still counts the row)
//	delete, insert           UPDATE of every column to the inserted image
//	insert, update, ...      INSERT of the last after image
//	update, ..., delete      DELETE
//	insert, ..., delete      INSERT, then DELETE: it proves that the row
//	                         did not exist, as the source's INSERT did, and
//	                         moves an AUTO_INCREMENT counter as it did
//
// An update of the primary key touches two rows: it is written as it is,
// after what came before on either key, and the changes of either key
// after it start new chains, written after it (segment explains the
// phases that order this). So is a change that contradicts its row's chain
// (an insert of a row that exists), which the source's log never holds.
//
// Then the net changes of a table are grouped: one DELETE ... IN, one
// UPDATE per set of columns set, one multi-row INSERT, each of at most
// Batch.MaxGroupRows rows and about Batch.MaxStatement bytes:
//
//	UPDATE `db`.`t` SET `c`=CASE `id` WHEN ? THEN ? WHEN ? THEN ? ELSE `c` END,
//	    `d`=CASE `id` WHEN ? THEN ? WHEN ? THEN ? ELSE `d` END WHERE `id` IN (?,?)
//	UPDATE `db`.`t` SET `c`=CASE WHEN `a`=? AND `b`=? THEN ? ... END WHERE (`a`=? AND `b`=?) OR ...
//
// The server scans a CASE's WHEN list for each row and column, so an
// UPDATE takes at most 400/columns rows. The alternative, a join with a
// derived table of the values (SELECT ? AS id, ? AS c UNION ALL SELECT
// ?, ? ..., or UNION ALL VALUES (?, ?)), measured on MariaDB 10.11 with
// 200 rows a statement: cheaper for the CASE with one column (6.5-9 µs of
// server CPU a row against 9-13), dearer from 10 columns on (17-23 against
// 13.5-14), close at 50 rows. The CASE keeps the keys constants, which
// the WHERE compares as it does without compaction; the join would
// compare the table's key with a derived column whose type is aggregated
// over the rows.
//
// Why this is equivalent: rows of a Compactable table are linked to
// nothing else. With the primary key the only unique key, changes of
// different rows commute (no statement's outcome depends on another
// row); without foreign keys no row of another table depends on them and
// no cascade changes them; the key's values compare exactly, so two rows
// are one row on the target exactly when their keys are equal here. So
// the collected changes may move past the statements of other tables,
// which are written in their order as they come, and only a Raw statement
// (a savepoint, foreign_key_checks) or a change on the same table that
// cannot be collected (partial row images) makes the Batch write what it
// collected first. Tables from a catalog with unknown tables are never
// Compactable: a child's foreign key may be missing from it.
//
// Assumed: the target has no triggers on replicated tables (they would
// fire for other statements; MariaDB's own replica does not fire triggers
// for row events unless slave_run_triggers_for_rbr is set), and the target
// holds what the source held (as everywhere in this package).
//
// Conflict detection stays as strong. Without compaction each statement
// checks that its row exists (UPDATE, DELETE: the count) or does not
// (INSERT: the duplicate key error); the changes after the first of a
// row's chain find the row as the first left it, so only the first checks
// the target. A net change checks what the first change of its chain
// checks, and a grouped statement must count one row per net change: a
// missing row makes it count fewer, an existing one makes the INSERT fail.
// But a grouped statement covers several transactions (Expect.Txn to
// Expect.LastTxn): on a mismatch the caller runs the batch again without
// compaction to name the transaction (the applier does).
//
// # Values
//
// go-mysql decodes row images as configured by binlog.NewDecoder; value
// (see its table) converts each decoded value to a type go-sql-driver
// interpolates, from the column's binary log type and character set:
//
//   - UNSIGNED integers from a table map without signedness
//     (binlog_row_metadata=MINIMAL) are decoded as negative signed values;
//     they are reinterpreted at the column's width (8, 16, 24, 32, 64 bits).
//   - FLOAT values are passed as the float64 holding the same value, which
//     a FLOAT column rounds back to the same float32 and compares exactly.
//   - BIT values are passed as uint64 (go-mysql gives int64, negative for
//     BIT(64) with the top bit set).
//   - Text in utf8mb4, utf8mb3 and ascii is passed as a string; binary
//     strings as []byte (sent as _binary'...'); text in any other character
//     set as []byte under CONVERT(? USING cs), plus COLLATE the column's
//     collation in WHERE so that the comparison, and the index, are the
//     column's own.
//   - BINARY(n), UUID, INET4 and INET6 values are padded with 0x00 to n
//     bytes: the server strips trailing 0x00 from them in row images, and
//     an unpadded value would not match the stored one in a WHERE.
//   - ENUM and SET are passed as their index and bitmask.
//   - MySQL partial JSON updates are refused (ErrPartialJSON).
//
// # Concurrency
//
// A Table is immutable and may be shared by the workers; a Batch belongs to
// one worker.
package sqlgen
