// Package verify proves that replication left a target equal to its source:
// it compares the two servers' tables chunk by chunk, the way
// pt-table-checksum and sync-diff-inspector do, and lists the rows that
// differ.
//
// # Tables
//
// Run compares every base table of every schema on the source except mysql,
// information_schema, performance_schema, sys and paraply (the applier's own
// bookkeeping), or the schemas or tables it is given. A table missing on
// either side is a difference, and so is a table whose columns differ (name,
// order, type, nullability, collation or generation expression); the rows of
// such a table are not compared. Views, sequences and system-versioned
// tables are not compared.
//
// Given the filter and rewrite rules replication ran with (Options.Filter:
// --include, --exclude, --rewrite-db, see package filter), Run compares what
// those rules replicate: source table app.t with target table app_copy.t
// under --rewrite-db app=app_copy, and only the tables whose target name the
// patterns include. Tables left out are not compared on either side, so
// they are not reported missing; a target table no source table goes to
// under the rules (app.t on the target, above) is not looked at. The report
// names tables by their source name, with the target name beside it when
// it differs, and lists the rules.
//
// On a target that several sources replicate to, one paraply stream each
// (replicate --name), Run compares one stream (Options.Stream): what its
// source writes under its rules. The target tables of the other streams,
// those in databases this source does not have and those only another
// stream applied rows to, are left out and listed, not reported missing
// on the source (streams.go).
//
// # Chunks
//
// A table is walked in the order of its primary key or, without one, of its
// shortest unique key whose columns are all NOT NULL (long-unique HASH keys
// are not used: they cannot be read in order). The boundaries are found on
// the source by keyset pagination,
//
//	SELECT key FROM t WHERE key > lower ORDER BY key LIMIT 1 OFFSET ChunkSize-1
//
// and chunk i is then (lower, upper] on both servers. The first chunk has no
// lower bound and the last no upper bound, so rows the target has below the
// source's first key or above its last are still compared. Composite keys
// are compared column by column, as a > x OR (a = x AND b > y), because
// MariaDB does not use an index range for the row constructor (a, b) > (x, y).
//
// Boundary values travel through the client as exact text and go back to the
// servers through placeholders wrapped in a cast to the key column's own
// type, so that the comparison is the one the index is ordered by: strings
// as CONVERT(UNHEX(?) USING charset) COLLATE collation (hex survives any
// connection character set, and a plain string placeholder could be compared
// in another collation, or in binary), integers as CAST(? AS SIGNED) (MySQL
// documents comparing an integer with a string as doubles, which are not
// exact above 2^53), ENUM and SET by their index number (their index order;
// compared with a string they compare by label), TIMESTAMP as FROM_UNIXTIME
// of the epoch (the session time zones of the two servers need not agree).
// In one snapshot a chunk with an upper bound holds exactly ChunkSize source
// rows; if it does not, a bound did not round-trip, and the table fails with
// an error rather than being chunked wrongly.
//
// Each chunk takes one round trip on each server, concurrently: the target
// computes the chunk's checksum, and the source its checksum UNION ALL the
// next chunk's upper bound.
//
// A table without a usable key is one chunk, whose aggregate does not depend
// on row order.
//
// # Row hash
//
// Each side computes, per chunk,
//
//	COUNT(*), SUM(first 64 bits of h), BIT_XOR(last 64 bits of h)
//	where h = MD5(CONCAT_WS('#', term(c1), ..., term(cn), CONCAT(ISNULL(c), ...)))
//
// over the columns in the source's order. The term of a column hashes what is
// stored, independently of the session:
//
//   - CHAR, VARCHAR, BINARY, VARBINARY, ENUM, SET: HEX(c), the bytes in the
//     column's own character set. Collations play no part, so 'a' and 'A'
//     differ in a case-insensitive column, and HEX output holds no '#'.
//   - TEXT, BLOB, JSON, geometry and unknown types: MD5(c), also the bytes.
//     HEX would double a long value, and a CONCAT_WS longer than
//     max_allowed_packet is NULL; a NULL row hash is reported as an error
//     rather than skipped.
//   - FLOAT: CAST(c AS DOUBLE), whose text is exact; a FLOAT's own text has
//     six digits, so values one ulp apart would look equal. DOUBLE: c, whose
//     text is the shortest that round-trips.
//   - TIMESTAMP: UNIX_TIMESTAMP(c), independent of the session time zone.
//   - BIT: c+0. Integers, DECIMAL, DATE, DATETIME, TIME, YEAR: c.
//
// CONCAT_WS skips NULLs, so the ISNULL flags of the nullable columns tell
// NULL from the empty string. Virtual generated columns are left out (they
// are computed on read from the other columns, and their expression is
// compared with the columns); stored generated columns are included. SUM
// rather than BIT_XOR alone makes duplicate rows count: in a keyless table
// two equal rows would cancel out of a XOR.
//
// # Consistency
//
// verify does not lock anything: it is meant to run once replication has
// caught up. Each table is read on each server inside one transaction,
// START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY at REPEATABLE READ,
// so that a walk over many chunks sees one state of the table.
//
// # Differences
//
// A chunk whose counts or sums differ is drilled into: both sides list the
// key and row hash of each of its rows, and the rows missing on the target,
// extra on the target, or changed are counted, and the first few are listed
// with their key. For a keyless table the row hashes are grouped and
// compared as multisets, and the differing rows are shown whole.
package verify
