package binlog

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// sharedFile is what the reader must return for one file of sharedDir.
//
// The counts were taken once from the reader and checked against two
// independent sources: the README's per-file event counts (GTID and rows
// events, logical clock ranges; TestSharedBinlogsREADME keeps checking
// them) and `mariadb-binlog --no-defaults --verbose FILE` (10.11), whose
// "### INSERT/UPDATE/DELETE" lines give the row changes and whose BEGIN,
// COMMIT, XID and standalone statements give the transactions. They agree
// on every file mariadb-binlog can read; the comments on the entries say
// where it cannot.
type sharedFile struct {
	name string // path under sharedDir
	// txns, rows and rowsEvents count the transactions, row changes
	// (Txn.RowCount) and rows events the reader returns, before err if the
	// file fails.
	txns, rows, rowsEvents int
	// flavor and version are from the format description in effect at the
	// end (relay logs hold the replica's and then the source's).
	flavor  Flavor
	version string
	// gtids counts the transactions with a GTID; firstGTID and lastGTID
	// are the first and last of them.
	gtids               int
	firstGTID, lastGTID string
	// clock is the MySQL logical clock range; nil when no transaction has
	// one.
	clock *clockRange
	// err is how the file fails; nil when it reads to a clean end.
	err *wantErr
	// check runs extra assertions on the transactions.
	check func(t *testing.T, path string, txns []*Txn)
}

// clockRange bounds last_committed and sequence_number over a file.
type clockRange struct{ lcMin, lcMax, seqMin, seqMax int64 }

// wantErr is the error that stops a file: the sentinel it wraps, the offset
// of the event it names and that event's type ("" when the header itself
// could not be read, or when the error names a transaction's start).
type wantErr struct {
	is     error
	offset int64
	event  string
}

// sharedFiles lists every file of sharedDir; TestSharedBinlogs fails on a
// file that is missing here.
var sharedFiles = []sharedFile{
	{name: "EasyPost__rust-mysql-binlog/bin-log.000001",
		txns: 3, rows: 2, rowsEvents: 2, flavor: FlavorMySQL, version: "5.7.24-27-log",
		gtids: 3, firstGTID: "87cee3a4-6b31-11e7-bdfd-0d98d6698870:14917", lastGTID: "87cee3a4-6b31-11e7-bdfd-0d98d6698870:14919",
		clock: &clockRange{0, 2, 1, 3}},
	// GRANT and FLUSH count as DDL here, which the README's DDL×11 does not.
	{name: "alibaba__canal/dbsync__mysql-bin.000001",
		txns: 111, rows: 95, rowsEvents: 89, flavor: FlavorMySQL, version: "5.1.34sp1-enterprise-gpl-advanced-log"},
	{name: "alibaba__canal/parse__mysql-bin.000002",
		txns: 1, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "5.1.34sp1-enterprise-gpl-advanced-log"},
	{name: "alibaba__canal/tsdb__mysql-bin.000002",
		txns: 16, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "5.7.19-log",
		clock: &clockRange{0, 15, 1, 16}},
	{name: "alibaba__canal/tsdb__mysql-bin.000003",
		txns: 33, rows: 21, rowsEvents: 21, flavor: FlavorMySQL, version: "5.7.19-log",
		clock: &clockRange{0, 32, 1, 33}},
	// Two compressed transactions; mariadb-binlog cannot read
	// TRANSACTION_PAYLOAD events, so the counts rest on the README.
	{name: "apecloud__mysql-binlog-connector-rust/mysql-bin.000057",
		txns: 3, rows: 3, rowsEvents: 3, flavor: FlavorMySQL, version: "8.0.31",
		gtids: 3, firstGTID: "76f3e7be-6720-11ed-9cad-0242ac110002:11", lastGTID: "76f3e7be-6720-11ed-9cad-0242ac110002:13",
		clock: &clockRange{0, 2, 1, 3}, check: checkApecloudCompressed},
	{name: "apecloud__mysql-binlog-connector-rust/mysql-bin.000080",
		txns: 10, rows: 7, rowsEvents: 5, flavor: FlavorMySQL, version: "5.7.40-log",
		gtids: 10, firstGTID: "58cf6502-63db-11ed-8079-0242ac110002:53", lastGTID: "58cf6502-63db-11ed-8079-0242ac110002:62",
		clock: &clockRange{0, 9, 1, 10}},
	{name: "blackbeam__rust_mysql_common/binlog-invisible-columns.000001",
		txns: 5, rows: 3, rowsEvents: 3, flavor: FlavorMySQL, version: "8.0.26",
		gtids: 5, firstGTID: "97c7af02-4c50-11ec-acd8-681842034964:1", lastGTID: "97c7af02-4c50-11ec-acd8-681842034964:5",
		clock: &clockRange{0, 4, 1, 5}},
	// MySQL 5.6 has GTIDs but no logical clock yet.
	{name: "blackbeam__rust_mysql_common/binlog_56_gtid_reserved_word.000001",
		txns: 6, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "5.6.41-debug-log",
		gtids: 6, firstGTID: "11111111-1111-1111-1111-111111111111:1", lastGTID: "11111111-1111-1111-1111-111111111111:6"},
	// SAVEPOINT and ROLLBACK TO stay inside the one transaction.
	{name: "blackbeam__rust_mysql_common/binlog_savepoint.000001",
		txns: 1, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.1.43-debug-log"},
	{name: "blackbeam__rust_mysql_common/binlog_transaction.000001",
		txns: 9, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.0.86-debug-log"},
	{name: "blackbeam__rust_mysql_common/binlog_transaction_previous_GTID_no_tag.000001",
		txns: 0, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "8.0.40"},
	{name: "blackbeam__rust_mysql_common/binlog_transaction_with_GTID.000001",
		txns: 3, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.6.24-debug-log",
		gtids: 3, firstGTID: "006c2cf2-b1ea-11e4-9057-8c705a3d3e78:1", lastGTID: "006c2cf2-b1ea-11e4-9057-8c705a3d3e78:3"},
	// mariadb-binlog rejects the tagged GTID event (type 42); the README
	// does not list this file's logical clock, but the event carries one.
	{name: "blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",
		txns: 1, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "9.6.0",
		gtids: 1, firstGTID: "55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3", lastGTID: "55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3",
		clock: &clockRange{0, 0, 1, 1}, check: checkTaggedGTID},
	{name: "blackbeam__rust_mysql_common/binlog_transaction_with_anonymous_GTID.000001",
		txns: 2, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.6-m16-debug-log",
		clock: &clockRange{0, 1, 1, 2}},
	// Edge: 10 bytes after the magic, so not even a format description.
	{name: "blackbeam__rust_mysql_common/binlog_truncated_event.000001",
		txns: 0, rows: 0, rowsEvents: 0, flavor: FlavorUnknown, version: "",
		err: &wantErr{ErrTruncated, 4, ""}},
	// Edge: the previous-GTIDs event's header is cut after 9 bytes.
	{name: "blackbeam__rust_mysql_common/binlog_truncated_prev_gtid_event.000001",
		txns: 0, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.2-m12-debug-log",
		err: &wantErr{ErrTruncated, 120, ""}},
	{name: "blackbeam__rust_mysql_common/bug11747887-bin.000003",
		txns: 4, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.6.4-m7-debug-log"},
	{name: "blackbeam__rust_mysql_common/bug16266.000001",
		txns: 4, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.0.16-debug-log"},
	{name: "blackbeam__rust_mysql_common/bug27213339-bin.000001",
		txns: 46, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.22-debug-log",
		clock: &clockRange{0, 45, 1, 46}},
	// 5.7.1 predates the logical clock (5.7.2).
	{name: "blackbeam__rust_mysql_common/bug32407.001",
		txns: 2, rows: 2, rowsEvents: 1, flavor: FlavorMySQL, version: "5.7.1-m11-log"},
	{name: "blackbeam__rust_mysql_common/bug33029-slave-relay-bin.000001",
		txns: 28, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.0.58-debug-log"},
	// Edge: an incident event; a replica must stop there.
	{name: "blackbeam__rust_mysql_common/bug40482-bin.000001",
		txns: 0, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.1.30-debug-log",
		err: &wantErr{ErrUnsupported, 106, "IncidentEvent"}},
	// Edge: the query event at 91204 claims a 16962-byte status block in a
	// 171-byte event; mariadb-binlog stops at the same offset. The relay
	// log starts with the replica's format (5.0.46) and then holds the
	// source's (5.0.30).
	{name: "blackbeam__rust_mysql_common/corrupt-relay-bin.000624",
		txns: 228, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.0.30-enterprise-gpl-log",
		err: &wantErr{ErrCorrupt, 91204, "QueryEvent"}},
	// mariadb-binlog stops on MySQL 9 column types here and in vector.binlog.
	{name: "blackbeam__rust_mysql_common/json-opaque.binlog",
		txns: 3, rows: 8, rowsEvents: 8, flavor: FlavorMySQL, version: "9.0.1",
		clock: &clockRange{0, 2, 1, 3}},
	// The README counts 5 rows_v2 events plus 1 PARTIAL_JSON event: 6 rows
	// events. The partial update reads without error: its after images
	// hold JSON diffs and the Rows say so (see checkPartialJSON).
	{name: "blackbeam__rust_mysql_common/json.binlog.000001",
		txns: 8, rows: 18, rowsEvents: 6, flavor: FlavorMySQL, version: "8.0.22",
		clock: &clockRange{0, 7, 1, 8}, check: checkPartialJSON},
	{name: "blackbeam__rust_mysql_common/mariadb-bin.000001",
		txns: 2, rows: 2, rowsEvents: 2, flavor: FlavorMariaDB, version: "10.5.15-MariaDB-1:10.5.15+maria~focal-log",
		gtids: 2, firstGTID: "0-1-1", lastGTID: "0-1-2"},
	{name: "blackbeam__rust_mysql_common/master-bin.000001",
		txns: 0, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "8.0.2-dmr-debug-log-asan"},
	{name: "blackbeam__rust_mysql_common/minimal_row_metadata.000001",
		txns: 1, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "8.0.40",
		clock: &clockRange{0, 0, 1, 1}},
	{name: "blackbeam__rust_mysql_common/mysql-enum-string-set.000001",
		txns: 5, rows: 3, rowsEvents: 3, flavor: FlavorMySQL, version: "8.0.28",
		gtids: 5, firstGTID: "93e95066-a2f4-11ec-9b69-9657f0ae95e2:1", lastGTID: "93e95066-a2f4-11ec-9b69-9657f0ae95e2:5",
		clock: &clockRange{0, 4, 1, 5}},
	{name: "blackbeam__rust_mysql_common/mysql_type_bit.000001",
		txns: 3, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "8.0.26",
		gtids: 3, firstGTID: "fbda2ad0-7c46-11ec-ae30-4ef7efc81a2a:1", lastGTID: "fbda2ad0-7c46-11ec-ae30-4ef7efc81a2a:3",
		clock: &clockRange{0, 2, 1, 3}},
	{name: "blackbeam__rust_mysql_common/rpl_atomic_ddl_rollback_full.000001",
		txns: 4, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.22-debug-log",
		gtids: 4, firstGTID: "a0205340-db2c-11e7-babd-340286faf52d:1", lastGTID: "a0205340-db2c-11e7-babd-340286faf52d:4",
		clock: &clockRange{0, 3, 1, 4}},
	{name: "blackbeam__rust_mysql_common/rpl_atomic_ddl_rollback_table.000001",
		txns: 2, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.22-debug-log",
		gtids: 2, firstGTID: "7f6766f1-daa1-11e7-86f3-340286faf52d:1", lastGTID: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:1",
		clock: &clockRange{0, 1, 1, 2}},
	{name: "blackbeam__rust_mysql_common/rpl_atomic_ddl_rollback_view.000001",
		txns: 2, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.22-debug-log",
		gtids: 2, firstGTID: "ef5292c1-daa1-11e7-9082-340286faf52d:1", lastGTID: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:2",
		clock: &clockRange{0, 1, 1, 2}},
	{name: "blackbeam__rust_mysql_common/rpl_cross_version_default_utf8mb4_collation.000001",
		txns: 5, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.22-debug-log",
		clock: &clockRange{0, 4, 1, 5}},
	{name: "blackbeam__rust_mysql_common/rpl_unfiltered_hidden_gcol.000001",
		txns: 3, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "8.0.17-debug",
		clock: &clockRange{0, 2, 1, 3}},
	{name: "blackbeam__rust_mysql_common/slave-relay-bin.000001",
		txns: 2, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.25-debug-log",
		clock: &clockRange{0, 1, 1, 2}},
	{name: "blackbeam__rust_mysql_common/time_issue.000001",
		txns: 1, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "8.0.40",
		clock: &clockRange{0, 0, 1, 1}},
	{name: "blackbeam__rust_mysql_common/transaction_compression.000001",
		txns: 1, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "8.0.32",
		clock: &clockRange{0, 0, 1, 1}, check: checkCompressionInsert},
	// NDB binlogs: one epoch transaction, rows of test.ba and of
	// mysql.ndb_apply_status.
	{name: "blackbeam__rust_mysql_common/update-full-row.binlog",
		txns: 1, rows: 7, rowsEvents: 4, flavor: FlavorMySQL, version: "5.1.37-ndb-6.2.19-debug-log"},
	{name: "blackbeam__rust_mysql_common/update-partial-row.binlog",
		txns: 1, rows: 7, rowsEvents: 4, flavor: FlavorMySQL, version: "5.1.37-ndb-6.2.19-debug-log"},
	{name: "blackbeam__rust_mysql_common/vector.binlog",
		txns: 10, rows: 10, rowsEvents: 6, flavor: FlavorMySQL, version: "9.0.1",
		clock: &clockRange{0, 9, 1, 10}},
	// Edge: binlogs of a MySQL 5.2 development tree (wl2325) that numbered
	// events differently: its format description gives event type 16 (XID
	// in every release) a 6-byte post-header, as a table map has. The
	// reader used to frame 5 bogus transactions out of _r (table maps read
	// as XIDs) before failing at its stop event; mariadb-binlog also fails
	// on both files.
	{name: "blackbeam__rust_mysql_common/ver_5_1-wl2325_r.001",
		txns: 0, rows: 0, rowsEvents: 0, flavor: FlavorUnknown, version: "",
		err: &wantErr{ErrUnsupported, 4, "FormatDescriptionEvent"}},
	{name: "blackbeam__rust_mysql_common/ver_5_1-wl2325_s.001",
		txns: 0, rows: 0, rowsEvents: 0, flavor: FlavorUnknown, version: "",
		err: &wantErr{ErrUnsupported, 4, "FormatDescriptionEvent"}},
	// 11 transactions: 3 CREATE TABLE, 3 autocommit rows statements of a
	// MyISAM table (no BEGIN, ended by the statement end flag), one
	// BEGIN..XID, INSERTs preceded by USER_VAR, RAND and INTVAR events, and
	// a LOAD DATA (begin-load-query, append-block, execute-load-query).
	{name: "blackbeam__rust_mysql_common/ver_5_1_23.001",
		txns: 11, rows: 5, rowsEvents: 3, flavor: FlavorMySQL, version: "5.1.23-rc-debug-log"},
	{name: "blackbeam__rust_mysql_common/ver_trunk_row_v2.001",
		txns: 12, rows: 5, rowsEvents: 3, flavor: FlavorMySQL, version: "5.6.4-m7-debug-log"},
	{name: "blackbeam__rust_mysql_common/write-full-row.binlog",
		txns: 1, rows: 7, rowsEvents: 3, flavor: FlavorMySQL, version: "5.1.37-ndb-6.2.19-debug-log"},
	{name: "blackbeam__rust_mysql_common/write-partial-row.binlog",
		txns: 1, rows: 7, rowsEvents: 4, flavor: FlavorMySQL, version: "5.1.37-ndb-6.2.19-debug-log"},
	{name: "flike__kingbus/flikedev1-c8pyy-relay-bin.000284",
		txns: 11, rows: 40, rowsEvents: 40, flavor: FlavorMySQL, version: "5.7.23-log",
		gtids: 11, firstGTID: "214eb71f-96ec-11e8-ab4f-fa163e72d4ae:11790", lastGTID: "214eb71f-96ec-11e8-ab4f-fa163e72d4ae:11800",
		clock: &clockRange{0, 10, 1, 11}},
	{name: "flike__kingbus/mysql_bin.000011",
		txns: 11, rows: 40, rowsEvents: 40, flavor: FlavorMySQL, version: "5.7.23-log",
		gtids: 11, firstGTID: "214eb71f-96ec-11e8-ab4f-fa163e72d4ae:11790", lastGTID: "214eb71f-96ec-11e8-ab4f-fa163e72d4ae:11800",
		clock: &clockRange{0, 10, 1, 11}},
	{name: "flike__kingbus/mysql_bin.000012",
		txns: 10, rows: 40, rowsEvents: 40, flavor: FlavorMySQL, version: "5.7.23-log",
		gtids: 10, firstGTID: "214eb71f-96ec-11e8-ab4f-fa163e72d4ae:11801", lastGTID: "214eb71f-96ec-11e8-ab4f-fa163e72d4ae:11810",
		clock: &clockRange{0, 9, 1, 10}},
	{name: "flike__kingbus/mysql_bin.000013",
		txns: 10, rows: 40, rowsEvents: 40, flavor: FlavorMySQL, version: "5.7.23-log",
		gtids: 10, firstGTID: "214eb71f-96ec-11e8-ab4f-fa163e72d4ae:11811", lastGTID: "214eb71f-96ec-11e8-ab4f-fa163e72d4ae:11820",
		clock: &clockRange{0, 9, 1, 10}},
	{name: "github__gh-ost/mysql-bin.000066",
		txns: 13, rows: 20, rowsEvents: 17, flavor: FlavorMySQL, version: "5.6.28-log"},
	{name: "github__gh-ost/mysql-bin.000070",
		txns: 13, rows: 20, rowsEvents: 17, flavor: FlavorMySQL, version: "5.6.28-log"},
	{name: "go-mysql-org__go-mysql/tcb-eval002c-bin.003320",
		txns: 1, rows: 17, rowsEvents: 1, flavor: FlavorMySQL, version: "5.6.16-64.2-56-log"},
	// A "fixture" that fails, rightly: after the anonymous GTID at 216 and
	// Aurora's ignorable padding event (type 100) comes BEGIN, and then
	// the file ends. mariadb-binlog prints the BEGIN and stops silently.
	{name: "osheroff__mysql-binlog-connector-java/mysql-bin.aurora-padding",
		txns: 0, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.12-log",
		err: &wantErr{ErrTruncated, 216, ""}},
	{name: "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-crc32",
		txns: 60, rows: 63, rowsEvents: 60, flavor: FlavorMySQL, version: "5.7.21-log",
		clock: &clockRange{0, 59, 1, 60}},
	{name: "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none",
		txns: 40, rows: 36, rowsEvents: 36, flavor: FlavorMySQL, version: "5.7.20-log",
		clock: &clockRange{0, 39, 1, 40}},
	{name: "osheroff__mysql-binlog-connector-java/mysql-bin.compressed",
		txns: 1, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "8.0.28",
		clock: &clockRange{0, 0, 1, 1}, check: checkCompressedUpdate},
	// A "fixture" that fails, rightly: MariaDB 10.0 logged its hires
	// timestamp(3) column as type 7 (TIMESTAMP) without metadata, so the
	// rows event at 1819 (GTID 0-1-8) cannot be decoded without the
	// schema; go-mysql runs past the row and mariadb-binlog fails there too.
	{name: "pingcap__tiflow/mysql-bin.000001",
		txns: 7, rows: 4, rowsEvents: 1, flavor: FlavorMariaDB, version: "10.0.17-MariaDB-1~wheezy-log",
		gtids: 7, firstGTID: "0-1-1", lastGTID: "0-1-7",
		err: &wantErr{ErrCorrupt, 1819, "WriteRowsEventV1"}},
	{name: "rust-us__mysql-cdc-rs/5.7__05_intvar__log.bin",
		txns: 3, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.30-log",
		gtids: 3, firstGTID: "e3e2a4ee-b6dc-11ea-8bcf-0242ac150002:1", lastGTID: "e3e2a4ee-b6dc-11ea-8bcf-0242ac150002:3",
		clock: &clockRange{0, 2, 1, 3}},
	{name: "rust-us__mysql-cdc-rs/5.7__13_rand__log.bin",
		txns: 3, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.30-log",
		gtids: 3, firstGTID: "e3e2a4ee-b6dc-11ea-8bcf-0242ac150002:1", lastGTID: "e3e2a4ee-b6dc-11ea-8bcf-0242ac150002:3",
		clock: &clockRange{0, 2, 1, 3}},
	{name: "rust-us__mysql-cdc-rs/5.7__14_user_var__log.bin",
		txns: 3, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.30-log",
		gtids: 3, firstGTID: "e3e2a4ee-b6dc-11ea-8bcf-0242ac150002:1", lastGTID: "e3e2a4ee-b6dc-11ea-8bcf-0242ac150002:3",
		clock: &clockRange{0, 2, 1, 3}},
	{name: "rust-us__mysql-cdc-rs/5.7__17_18_load__log.bin",
		txns: 1, rows: 0, rowsEvents: 0, flavor: FlavorMySQL, version: "5.7.30-log",
		gtids: 1, firstGTID: "e3e2a4ee-b6dc-11ea-8bcf-0242ac150002:1", lastGTID: "e3e2a4ee-b6dc-11ea-8bcf-0242ac150002:1",
		clock: &clockRange{0, 0, 1, 1}},
	{name: "rust-us__mysql-cdc-rs/5.7__32_delete_rows_v2__log.bin",
		txns: 4, rows: 2, rowsEvents: 2, flavor: FlavorMySQL, version: "5.7.30-log",
		gtids: 4, firstGTID: "80549ecc-d2f2-11ea-b790-0242ac130002:1", lastGTID: "80549ecc-d2f2-11ea-b790-0242ac130002:4",
		clock: &clockRange{0, 3, 1, 4}},
	{name: "rust-us__mysql-cdc-rs/5.7__34_anonymous_gtid__log.bin",
		txns: 3, rows: 1, rowsEvents: 1, flavor: FlavorMySQL, version: "5.7.30-log",
		clock: &clockRange{0, 2, 1, 3}},
	{name: "rust-us__mysql-cdc-rs/8.2__31_update_rows_v2__binlog.000001",
		txns: 4, rows: 2, rowsEvents: 2, flavor: FlavorMySQL, version: "8.2.0",
		clock: &clockRange{0, 3, 1, 4}},
	{name: "rust-us__mysql-cdc-rs/8.2__32_delete_rows_v2__binlog.000001",
		txns: 5, rows: 3, rowsEvents: 3, flavor: FlavorMySQL, version: "8.2.0",
		clock: &clockRange{0, 4, 1, 5}},
	// 10099 row changes = 22 inserts + 10077 updates (mariadb-binlog);
	// 22 + 2*10077 = 20176 row images, as the README says.
	{name: "rust-us__mysql-cdc-rs/binlog.000693",
		txns: 663, rows: 10099, rowsEvents: 524, flavor: FlavorMySQL, version: "8.0.31",
		clock: &clockRange{0, 662, 1, 663}},
	{name: "rust-us__mysql-cdc-rs/binlog.000694",
		txns: 418, rows: 7179, rowsEvents: 279, flavor: FlavorMySQL, version: "8.0.31",
		clock: &clockRange{0, 417, 1, 418}},
	{name: "rust-us__mysql-cdc-rs/binlog.000733",
		txns: 11, rows: 14, rowsEvents: 6, flavor: FlavorMySQL, version: "8.0.31",
		clock: &clockRange{0, 10, 1, 11}},
	{name: "zendesk__maxwell/binlog.000004",
		txns: 21, rows: 28, rowsEvents: 5, flavor: FlavorMySQL, version: "8.0.29",
		gtids: 21, firstGTID: "83759871-1141-11ed-b12d-0242ac130003:6", lastGTID: "83759871-1141-11ed-b12d-0242ac130003:26",
		clock: &clockRange{0, 20, 1, 21}},
}

// globShared returns every binlog under sharedDir, as names relative to
// it. It fails the test when the directory is missing: these tests must
// not pass by reading nothing.
func globShared(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(sharedDir, "README.md")); err != nil {
		t.Fatalf("shared binlogs missing (they live in testdata/binlogs/ at the repository root): %v", err)
	}
	paths, err := filepath.Glob(filepath.Join(sharedDir, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		rel, err := filepath.Rel(sharedDir, p)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.ToSlash(rel))
	}
	if len(names) < len(sharedFiles) {
		t.Fatalf("found %d binlogs under %s, the table lists %d", len(names), sharedDir, len(sharedFiles))
	}
	return names
}

func TestSharedBinlogs(t *testing.T) {
	byName := map[string]sharedFile{}
	for _, f := range sharedFiles {
		byName[f.name] = f
	}
	for _, name := range globShared(t) {
		want, ok := byName[name]
		if !ok {
			t.Errorf("%s: not in sharedFiles; add what the reader must return for it", name)
			continue
		}
		delete(byName, name)
		t.Run(name, func(t *testing.T) { checkSharedFile(t, want) })
	}
	for name := range byName {
		t.Errorf("%s: listed in sharedFiles but not found under %s", name, sharedDir)
	}
}

func checkSharedFile(t *testing.T, want sharedFile) {
	path := sharedPath(want.name)
	res := readAll(path)
	if res.panic != "" {
		t.Fatalf("reader panicked: %s", res.panic)
	}

	rows, rowsEvents, gtids := 0, 0, 0
	var first, last string
	for _, tx := range res.txns {
		rows += tx.RowCount()
		rowsEvents += len(tx.Rows)
		if !tx.GTID.IsZero() {
			if gtids == 0 {
				first = tx.GTID.String()
			}
			last = tx.GTID.String()
			gtids++
		}
	}
	if len(res.txns) != want.txns || rows != want.rows || rowsEvents != want.rowsEvents {
		t.Errorf("got %d transactions, %d row changes, %d rows events; want %d, %d, %d",
			len(res.txns), rows, rowsEvents, want.txns, want.rows, want.rowsEvents)
	}
	if gtids != want.gtids || first != want.firstGTID || last != want.lastGTID {
		t.Errorf("got %d GTIDs %q..%q, want %d %q..%q", gtids, first, last, want.gtids, want.firstGTID, want.lastGTID)
	}
	var flavor Flavor
	var version string
	if res.format != nil {
		flavor, version = res.format.Flavor, res.format.ServerVersion
	}
	if flavor != want.flavor || version != want.version {
		t.Errorf("format: %s %q, want %s %q", flavor, version, want.flavor, want.version)
	}

	checkSequence(t, path, res.txns)
	checkClock(t, res.txns, want.clock)
	checkGTIDs(t, res.txns, flavor)
	checkSharedError(t, path, res.err, want.err)
	if want.check != nil {
		want.check(t, path, res.txns)
	}
}

// checkSequence checks what holds for any stream: transactions are
// numbered from 1, lie in the file one after the other, and name the file.
func checkSequence(t *testing.T, path string, txns []*Txn) {
	t.Helper()
	var end int64
	for i, tx := range txns {
		if tx.Seq != uint64(i+1) {
			t.Errorf("transaction %d has Seq %d", i+1, tx.Seq)
		}
		if tx.Start.File != path || tx.Start.Offset < end || tx.End <= tx.Start.Offset || int64(tx.Bytes) > tx.End-tx.Start.Offset {
			t.Errorf("transaction %d: start %s, end %d, %d bytes; the previous one ended at %d",
				tx.Seq, tx.Start, tx.End, tx.Bytes, end)
		}
		end = tx.End
	}
}

// checkClock checks that a MySQL file with a logical clock gives every
// transaction one, within the expected ranges, with sequence numbers
// counting up by one and last_committed before sequence_number; and that
// other files give none.
func checkClock(t *testing.T, txns []*Txn, want *clockRange) {
	t.Helper()
	if want == nil {
		for _, tx := range txns {
			if tx.Clock.Logical {
				t.Errorf("transaction %d has a logical clock %+v; the file has none", tx.Seq, tx.Clock)
				return
			}
		}
		return
	}
	got := clockRange{lcMin: 1 << 62, lcMax: -1, seqMin: 1 << 62, seqMax: -1}
	for i, tx := range txns {
		c := tx.Clock
		if !c.Logical {
			t.Errorf("transaction %d has no logical clock", tx.Seq)
			continue
		}
		if c.LastCommitted < 0 || c.LastCommitted >= c.SequenceNumber {
			t.Errorf("transaction %d: last_committed %d, sequence_number %d", tx.Seq, c.LastCommitted, c.SequenceNumber)
		}
		if i > 0 && c.SequenceNumber != txns[i-1].Clock.SequenceNumber+1 {
			t.Errorf("transaction %d: sequence_number %d after %d", tx.Seq, c.SequenceNumber, txns[i-1].Clock.SequenceNumber)
		}
		got.lcMin, got.lcMax = min(got.lcMin, c.LastCommitted), max(got.lcMax, c.LastCommitted)
		got.seqMin, got.seqMax = min(got.seqMin, c.SequenceNumber), max(got.seqMax, c.SequenceNumber)
	}
	if got != *want {
		t.Errorf("logical clock: last_committed %d..%d, sequence_number %d..%d; want %d..%d, %d..%d",
			got.lcMin, got.lcMax, got.seqMin, got.seqMax, want.lcMin, want.lcMax, want.seqMin, want.seqMax)
	}
}

var (
	mariaGTIDText = regexp.MustCompile(`^[0-9]+-[0-9]+-[0-9]+$`)
	mysqlGTIDText = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(:[a-z_][a-z0-9_]*)?:[0-9]+$`)
)

// checkGTIDs checks that GTIDs have the file's flavor and print as the
// server prints them (domain-server-seq for MariaDB, uuid[:tag]:gno for
// MySQL) and parse back; that a MariaDB GTID's server is the events'
// server_id; and that MariaDB sequence numbers count up within a domain.
func checkGTIDs(t *testing.T, txns []*Txn, flavor Flavor) {
	t.Helper()
	lastSeq := map[uint32]uint64{}
	for _, tx := range txns {
		g := tx.GTID
		if g.IsZero() {
			if flavor == FlavorMariaDB {
				t.Errorf("MariaDB transaction %d has no GTID", tx.Seq)
			}
			continue
		}
		if g.Flavor != flavor {
			t.Errorf("transaction %d: %s GTID %s in a %s binlog", tx.Seq, g.Flavor, g, flavor)
		}
		s := g.String()
		switch g.Flavor {
		case FlavorMariaDB:
			if !mariaGTIDText.MatchString(s) || s != strconv.FormatUint(uint64(g.Domain), 10)+"-"+strconv.FormatUint(uint64(g.Server), 10)+"-"+strconv.FormatUint(g.Seq, 10) {
				t.Errorf("transaction %d: MariaDB GTID prints as %q", tx.Seq, s)
			}
			if g.Server != tx.ServerID {
				t.Errorf("transaction %d: GTID %s, server_id %d", tx.Seq, s, tx.ServerID)
			}
			if prev, ok := lastSeq[g.Domain]; ok && g.Seq != prev+1 {
				t.Errorf("transaction %d: GTID %s follows seq_no %d", tx.Seq, s, prev)
			}
			lastSeq[g.Domain] = g.Seq
		case FlavorMySQL:
			if !mysqlGTIDText.MatchString(s) {
				t.Errorf("transaction %d: MySQL GTID prints as %q", tx.Seq, s)
			}
		}
		if back, err := ParseGTID(s); err != nil || back != g {
			t.Errorf("transaction %d: ParseGTID(%q) = %+v, %v; want %+v", tx.Seq, s, back, err, g)
		}
	}
}

func checkSharedError(t *testing.T, path string, err error, want *wantErr) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Errorf("read to the end; want %v at offset %d", want.is, want.offset)
		return
	}
	var pe *PosError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T is not a *PosError: %v", err, err)
	}
	if !errors.Is(err, want.is) || pe.Pos.File != path || pe.Pos.Offset != want.offset || pe.Event != want.event {
		t.Errorf("error %q\n  names %s at %d (%q); want %v at %s:%d (%q)",
			err, pe.Pos.File, pe.Pos.Offset, pe.Event, want.is, path, want.offset, want.event)
	}
	// The position is what a person needs; a message that dumps event
	// bodies or rows (go-mysql's do) does not belong in a log.
	if n := len(err.Error()); n > 400 {
		t.Errorf("error message of %d bytes: %.400s...", n, err)
	}
}

// rawTxns frames a file without decoding it.
func rawTxns(t *testing.T, path string) []*RawTxn {
	t.Helper()
	out, err := FrameFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkPayloads checks that the transactions numbered in compressed (from
// 1) are exactly those that came as a GTID event and a
// TRANSACTION_PAYLOAD event, and nothing else.
func checkPayloads(t *testing.T, path string, compressed ...int) {
	t.Helper()
	var got []int
	for i, rt := range rawTxns(t, path) {
		if rt.Events[len(rt.Events)-1].Type() == replication.TRANSACTION_PAYLOAD_EVENT {
			if len(rt.Events) != 2 {
				t.Errorf("compressed transaction %d has %d events", i+1, len(rt.Events))
			}
			got = append(got, i+1)
		}
	}
	if !equalInts(got, compressed) {
		t.Errorf("compressed transactions %v, want %v", got, compressed)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// wantRows checks a transaction's row changes as rendered by renderTxn.
func wantRows(t *testing.T, tx *Txn, want string) {
	t.Helper()
	got := renderTxn(tx)
	got = got[strings.IndexByte(got, '\n')+1:] // drop the transaction line
	var keep []string
	for _, l := range strings.Split(got, "\n") {
		if !strings.HasPrefix(l, "  stmt ") {
			keep = append(keep, l)
		}
	}
	got = strings.Join(keep, "\n")
	if got != want {
		t.Errorf("transaction %d rows:\n%s\nwant:\n%s\n%s", tx.Seq, got, want, diffLine(want, got))
	}
}

func checkCompressionInsert(t *testing.T, path string, txns []*Txn) {
	checkPayloads(t, path, 1)
	wantRows(t, txns[0], "  insert `test`.`tb1` id=88 cols=1 types=03 meta=[0] flags=0x1 before= after= partial=false\n"+
		"    (int32(1))\n")
}

func checkCompressedUpdate(t *testing.T, path string, txns []*Txn) {
	checkPayloads(t, path, 1)
	if n := len(txns[0].Rows); n != 1 || txns[0].Rows[0].Op != Update || txns[0].Rows[0].Name() != "movies" {
		t.Fatalf("want one update of demo.movies, got %s", renderTxn(txns[0]))
	}
	img := txns[0].Rows[0].Images
	if img[0][0] != int32(1) || img[1][0] != int32(1) || img[0][4] != "Western" || img[1][4] != "Western|Action" ||
		img[1][1] != "Once Upon a Time in the West" || img[1][10] != "Paramount Pictures" {
		t.Errorf("decoded update:\n%s", renderTxn(txns[0]))
	}
}

func checkApecloudCompressed(t *testing.T, path string, txns []*Txn) {
	checkPayloads(t, path, 2, 3)
	if !txns[0].DDL || len(txns[0].Rows) != 0 {
		t.Errorf("transaction 1 should be the DDL:\n%s", renderTxn(txns[0]))
	}
	if len(txns[1].Rows) != 1 || txns[1].Rows[0].Op != Insert || txns[1].Rows[0].Images[0][0] != int32(1) {
		t.Errorf("transaction 2 should insert 1 into a.b:\n%s", renderTxn(txns[1]))
	}
	r := txns[2].Rows
	if len(r) != 2 || r[0].Op != Update || r[1].Op != Insert || r[0].Name() != "test_table_3" {
		t.Fatalf("transaction 3 should update and insert a.test_table_3:\n%s", renderTxn(txns[2]))
	}
	before, after := r[0].Images[0], r[0].Images[1]
	if before[0] != int32(55555) || after[0] != int32(55555) || before[10] != "product_item_2_value" || after[10] != "product_3_value" ||
		r[1].Images[0][0] != int32(6666) || r[1].Images[0][5] != "2022-11-20 13:53:32" {
		t.Errorf("transaction 3 decoded as:\n%s", renderTxn(txns[2]))
	}
}

func checkPartialJSON(t *testing.T, path string, txns []*Txn) {
	for _, tx := range txns[:7] {
		for _, r := range tx.Rows {
			if r.PartialJSON {
				t.Errorf("transaction %d: a full rows event marked PartialJSON", tx.Seq)
			}
		}
	}
	tx := txns[7]
	if len(tx.Rows) != 1 || !tx.Rows[0].PartialJSON || tx.Rows[0].Op != Update {
		t.Fatalf("the last transaction should be one partial JSON update:\n%s", renderTxn(tx))
	}
	r := tx.Rows[0]
	// binlog_row_image=MINIMAL: the before image has the key only, the
	// after image the changed columns, the JSON one as a diff.
	if !r.Present(0, false) || r.Present(1, false) || r.Present(0, true) || !r.Present(1, true) {
		t.Errorf("column bitmaps: before %x, after %x", r.Before, r.After)
	}
	wantRows(t, tx, "  update `mysql`.`t` id=119 cols=4 types=03f50f03 meta=[0 4 400 0] flags=0x1 before=01 after=0e partial=true\n"+
		"    (int32(1), NULL, NULL, NULL)\n"+
		"    (NULL, jsondiff(Replace \"$.age\" \"26\"), \"Joe\", int32(26))\n"+
		"    (int32(2), NULL, NULL, NULL)\n"+
		"    (NULL, jsondiff(Replace \"$.age\" \"34\"), \"Sue\", int32(34))\n"+
		"    (int32(3), NULL, NULL, NULL)\n"+
		"    (NULL, jsondiff(Replace \"$.age\" \"42\"), \"Pete\", int32(42))\n"+
		"    (int32(4), NULL, NULL, NULL)\n"+
		"    (NULL, jsondiff(Replace \"$.age\" \"26\"), \"Joe\", int32(26))\n"+
		"    (int32(5), NULL, NULL, NULL)\n"+
		"    (NULL, jsondiff(Replace \"$.age\" \"34\"), \"Sue\", int32(34))\n"+
		"    (int32(6), NULL, NULL, NULL)\n"+
		"    (NULL, jsondiff(Replace \"$.age\" \"42\"), \"Pete\", int32(42))\n")
}

func checkTaggedGTID(t *testing.T, path string, txns []*Txn) {
	g := txns[0].GTID
	if g.Tag != "mytag" || g.Seq != 3 {
		t.Errorf("GTID %+v, want tag mytag, gno 3", g)
	}
	wantRows(t, txns[0], "  insert `test`.`orders` id=90 cols=3 types=0303f6 meta=[0 0 2562] flags=0x11 before= after= partial=false\n"+
		"    (int32(3), int32(100), \"250.00\")\n")
}

// readmeRow is one line of the shared binlogs' README table.
type readmeRow struct {
	category, version, notes string
	size                     int64
}

var readmeLine = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) \\| ([^|]+) \\| ([0-9]+) \\|.*\\| ([^|]*) \\|$")

func readREADME(t *testing.T) map[string]readmeRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]readmeRow{}
	for _, l := range strings.Split(string(b), "\n") {
		m := readmeLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		size, _ := strconv.ParseInt(m[4], 10, 64)
		rows[m[1]] = readmeRow{category: strings.TrimSpace(m[2]), version: strings.TrimSpace(m[3]), size: size, notes: m[5]}
	}
	return rows
}

// readmeCount returns N from "KIND×N" in the README's notes, 0 if absent.
func readmeCount(notes, kind string) int {
	m := regexp.MustCompile(`(?:^|[ ,])` + regexp.QuoteMeta(kind) + `×([0-9]+)`).FindStringSubmatch(notes)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var readmeClock = regexp.MustCompile(`logical_clock\(lc ([0-9]+)\.\.([0-9]+), seq ([0-9]+)\.\.([0-9]+)\)`)

// TestSharedBinlogsREADME checks sharedFiles against the README's own
// analysis of each file: category, size, server version, and, for files
// that read to the end, the number of GTID events (one per transaction),
// rows events, MySQL and MariaDB GTIDs, the logical clock ranges and the
// number of row images.
func TestSharedBinlogsREADME(t *testing.T) {
	readme := readREADME(t)
	names := globShared(t)
	if len(readme) != len(names) {
		t.Errorf("README lists %d files, %d found", len(readme), len(names))
	}
	for _, f := range sharedFiles {
		r, ok := readme[f.name]
		if !ok {
			t.Errorf("%s: not in the README", f.name)
			continue
		}
		if st, err := os.Stat(sharedPath(f.name)); err != nil || st.Size() != r.size {
			t.Errorf("%s: README says %d bytes; stat: %v", f.name, r.size, err)
		}
		if r.category == "edge" && f.err == nil {
			t.Errorf("%s: an edge file should fail", f.name)
		}
		if f.version != "" && !strings.HasSuffix(r.version, " "+f.version) {
			t.Errorf("%s: README version %q, format description %q", f.name, r.version, f.version)
		}
		if f.err != nil {
			continue // the README counts events the reader never reached
		}
		n := r.notes
		gtidEvents := readmeCount(n, "GTID") + readmeCount(n, "ANON_GTID") + readmeCount(n, "MDB_GTID") + readmeCount(n, "GTID_TAGGED")
		if gtidEvents != 0 && gtidEvents != f.txns {
			t.Errorf("%s: README counts %d GTID events, the table %d transactions", f.name, gtidEvents, f.txns)
		}
		rowsEvents := readmeCount(n, "rows_v1") + readmeCount(n, "rows_v2") + readmeCount(n, "PARTIAL_JSON")
		if rowsEvents != f.rowsEvents {
			t.Errorf("%s: README counts %d rows events, the table %d", f.name, rowsEvents, f.rowsEvents)
		}
		named := readmeCount(n, "GTID") + readmeCount(n, "GTID_TAGGED")
		if f.flavor == FlavorMariaDB {
			named = readmeCount(n, "MDB_GTID")
		}
		if named != f.gtids {
			t.Errorf("%s: README counts %d GTIDs, the table %d", f.name, named, f.gtids)
		}
		if m := readmeClock.FindStringSubmatch(n); m != nil {
			var c clockRange
			for i, p := range []*int64{&c.lcMin, &c.lcMax, &c.seqMin, &c.seqMax} {
				*p, _ = strconv.ParseInt(m[i+1], 10, 64)
			}
			if f.clock == nil || *f.clock != c {
				t.Errorf("%s: README logical clock %+v, the table %+v", f.name, c, f.clock)
			}
		}
		if m := regexp.MustCompile(`([0-9]+) row images`).FindStringSubmatch(n); m != nil {
			want, _ := strconv.Atoi(m[1])
			images := 0
			for _, tx := range readAll(sharedPath(f.name)).txns {
				for _, r := range tx.Rows {
					images += len(r.Images)
				}
			}
			if images != want {
				t.Errorf("%s: %d row images, README says %d", f.name, images, want)
			}
		}
	}
}
