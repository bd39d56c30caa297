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
// data differs from the source's.
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
//	UPDATE `db`.`t` SET `c`=?, `d`=? WHERE `id`=?        one per row; SET only what changed
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
// lacks). If none does, it sets one column to the value it has anyway, so
// that the statement still matches one row and proves that it exists.
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
