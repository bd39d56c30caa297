// Package binlog turns a MySQL or MariaDB row-based binary log into
// transactions, the one value that flows through every stage of paraply.
//
// Reading happens in two layers so that the receiver can store what it
// received before anything is decoded:
//
//   - A Framer takes raw events (from a file, a replication connection or the
//     relay log), verifies their checksums and groups them into RawTxn values,
//     one per source transaction. It looks only at event headers, GTID events
//     and query texts, so it is cheap.
//   - A Decoder turns a RawTxn into a Txn: GTID, session, the source's logical
//     clock, and the row changes with their before and after images, decoded
//     by go-mysql.
//
// A FileReader combines both over a list of binlog files. Every error names
// the file and byte offset of the event that caused it (see PosError), and
// nothing unknown is skipped silently: an event type this package does not
// understand stops the stream unless the server marked it ignorable.
package binlog
