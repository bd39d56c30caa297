package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// fidelityCase is one kind of content a real source writes. Its statements
// run on the source in one session, in database f_<name>, which they
// create; a statement prefixed "@other " runs in a second session.
type fidelityCase struct {
	name  string
	stmts []string
	// background statements run over and over in a third session while
	// stmts run (writes beside DDL); they may fail (a lock wait), but
	// some must succeed.
	background []string
	// sql is set when the SQL apply path applies the case exactly too;
	// otherwise that path must refuse it (TestFidelitySQLPathRefuses).
	sql bool
}

// fidelityCases are the transactions real applications write (ORMs'
// nested transactions, triggers, history tables, sequences, XA, DDL in an
// open transaction, ...). loadFile is a file on the source's machine for
// LOAD DATA.
func fidelityCases(loadFile string) []fidelityCase {
	return []fidelityCase{
		{name: "savepoint", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
			// An ORM's nested transaction: the inner one rolled back.
			"BEGIN", "INSERT INTO t VALUES (1, 1)", "SAVEPOINT s1", "INSERT INTO t VALUES (2, 2)",
			"ROLLBACK TO SAVEPOINT s1", "INSERT INTO t VALUES (3, 3)", "SAVEPOINT s2", "UPDATE t SET v = 30 WHERE id = 3",
			"RELEASE SAVEPOINT s2", "COMMIT",
			// A non-transactional change inside the savepoint: the server
			// logs ROLLBACK TO SAVEPOINT, with the row it rolls back.
			"CREATE TABLE m (id INT PRIMARY KEY) ENGINE=MyISAM",
			"BEGIN", "INSERT INTO t VALUES (50, 50)", "SAVEPOINT q", "INSERT INTO m VALUES (1)", "INSERT INTO t VALUES (51, 51)",
			"ROLLBACK TO SAVEPOINT q", "INSERT INTO t VALUES (52, 52)", "COMMIT",
		}},
		{name: "trigger", stmts: []string{
			"CREATE TABLE a (id INT PRIMARY KEY, v INT)",
			"CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, a_id INT, delta INT)",
			"CREATE TRIGGER a_au AFTER UPDATE ON a FOR EACH ROW INSERT INTO audit (a_id, delta) VALUES (NEW.id, NEW.v - OLD.v)",
			"CREATE TRIGGER a_bi BEFORE INSERT ON a FOR EACH ROW SET NEW.v = NEW.v * 10",
			"INSERT INTO a VALUES (1, 1), (2, 2)",
			"UPDATE a SET v = v + 2 WHERE id = 1", "UPDATE a SET v = v + 5",
		}},
		{name: "versioned", stmts: []string{
			"CREATE TABLE ver (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING",
			"INSERT INTO ver VALUES (1, 1), (2, 2)", "UPDATE ver SET v = 10 WHERE id = 1", "DELETE FROM ver WHERE id = 2",
			"BEGIN", "UPDATE ver SET v = 11 WHERE id = 1", "INSERT INTO ver VALUES (3, 3)", "COMMIT",
		}},
		{name: "sequence", stmts: []string{
			"CREATE SEQUENCE sq START WITH 100 INCREMENT BY 5 CACHE 2",
			"CREATE TABLE orders (id BIGINT PRIMARY KEY, note VARCHAR(20))",
			"SELECT NEXTVAL(sq)", "INSERT INTO orders VALUES (NEXTVAL(sq), 'a'), (NEXTVAL(sq), 'b')",
			"SELECT NEXTVAL(sq)", "SELECT SETVAL(sq, 1000)", "INSERT INTO orders VALUES (NEXTVAL(sq), 'c')",
		}},
		{name: "xa", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
			"XA START 'x1'", "INSERT INTO t VALUES (1, 1)", "UPDATE t SET v = 2 WHERE id = 1", "XA END 'x1'", "XA PREPARE 'x1'",
			"@other INSERT INTO t VALUES (100, 100)", // committed between prepare and commit
			"XA COMMIT 'x1'",
			"XA START 'x2', 'b', 3", "INSERT INTO t VALUES (2, 2)", "XA END 'x2', 'b', 3", "XA PREPARE 'x2', 'b', 3", "XA ROLLBACK 'x2', 'b', 3",
			"XA START 'x3'", "INSERT INTO t VALUES (3, 3)", "XA END 'x3'", "XA COMMIT 'x3' ONE PHASE",
		}},
		{name: "ddl_in_txn", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
			"BEGIN", "INSERT INTO t VALUES (1, 1)", "CREATE TABLE u (id INT PRIMARY KEY)", "INSERT INTO t VALUES (2, 2)", "INSERT INTO u VALUES (1)", "COMMIT",
			"BEGIN", "UPDATE t SET v = 9", "ALTER TABLE t ADD COLUMN w INT DEFAULT 7", "UPDATE t SET w = v + 1", "COMMIT",
		}},
		{name: "ctas", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
			"CREATE TABLE c ENGINE=InnoDB SELECT id, CONCAT(v, v) AS vv FROM t WHERE id > 1",
			"CREATE TABLE d (id INT PRIMARY KEY) SELECT id FROM t",
			"INSERT INTO c VALUES (9, 'z')",
			// Rows past --large-txn-piece: a large transaction after its DDL.
			"CREATE TABLE big (id INT PRIMARY KEY, pad CHAR(200)) SELECT seq AS id, REPEAT('x', 200) AS pad FROM seq_1_to_3000",
		}},
		{name: "rollback_nontrans", sql: true, stmts: []string{
			// Rolled back after changing a MyISAM table: that change stays
			// on the source, the InnoDB one does not (in ROW format the
			// server logs only the first, committed).
			"CREATE TABLE t (id INT PRIMARY KEY)", "CREATE TABLE m (id INT PRIMARY KEY) ENGINE=MyISAM",
			"BEGIN", "INSERT INTO t VALUES (1)", "INSERT INTO m VALUES (1)", "ROLLBACK", "INSERT INTO t VALUES (2)",
		}},
		{name: "load_data", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
			"LOAD DATA INFILE '" + loadFile + "' INTO TABLE t FIELDS TERMINATED BY ','",
			"LOAD DATA INFILE '" + loadFile + "' REPLACE INTO TABLE t FIELDS TERMINATED BY ',' (id, @v) SET v = UPPER(@v)",
		}},
		{name: "temporary", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
			"CREATE TEMPORARY TABLE tmp (id INT, v INT)", "INSERT INTO tmp VALUES (1, 10), (2, 20)",
			"INSERT INTO t SELECT id, v FROM tmp", "UPDATE t JOIN tmp USING (id) SET t.v = t.v + tmp.v", "DROP TEMPORARY TABLE tmp",
		}},
		{name: "statement_context", sql: true, stmts: []string{
			// MariaDB's default MIXED format logs these as statements,
			// each found by MariaDB's test suite at MIXED.
			"SET SESSION binlog_format = 'MIXED'",
			"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
			// A CREATE ... SELECT reads user variables and CONNECTION_ID()
			// (ctype_latin1, type_newdecimal, func_hybrid_type).
			"SET @i = 2, @d = CAST(1.5 AS DECIMAL(65,38))",
			"CREATE TABLE ctas AS SELECT CAST(@i AS BINARY) AS b, @d AS d, CONNECTION_ID() AS c",
			// A temporary table created under SET STATEMENT in a
			// transaction with DML, and DDL reading temporary tables
			// (partition_innodb, create, sp-prelocking).
			"SET autocommit = 0", "INSERT INTO t VALUES (1, 1)",
			"SET STATEMENT sort_buffer_size = 65536 FOR CREATE TEMPORARY TABLE tmp AS SELECT * FROM t",
			"INSERT INTO t SELECT id + 1, v FROM tmp", "COMMIT", "SET autocommit = 1",
			"CREATE TABLE liketmp LIKE tmp",
			"CREATE TABLE fromtmp (v INT) SELECT v FROM (SELECT v FROM tmp) d",
			"DROP TEMPORARY TABLE tmp",
			// A temporary sequence is a temporary table (sql_sequence/temporary).
			"CREATE TEMPORARY SEQUENCE s", "ALTER TABLE s ENGINE = MyISAM",
			"INSERT INTO t SELECT NEXTVAL(s) + 10, 0", "DROP TEMPORARY SEQUENCE s",
			// A session whose connection character set is utf16: what
			// paraply sets after it is not read as utf16 (ctype_utf16).
			"SET character_set_connection = utf16",
			"CREATE TABLE w (word VARCHAR(64)) CHARACTER SET utf16", "INSERT INTO w VALUES (X'2004'), ('a')",
			"SET NAMES utf8mb4",
			"INSERT INTO t VALUES (100, 100)",
			// A function that creates a temporary table flags its
			// caller's transaction as DDL; its writes must still apply
			// (main/sp.test).
			"CREATE FUNCTION f() RETURNS INT DETERMINISTIC MODIFIES SQL DATA BEGIN DROP TEMPORARY TABLE IF EXISTS ft; CREATE TEMPORARY TABLE ft (id INT); INSERT INTO t VALUES (200, 200); RETURN 1; END",
			"SELECT f()", "DROP TEMPORARY TABLE ft",
			"SET SESSION binlog_format = 'ROW'",
		}},
		{name: "connection_id", sql: true, stmts: []string{
			// Statements from two sessions that read their connection id
			// through their text or a column's default: the target must
			// run them with the source session's (paraply leaves it as the
			// session has it only where nothing reads it).
			"SET SESSION binlog_format = 'STATEMENT'", "@other SET SESSION binlog_format = 'STATEMENT'",
			"CREATE TABLE t (id INT PRIMARY KEY, c BIGINT DEFAULT (CONNECTION_ID()))",
			"CREATE TABLE u (id INT PRIMARY KEY, c BIGINT)",
			"ALTER TABLE u ALTER COLUMN c SET DEFAULT (CONNECTION_ID() + 1)",
			"INSERT INTO t (id) VALUES (1)", "@other INSERT INTO t (id) VALUES (2)",
			"@other UPDATE t SET c = 5 WHERE id = 2", "INSERT INTO t (id) VALUES (3)",
			"INSERT INTO u (id) VALUES (1)", "@other INSERT INTO u (id) VALUES (2)",
			"@other INSERT INTO u (id, c) VALUES (3, connection_id() * 10)",
			"SET SESSION binlog_format = 'ROW'", "@other SET SESSION binlog_format = 'ROW'",
		}},
		{name: "insert_history", stmts: []string{
			// versioning/misc, data: a statement that writes a versioned
			// table's history as given.
			"SET SESSION binlog_format = 'STATEMENT'",
			"CREATE TABLE v (a INT, row_start TIMESTAMP(6) AS ROW START, row_end TIMESTAMP(6) AS ROW END, PERIOD FOR SYSTEM_TIME(row_start, row_end)) WITH SYSTEM VERSIONING",
			"SET system_versioning_insert_history = ON",
			"INSERT v (a, row_start, row_end) VALUES (1, '2020-01-01', DEFAULT), (2, '2020-02-02', '2020-03-03')",
			"SET system_versioning_insert_history = OFF",
			"INSERT INTO v (a) VALUES (3)",
			"SET SESSION binlog_format = 'ROW'",
		}},
		{name: "upsert", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, u VARCHAR(10) UNIQUE, n INT)",
			"INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 1)",
			"INSERT INTO t VALUES (1, 'x', 5) ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
			"INSERT INTO t VALUES (3, 'b', 7) ON DUPLICATE KEY UPDATE n = n * 10",
			"REPLACE INTO t VALUES (4, 'a', 9)", "REPLACE INTO t VALUES (5, 'c', 1)",
			"INSERT IGNORE INTO t VALUES (5, 'q', 0), (6, 'd', 6)",
		}},
		{name: "multi_table", sql: true, stmts: []string{
			"CREATE TABLE p (id INT PRIMARY KEY, n INT)", "CREATE TABLE q (id INT PRIMARY KEY, pid INT, n INT)",
			"INSERT INTO p SELECT seq, 0 FROM seq_1_to_10", "INSERT INTO q SELECT seq, seq % 10 + 1, seq FROM seq_1_to_30",
			"UPDATE p JOIN q ON q.pid = p.id SET p.n = p.n + q.n, q.n = -q.n WHERE q.id < 20",
			"DELETE p, q FROM p JOIN q ON q.pid = p.id WHERE p.id IN (2, 3)",
		}},
		{name: "cascade", sql: true, stmts: []string{
			"CREATE TABLE parent (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
			"CREATE TABLE child (id INT PRIMARY KEY, pid INT, n INT, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE ON UPDATE CASCADE) ENGINE=InnoDB",
			"CREATE TABLE orphan (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE SET NULL ON UPDATE SET NULL) ENGINE=InnoDB",
			"INSERT INTO parent SELECT seq, seq FROM seq_1_to_5", "INSERT INTO child SELECT seq, seq % 5 + 1, seq FROM seq_1_to_20",
			"INSERT INTO orphan SELECT seq, seq FROM seq_1_to_5",
			"DELETE FROM parent WHERE id = 2", "UPDATE parent SET id = 30 WHERE id = 3",
		}},
		{name: "columns", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v INT, hid INT INVISIBLE DEFAULT 5, g INT AS (v * 2) VIRTUAL, s VARCHAR(20) AS (CONCAT('s', v)) STORED)",
			"INSERT INTO t (id, v, hid) VALUES (1, 1, 11), (2, 2, 22)", "INSERT INTO t (id, v) VALUES (3, 3)",
			"UPDATE t SET v = v + 1, hid = hid + 1",
		}},
		{name: "keyless", sql: true, stmts: []string{
			"CREATE TABLE t (a INT, b VARCHAR(10))",
			"INSERT INTO t VALUES (1, 'x'), (1, 'x'), (2, 'y'), (NULL, NULL)",
			"UPDATE t SET b = 'z' WHERE a = 1 LIMIT 1", "DELETE FROM t WHERE a = 2", "UPDATE t SET a = 7 WHERE a IS NULL",
		}},
		// The source session's context, which DDL and rows carry (issue
		// 34): each of these diverged or stopped before.
		{name: "ddl_clock", sql: true, stmts: []string{
			"SET timestamp = UNIX_TIMESTAMP('2001-02-03 10:00:00.123456')",
			"CREATE TABLE t1 (a INT PRIMARY KEY)", "INSERT INTO t1 VALUES (1), (2)",
			"ALTER TABLE t1 ADD COLUMN ts DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, ADD COLUMN ts6 DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)",
			"SET timestamp = DEFAULT",
		}},
		{name: "ddl_time_zone", sql: true, stmts: []string{
			"SET time_zone = '+03:00'", "CREATE TABLE t1 (a INT PRIMARY KEY)", "INSERT INTO t1 VALUES (1)",
			"ALTER TABLE t1 ADD COLUMN t TIMESTAMP NOT NULL DEFAULT '2003-01-01 00:00:00'",
			"SET time_zone = DEFAULT",
		}},
		{name: "invalid_dates", sql: true, stmts: []string{
			"CREATE TABLE t1 (id INT PRIMARY KEY, d DATE, dt DATETIME)",
			"SET sql_mode = 'ALLOW_INVALID_DATES'",
			"INSERT INTO t1 VALUES (1, '2004-02-30', '2004-02-31 10:00:00'), (2, '2004-04-31', '2004-06-31 23:59:59')",
			"UPDATE t1 SET d = '2005-04-31' WHERE id = 2",
			"SET sql_mode = DEFAULT",
		}},
		// YEAR 0000, which a YEAR(2) column reads as 2000 when given the
		// number 0 (MariaDB's suite/engines/iuds/insert_year).
		{name: "year_zero", sql: true, stmts: []string{
			"CREATE TABLE y2 (c1 YEAR(2) NOT NULL, c2 YEAR(2) NULL, n INT, PRIMARY KEY (c1, c2))",
			"CREATE TABLE y4 (c1 YEAR(4) NOT NULL, c2 YEAR(4) NULL, n INT, PRIMARY KEY (c1, c2))",
			// (0000, 0000) beside (2000, 2000): the same key, if 0 is 2000.
			"INSERT INTO y2 VALUES ('00', '10', 1), (1999, 2000, 2), (2000, 2000, 4)", "INSERT IGNORE INTO y2 VALUES (1900, 2156, 3)",
			"INSERT INTO y4 VALUES ('00', '10', 1), (0, 2000, 2)", "INSERT IGNORE INTO y4 VALUES (1900, 2156, 3)",
			"UPDATE y2 SET n = n + 10", "UPDATE y4 SET n = n + 10", "DELETE FROM y2 WHERE n = 12",
		}},
		{name: "on_update", sql: true, stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, n INT, updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, " +
				"u6 DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))",
			// The source's clock stands still: every update leaves the
			// columns as the insert set them, so their row images do not
			// change them, and a target that stamped its own clock would
			// differ.
			"SET timestamp = UNIX_TIMESTAMP('2010-01-01 00:00:00.5')",
			"INSERT INTO t (id, n) VALUES (1, 0), (2, 0), (3, 0)",
			"UPDATE t SET n = 1 WHERE id = 1",
			"BEGIN", "UPDATE t SET n = 2 WHERE id = 2", "UPDATE t SET n = 3 WHERE id = 2", "DELETE FROM t WHERE id = 3",
			"INSERT INTO t (id, n) VALUES (3, 9)", "UPDATE t SET n = 10 WHERE id = 3", "COMMIT",
			"SET timestamp = DEFAULT",
		}},
		{name: "ddl_collation", sql: true, stmts: []string{
			"SET NAMES latin1 COLLATE latin1_german2_ci", "CREATE TABLE t1 (id INT PRIMARY KEY, a VARCHAR(10))",
			"INSERT INTO t1 VALUES (1, 'x')", "ALTER TABLE t1 ADD COLUMN b VARCHAR(5) DEFAULT 'y'",
			"SET NAMES utf8mb4",
		}},
		{name: "fk_checks", sql: true, stmts: []string{
			"SET foreign_key_checks = 0",
			"CREATE TABLE c2 (f1 INT PRIMARY KEY, FOREIGN KEY (f1) REFERENCES p2 (f2)) ENGINE=InnoDB",
			"CREATE TABLE p2 (f2 INT PRIMARY KEY) ENGINE=InnoDB",
			"INSERT INTO c2 VALUES (1)",
			"CREATE TABLE p (id INT PRIMARY KEY) ENGINE=InnoDB",
			"CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id)) ENGINE=InnoDB",
			"INSERT INTO p VALUES (1)", "INSERT INTO c VALUES (1, 1)",
			"DROP TABLE p",
			"SET foreign_key_checks = 1",
		}},
		{name: "ddl_session_bits", sql: true, stmts: []string{
			// explicit_defaults_for_timestamp (an option bit of the
			// query event since MariaDB 10.10) shapes a CREATE TABLE's
			// TIMESTAMP columns; a UCA 14.0 collation (ID 2304) names the
			// session's character sets (type_timestamp.test,
			// ctype_utf8mb4_uca.test).
			"SET explicit_defaults_for_timestamp = OFF", "CREATE TABLE t1 (f1 TIMESTAMP, f2 TIMESTAMP)",
			"SET explicit_defaults_for_timestamp = ON", "CREATE TABLE t2 (f1 TIMESTAMP)",
			"SET NAMES utf8mb4 COLLATE utf8mb4_uca1400_ai_ci", "CREATE TABLE u (a VARCHAR(10))",
			"INSERT INTO u VALUES ('ä')", "SET NAMES utf8mb4",
		}},
		{name: "rolled_back", sql: true, stmts: []string{
			// A transaction the source rolled back after it changed a
			// non-transactional table: logged, with ROLLBACK at its end.
			// Its MyISAM row stays, its InnoDB rows go, as on the source.
			"CREATE TABLE mi (id INT PRIMARY KEY, v INT) ENGINE=MyISAM",
			"CREATE TABLE inn (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
			"INSERT INTO inn VALUES (1, 1)",
			// Row format logs the MyISAM row on its own; statement format
			// keeps it in the transaction.
			"SET SESSION binlog_format = 'STATEMENT'",
			"BEGIN", "UPDATE inn SET v = 10 WHERE id = 1", "INSERT INTO inn VALUES (2, 2)", "INSERT INTO mi VALUES (1, 1)", "ROLLBACK",
			"SET SESSION binlog_format = 'ROW'",
			"INSERT INTO inn VALUES (3, 3)",
		}},
		{name: "rolled_back_versioned", stmts: []string{
			// The partition a rolled-back UPDATE of a versioned table
			// added stays on the source (versioning/partition.test).
			"SET timestamp = UNIX_TIMESTAMP('2000-01-01 00:00:00')",
			"CREATE TABLE vp (x INT) WITH SYSTEM VERSIONING ENGINE=InnoDB PARTITION BY SYSTEM_TIME INTERVAL 1 HOUR AUTO",
			"INSERT INTO vp VALUES (1)",
			"SET timestamp = UNIX_TIMESTAMP('2000-01-01 01:00:00')", "BEGIN", "UPDATE vp SET x = 0", "COMMIT",
			"SET timestamp = UNIX_TIMESTAMP('2000-01-01 02:00:00')", "BEGIN", "UPDATE vp SET x = 1", "ROLLBACK",
			"SET timestamp = DEFAULT",
		}},
		{name: "epoch_fraction", sql: true, stmts: []string{
			// The epoch's first second with a fraction is no zero
			// TIMESTAMP (MariaDB's type_timestamp.test).
			"SET time_zone = '+00:00'",
			"CREATE TABLE e (id INT PRIMARY KEY, a TIMESTAMP(6) NULL, b TIMESTAMP(3) NULL)",
			"INSERT INTO e VALUES (1, '1970-01-01 00:00:00.000001', '1970-01-01 00:00:00.5'), (2, '1970-01-01 00:00:01.25', NULL)",
			"UPDATE e SET id = 3 WHERE a = '1970-01-01 00:00:00.000001'",
			"SET time_zone = '+03:00'",
			"INSERT INTO e VALUES (4, '1970-01-01 03:00:00.7', '1970-01-01 03:00:00.001')",
		}},
		{name: "check_checks", sql: true, stmts: []string{
			// Rows and DDL the source checked no constraint for: its row
			// events and query events say so, and a replica does not
			// check them either.
			"CREATE TABLE k (id INT PRIMARY KEY, v INT CHECK (v < 10))",
			"SET check_constraint_checks = 0",
			"INSERT INTO k VALUES (1, 50)", "UPDATE k SET v = 60 WHERE id = 1",
			"ALTER TABLE k ADD w INT DEFAULT 20 CHECK (w < 10)",
			"INSERT INTO k VALUES (2, 70, 80)",
			"SET check_constraint_checks = 1",
		}},
		{name: "drop_missing", sql: true, stmts: []string{
			// A DROP of what the replica never had (created outside the
			// binlog): a replica drops what it has and goes on.
			"CREATE SEQUENCE s1", "SET sql_log_bin = 0", "CREATE SEQUENCE s2", "SET sql_log_bin = 1",
			"DROP SEQUENCE s1, s2",
			"CREATE TABLE tt (a INT)", "SET sql_log_bin = 0", "CREATE TRIGGER tr1 BEFORE INSERT ON tt FOR EACH ROW SET @a = 1",
			"SET sql_log_bin = 1", "DROP TRIGGER tr1", "INSERT INTO tt VALUES (1)",
		}},
		{name: "drop_unopenable", stmts: []string{
			// A table its engine cannot open after ADD PARTITION (an Aria
			// versioned table partitioned by SYSTEM_TIME): its DROP is
			// what the DDL bracket must let through
			// (versioning/partition.test).
			"CREATE TABLE t1 (a INT PRIMARY KEY) ENGINE=Aria PAGE_CHECKSUM=0 WITH SYSTEM VERSIONING PARTITION BY SYSTEM_TIME (PARTITION p1 HISTORY, PARTITION pn CURRENT)",
			"ALTER TABLE t1 ADD PARTITION (PARTITION p2 HISTORY)", "DROP TABLE t1",
			"CREATE TABLE after_drop (a INT)", "INSERT INTO after_drop VALUES (1)",
		}},
		{name: "ddl_error", sql: true, stmts: []string{
			// Logged with the error they met on the source: a replica
			// expects the same error, and what they did.
			"CREATE TABLE t (id INT PRIMARY KEY)", "CREATE VIEW v1 AS SELECT * FROM t",
			"@fail DROP VIEW v2, v1",
			"CREATE TABLE a (id INT PRIMARY KEY)", "@fail DROP TABLE nosuch, a",
			// A table the replicas never saw: a replica's idempotent DDL
			// drops what is not there without stopping.
			"SET sql_log_bin = 0", "CREATE TABLE unlogged (id INT PRIMARY KEY)", "SET sql_log_bin = 1",
			"DROP TABLE unlogged",
		}},
		{name: "period_keys", sql: true, stmts: []string{
			// A long unique key (VARCHAR(4096), BLOB, TEXT, USING HASH) has
			// a hidden hash column, DB_ROW_HASH_n, after the table's own in
			// row images: the target computes it (suite/period/long_unique).
			"CREATE TABLE lu (f VARCHAR(4096), s DATE, e DATE, PERIOD FOR app (s, e), UNIQUE (f))",
			"INSERT INTO lu VALUES ('foo', '2023-08-30', '2025-07-09'), ('bar', '2021-01-01', '2021-12-31')",
			"DELETE FROM lu FOR PORTION OF app FROM '2023-08-29' TO '2025-07-01'",
			"UPDATE lu FOR PORTION OF app FROM '2021-01-01' TO '2021-06-01' SET f = 'baz'",
			"CREATE TABLE lt (a INT, f TEXT UNIQUE, s DATETIME, e DATETIME, PERIOD FOR p (s, e))",
			"INSERT INTO lt VALUES (1, 'foo', '1900-01-01', '2000-01-01'), (2, 'bar', '1900-01-01', '2000-01-01')",
			"DELETE FROM lt FOR PORTION OF p FROM '1980-01-01' TO '2000-01-01'",
			"UPDATE lt FOR PORTION OF p FROM '1900-01-01' TO '1950-01-01' SET f = CONCAT(f, '2')",
			// WITHOUT OVERLAPS: rows of one id conflict when their periods
			// overlap, so a row that takes a period another one freed must
			// follow it (suite/period/overlaps).
			"CREATE TABLE wo (id INT, u INT, s DATE, e DATE, v INT, PERIOD FOR p (s, e), " +
				"PRIMARY KEY (id, p WITHOUT OVERLAPS), UNIQUE (u, p WITHOUT OVERLAPS))",
			"INSERT INTO wo VALUES (1, 1, '2003-01-01', '2003-03-01', 0), (1, 2, '2003-05-01', '2003-07-01', 0), (2, NULL, '2003-01-01', '2003-12-01', 0)",
			"@fail INSERT INTO wo VALUES (1, 3, '2003-02-01', '2003-04-01', 0)",
			"UPDATE wo SET e = '2003-04-01' WHERE id = 1 AND s = '2003-01-01'",
			"DELETE FROM wo WHERE id = 1 AND s = '2003-01-01'",
			"INSERT INTO wo VALUES (1, 1, '2003-02-01', '2003-04-01', 1)",
			"UPDATE wo FOR PORTION OF p FROM '2003-06-01' TO '2003-06-15' SET v = 5",
			"DELETE FROM wo FOR PORTION OF p FROM '2003-03-01' TO '2003-03-15'",
			"UPDATE wo SET id = 3 WHERE id = 2",
			"INSERT INTO wo VALUES (2, 9, '2003-06-01', '2003-12-01', 0)",
			"UPDATE wo SET u = 9, s = '2003-01-01', e = '2003-02-01' WHERE id = 1 AND s = '2003-02-01'",
			"CREATE TABLE cars (id INT AUTO_INCREMENT, price INT, s DATE, e DATE, PERIOD FOR p (s, e), " +
				"PRIMARY KEY (id, p WITHOUT OVERLAPS), b BLOB UNIQUE)",
			"INSERT INTO cars (price, s, e) VALUES (1000, '2018-01-01', '2020-01-01')",
			"UPDATE cars FOR PORTION OF p FROM '2019-01-01' TO '2019-12-01' SET price = 1100",
			"UPDATE cars SET b = 'x' WHERE price = 1100", "DELETE FROM cars FOR PORTION OF p FROM '2019-12-10' TO '2019-12-20'",
			// Plain long unique keys, without a period: nullable (the table
			// is keyless) and beside a primary key, and a column of the
			// table named as a hash column (the key's is DB_ROW_HASH_2).
			"CREATE TABLE bu (id INT PRIMARY KEY, b BLOB UNIQUE, v VARCHAR(2000) CHARACTER SET utf8mb4, UNIQUE (v))",
			"INSERT INTO bu VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, NULL, NULL)",
			"UPDATE bu SET b = 'c' WHERE id = 1", "DELETE FROM bu WHERE id = 2",
			"INSERT INTO bu VALUES (4, 'b', 'y')", "UPDATE bu SET b = 'a', v = 'z' WHERE id = 3",
			"CREATE TABLE bk (b BLOB, n INT, UNIQUE (b) USING HASH)",
			"INSERT INTO bk VALUES ('a', 1), ('b', 2), (NULL, 3), (NULL, 3)",
			"UPDATE bk SET n = 4 WHERE b = 'a'", "DELETE FROM bk WHERE b = 'b'", "UPDATE bk SET b = 'b' WHERE n = 3 LIMIT 1",
			"CREATE TABLE named (id INT PRIMARY KEY, DB_ROW_HASH_1 BIGINT, b BLOB UNIQUE)",
			"INSERT INTO named VALUES (1, 10, 'a'), (2, 20, 'b')", "UPDATE named SET DB_ROW_HASH_1 = 11, b = 'c' WHERE id = 1",
		}},
		{name: "versioned_alter", stmts: []string{
			"CREATE TABLE v (id INT PRIMARY KEY, a INT) WITH SYSTEM VERSIONING", "INSERT INTO v VALUES (1, 1)", "UPDATE v SET a = 2",
			"SET system_versioning_alter_history = KEEP", "ALTER TABLE v ADD COLUMN b INT", "UPDATE v SET b = 3",
		}},
		{name: "big_row", sql: true, stmts: []string{
			// A value near the targets' max_allowed_packet (16 MiB): too
			// large for a statement's text, within reach of a row.
			"CREATE TABLE b (id INT PRIMARY KEY, v LONGBLOB)",
			"INSERT INTO b VALUES (1, REPEAT('x', 14 << 20)), (2, REPEAT('y', 6 << 20))",
			"UPDATE b SET v = CONCAT(v, 'z') WHERE id = 2",
			"DELETE FROM b WHERE id = 1",
		}},
		{name: "compressed", sql: true, stmts: []string{
			// MariaDB's compressed columns: the row images carry the values
			// as stored (types 140 and 141, a header byte, then the value or
			// its zlib stream), which the SQL path writes uncompressed. Empty,
			// NULL, short (stored as is) and long (compressed) values, raw
			// deflate and (column_compression_zlib_wrap) zlib streams.
			"CREATE TABLE c (id INT PRIMARY KEY, b BLOB COMPRESSED, t TEXT COMPRESSED CHARACTER SET utf8mb4, " +
				"v VARCHAR(300) COMPRESSED CHARACTER SET utf8mb4, l VARCHAR(100) COMPRESSED CHARACTER SET latin1, lb LONGBLOB COMPRESSED)",
			"INSERT INTO c VALUES (1, '', '', '', '', ''), (2, NULL, NULL, NULL, NULL, NULL), (3, 'x', 'é', 'short', 'ÿ', 'lb'), " +
				"(4, REPEAT('abc', 100), REPEAT('é🙂', 60), REPEAT('ü', 300), REPEAT('ÿ', 100), REPEAT('L', 70000))",
			"SET SESSION column_compression_zlib_wrap = ON",
			"UPDATE c SET b = REPEAT('w', 500), v = REPEAT('wrap', 50) WHERE id = 3",
			"SET SESSION column_compression_zlib_wrap = DEFAULT",
			"UPDATE c SET t = CONCAT(t, '!'), l = NULL WHERE id = 4",
			"DELETE FROM c WHERE id = 1",
			// A transaction larger than --large-txn-piece, applied in pieces.
			"INSERT INTO c (id, b, v) SELECT 100 + seq, REPEAT(CHAR(65 + seq % 26), 200 + seq), CONCAT('row ', seq) FROM seq_1_to_3000",
			// Keyless: the rows are found by every column, the compressed
			// ones too.
			"CREATE TABLE k (v VARCHAR(500) COMPRESSED, n INT)",
			"INSERT INTO k VALUES (REPEAT('k', 300), 1), ('k', 2), (REPEAT('k', 300), 4)",
			"UPDATE k SET n = 3 WHERE n = 1", "DELETE FROM k WHERE n = 2",
		}},
		{name: "partitions", sql: true, stmts: []string{
			// Range, hash and subpartitioned tables, MyISAM and InnoDB,
			// with and without a primary key, re-partitioned while
			// another session writes to them (issue 41).
			"CREATE TABLE r (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL, PRIMARY KEY (a, b)) ENGINE=MyISAM " +
				"PARTITION BY RANGE (a) (PARTITION x1 VALUES LESS THAN (5) TABLESPACE ts1, PARTITION x2 VALUES LESS THAN (10) TABLESPACE ts2, PARTITION x3 VALUES LESS THAN MAXVALUE TABLESPACE ts3)",
			"CREATE TABLE h (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL) ENGINE=MyISAM PARTITION BY HASH (a) PARTITIONS 3",
			"CREATE TABLE s (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL, PRIMARY KEY (a, b)) ENGINE=MyISAM " +
				"PARTITION BY RANGE (a) SUBPARTITION BY HASH (a + b) (PARTITION x1 VALUES LESS THAN (10) " +
				"(SUBPARTITION x11 TABLESPACE t1 NODEGROUP 0, SUBPARTITION x12 TABLESPACE t2 NODEGROUP 1), " +
				"PARTITION x2 VALUES LESS THAN MAXVALUE (SUBPARTITION x21, SUBPARTITION x22))",
			"CREATE TABLE i (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL, PRIMARY KEY (a, b)) ENGINE=InnoDB " +
				"PARTITION BY RANGE (a) SUBPARTITION BY KEY (b) SUBPARTITIONS 2 (PARTITION p0 VALUES LESS THAN (20), PARTITION p1 VALUES LESS THAN (40))",
			"CREATE TABLE k (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL) ENGINE=InnoDB PARTITION BY KEY (a) PARTITIONS 2",
			"INSERT INTO r SELECT seq % 40, seq, 0 FROM seq_1_to_200", "INSERT INTO h SELECT seq % 40, seq, 0 FROM seq_1_to_200",
			"INSERT INTO s SELECT seq % 40, seq, 0 FROM seq_1_to_200", "INSERT INTO i SELECT seq % 40, seq, 0 FROM seq_1_to_200",
			"INSERT INTO k SELECT seq % 40, seq, 0 FROM seq_1_to_200",
			"ALTER TABLE r PARTITION BY RANGE (a) (PARTITION x1 VALUES LESS THAN (8), PARTITION x2 VALUES LESS THAN (16), PARTITION x3 VALUES LESS THAN MAXVALUE)",
			"ALTER TABLE h PARTITION BY HASH (a) PARTITIONS 5", "ALTER TABLE s ADD COLUMN d INT", "ALTER TABLE k PARTITION BY LINEAR HASH (a) PARTITIONS 3",
			"ALTER TABLE i ADD PARTITION (PARTITION p2 VALUES LESS THAN (60))", "DO SLEEP(0.2)",
			"ALTER TABLE r REORGANIZE PARTITION x3 INTO (PARTITION x3 VALUES LESS THAN (30), PARTITION x4 VALUES LESS THAN MAXVALUE)",
			"ALTER TABLE h COALESCE PARTITION 2", "ALTER TABLE r TRUNCATE PARTITION x1", "ALTER TABLE i DROP PARTITION p0",
			"ALTER TABLE k REMOVE PARTITIONING", "ALTER TABLE s PARTITION BY KEY (a) PARTITIONS 2", "DO SLEEP(0.2)",
			"ALTER TABLE k PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (20), PARTITION p1 VALUES LESS THAN MAXVALUE)",
			"ALTER TABLE h REMOVE PARTITIONING", "ALTER TABLE r PARTITION BY HASH (a) PARTITIONS 2",
		}, background: []string{
			"INSERT IGNORE INTO r (a, b, c) VALUES (FLOOR(RAND() * 40), FLOOR(RAND() * 100000), 1)",
			"UPDATE h SET c = c + 1 WHERE a = FLOOR(RAND() * 40)",
			"INSERT IGNORE INTO s (a, b, c) VALUES (FLOOR(RAND() * 40), FLOOR(RAND() * 100000), 1)",
			"DELETE FROM i WHERE a = FLOOR(RAND() * 60) LIMIT 1",
			"INSERT INTO k (a, b, c) VALUES (FLOOR(RAND() * 40), 0, 2)",
			"UPDATE i SET c = c + 1 WHERE a < 60 AND b = FLOOR(RAND() * 200)",
		}},
		{name: "event", sql: true, stmts: []string{
			"CREATE TABLE ticks (id INT AUTO_INCREMENT PRIMARY KEY, at DATETIME(6))",
			// Runs on the source; a replica must not run it too.
			"CREATE EVENT ev ON SCHEDULE EVERY 1 SECOND STARTS NOW() ENDS NOW() + INTERVAL 3 SECOND DO INSERT INTO ticks (at) VALUES (NOW(6))",
			"DO SLEEP(4)",
		}},
	}
}

// fidelityRig is one source and two targets: MariaDB's own replica (the
// oracle) and paraply's.
type fidelityRig struct {
	src, native, tgt *sandbox.Server
	sdb, ndb, tdb    *sql.DB
	start            string
}

func newFidelityRig(t *testing.T, name string) *fidelityRig {
	t.Helper()
	// The targets take packets of MariaDB's default size, which a row of
	// big_row's exceeds as a statement's text.
	return newFidelityRigWith(t, name, "--max-allowed-packet=16M")
}

// newFidelityRigWith is newFidelityRig with targetArgs for both targets'
// servers.
func newFidelityRigWith(t *testing.T, name string, targetArgs ...string) *fidelityRig {
	t.Helper()
	// The event scheduler runs on every server: a target that ran
	// replicated events itself would write rows the source did not.
	ev := []string{"--event-scheduler=ON"}
	tev := append(slices.Clone(ev), targetArgs...)
	r := &fidelityRig{
		src:    sandboxtest.ForTest(t, sandbox.Options{Name: name + "src", Binlog: true, ExtraArgs: ev}),
		native: sandboxtest.ForTest(t, sandbox.Options{Name: name + "nat", ServerID: 2, ExtraArgs: tev}),
		tgt:    sandboxtest.ForTest(t, sandbox.Options{Name: name + "tgt", ServerID: 3, ExtraArgs: tev}),
	}
	r.open(t)
	return r
}

// open connects to the rig's servers, takes the source's position and
// starts MariaDB's replica on it from there.
func (r *fidelityRig) open(t *testing.T) {
	t.Helper()
	for _, s := range []struct {
		srv *sandbox.Server
		db  **sql.DB
	}{{r.src, &r.sdb}, {r.native, &r.ndb}, {r.tgt, &r.tdb}} {
		db, err := s.srv.DB("")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		*s.db = db
	}
	// A position to start from (an empty one means "now" to paraply).
	execAll(t, r.sdb, "CREATE DATABASE warmup")
	if err := r.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&r.start); err != nil {
		t.Fatal(err)
	}
	execAll(t, r.ndb, "SET GLOBAL gtid_slave_pos = '"+r.start+"'",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", r.src.Port),
		"START SLAVE")
}

// run runs a case on the source, in its own database and session. A
// statement prefixed "@fail " must fail on the source.
func (r *fidelityRig) run(t *testing.T, c fidelityCase) {
	t.Helper()
	ctx := context.Background()
	conn, err := r.sdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	other, err := r.sdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	db := "f_" + c.name
	if len(c.background) > 0 {
		done := r.background(t, db, c.background)
		defer done()
	}
	for _, q := range append([]string{"CREATE DATABASE " + db, "USE " + db}, c.stmts...) {
		c := conn
		if s, ok := strings.CutPrefix(q, "@other "); ok {
			q, c = s, other
		}
		q, fail := strings.CutPrefix(q, "@fail ")
		if strings.HasPrefix(q, "USE ") {
			if _, err := other.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		switch _, err := c.ExecContext(ctx, q); {
		case fail && err == nil:
			t.Fatalf("%s: %s: no error, want one", db, q)
		case !fail && err != nil:
			t.Fatalf("%s: %s: %v", db, q, err)
		}
	}
}

// background runs stmts over and over in a session of its own, in
// database db once it exists, until the returned function is called; that
// function fails the test if none of them succeeded.
func (r *fidelityRig) background(t *testing.T, db string, stmts []string) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := r.sdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ok atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if _, err := conn.ExecContext(ctx, "USE "+db); err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			for _, q := range stmts {
				// A statement that waits for a lock the DDL holds, or
				// meets a table between its definitions, fails: what
				// it did not write is not replicated either.
				if _, err := conn.ExecContext(ctx, q); err == nil {
					ok.Add(1)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
		conn.Close()
		if ok.Load() == 0 {
			t.Errorf("%s: none of the background statements succeeded", db)
		}
	}
}

// sourcePos is the source's GTID position.
func (r *fidelityRig) sourcePos(t *testing.T) string {
	t.Helper()
	var pos string
	if err := r.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return pos
}

// newQuietRig is a fidelity rig whose servers run no event scheduler, with
// the source as src describes it beyond its name and binlog (its
// binlog_format, durability, options); name prefixes the servers' names.
func newQuietRig(t *testing.T, name string, src sandbox.Options) *fidelityRig {
	t.Helper()
	off := "--event-scheduler=OFF"
	src.Name, src.Binlog, src.ExtraArgs = name+"src", true, append([]string{off}, src.ExtraArgs...)
	r := &fidelityRig{
		src:    sandboxtest.ForTest(t, src),
		native: sandboxtest.ForTest(t, sandbox.Options{Name: name + "nat", ServerID: 2, ExtraArgs: []string{off}}),
		tgt:    sandboxtest.ForTest(t, sandbox.Options{Name: name + "tgt", ServerID: 3, ExtraArgs: []string{off}}),
	}
	r.open(t)
	return r
}

// catchUpAndQuery brings paraply (catchUp) and MariaDB's replica up to
// the source's position and returns q's result on the source, the native
// replica and paraply's target. A native replica that differs from the
// source fails the test: it is the reference.
func (r *fidelityRig) catchUpAndQuery(t *testing.T, q string) (source, native, ours string) {
	t.Helper()
	end := r.sourcePos(t)
	r.catchUp(t)
	r.waitNative(t, end)
	source, native, ours = queryText(t, r.sdb, q), queryText(t, r.ndb, q), queryText(t, r.tdb, q)
	if native != source {
		t.Fatalf("MariaDB's replica differs from the source\nsource:\n%s\nnative:\n%s", source, native)
	}
	return source, native, ours
}

// catchUp runs paraply from the rig's start until it has caught up with
// the source, in a relay directory of its own, and fails the test if it
// does not.
func (r *fidelityRig) catchUp(t *testing.T) {
	t.Helper()
	if code, out := runParaply(t, nil, "replicate", "--source", r.src.URL(), "--target", r.tgt.URL(),
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", r.start, "--until-caught-up",
		"--log-level", "warn", "--http", ""); code != 0 {
		t.Fatalf("paraply: exit %d\n%s", code, out)
	}
}

// waitNative waits until the native replica has applied pos.
func (r *fidelityRig) waitNative(t *testing.T, pos string) {
	t.Helper()
	var res int
	if err := r.ndb.QueryRow("SELECT MASTER_GTID_WAIT(?, 120)", pos).Scan(&res); err != nil || res != 0 {
		var status string
		for c, v := range r.nativeStatus(t) {
			if strings.Contains(c, "Error") || strings.Contains(c, "Running") {
				status += fmt.Sprintf("%s=%s ", c, v)
			}
		}
		t.Fatalf("native replica did not reach %s (%d, %v): %s", pos, res, err, status)
	}
}

// nativeError waits until the native replica has applied pos, or its SQL
// thread stopped, and returns its Last_SQL_Error ("" if it reached pos).
func (r *fidelityRig) nativeError(t *testing.T, pos string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var res int
		if err := r.ndb.QueryRow("SELECT MASTER_GTID_WAIT(?, 0.2)", pos).Scan(&res); err == nil && res == 0 {
			return ""
		}
		if st := r.nativeStatus(t); st["Slave_SQL_Running"] == "No" {
			return st["Last_SQL_Error"]
		}
	}
	t.Fatalf("native replica neither reached %s nor stopped", pos)
	return ""
}

// nativeStatus is the native replica's SHOW SLAVE STATUS, by column.
func (r *fidelityRig) nativeStatus(t *testing.T) map[string]string {
	t.Helper()
	rows, err := r.ndb.Query("SHOW SLAVE STATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	st := map[string]string{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			st[c] = string(vals[i])
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return st
}

// dumpDatabase renders every table of db on a server, rows sorted, with
// the history rows and their periods for system-versioned tables, the
// state of sequences, and the events and their status, so that two
// servers can be compared as text.
func dumpDatabase(t *testing.T, conn *sql.DB, db string) string {
	t.Helper()
	rows, err := conn.Query("SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME", db)
	if err != nil {
		t.Fatal(err)
	}
	type table struct{ name, typ string }
	var tables []table
	for rows.Next() {
		var tb table
		if err := rows.Scan(&tb.name, &tb.typ); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tb)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var b strings.Builder
	for _, tb := range tables {
		// The definition too (partitions, engine), without the
		// AUTO_INCREMENT counter, which follows the rows a server
		// inserted rather than the source's history, nor the marks of
		// a column stored in an old format (MariaDB 5.3's temporal
		// columns, pre-5.0 VARCHAR): a replicated CREATE makes current
		// ones, as on MariaDB's replica.
		var name, def string
		if err := conn.QueryRow(fmt.Sprintf("SHOW CREATE TABLE `%s`.`%s`", db, tb.name)).Scan(&name, &def); err == nil {
			def = autoIncrement.ReplaceAllString(def, "")
			fmt.Fprintf(&b, "%s\n", oldFormatMark.ReplaceAllString(def, ""))
		}
		q := fmt.Sprintf("SELECT * FROM `%s`.`%s`", db, tb.name)
		if tb.typ == "SYSTEM VERSIONED" {
			q = fmt.Sprintf("SELECT *, ROW_START, ROW_END FROM `%s`.`%s` FOR SYSTEM_TIME ALL", db, tb.name)
		}
		fmt.Fprintf(&b, "%s (%s):\n%s", tb.name, tb.typ, queryText(t, conn, q))
	}
	fmt.Fprintf(&b, "events:\n%s", queryText(t, conn, "SELECT EVENT_NAME, STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?", db))
	return b.String()
}

// queryText runs q and renders its rows, one per line, sorted.
func queryText(t *testing.T, conn *sql.DB, q string, args ...any) string {
	t.Helper()
	rows, err := conn.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var lines []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var l bytes.Buffer
		for i, v := range vals {
			if i > 0 {
				l.WriteString(" | ")
			}
			if v == nil {
				l.WriteString("NULL")
			} else {
				fmt.Fprintf(&l, "%q", v)
			}
		}
		lines = append(lines, l.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return "  " + strings.Join(lines, "\n  ") + "\n"
}

// TestFidelityAgainstNativeReplica runs every case on a source replicated
// by MariaDB's own replica and by paraply (SIGKILLed once in the middle of
// the stream), with the default apply path and with every row through the
// target's own row applier, and requires the two targets to hold the same
// rows, history rows, sequence states and event states.
func TestFidelityAgainstNativeReplica(t *testing.T) {
	for _, apply := range []string{"auto", "binlog"} {
		t.Run(apply, func(t *testing.T) {
			testFidelity(t, apply, func(fidelityCase) bool { return true })
		})
	}
}

// TestFidelitySQLPath runs the cases the SQL apply path supports with
// --apply sql: the same equality with MariaDB's replica.
func TestFidelitySQLPath(t *testing.T) {
	testFidelity(t, "sql", func(c fidelityCase) bool { return c.sql })
}

func testFidelity(t *testing.T, apply string, include func(fidelityCase) bool) {
	r := newFidelityRig(t, "fid")
	loadFile := filepath.Join(t.TempDir(), "load.csv")
	if err := os.WriteFile(loadFile, []byte("1,one\n2,two\n3,three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var cases []fidelityCase
	for _, c := range fidelityCases(loadFile) {
		if include(c) {
			cases = append(cases, c)
		}
	}
	args := []string{"replicate", "--apply", apply, "--source", r.src.URL(), "--target", r.tgt.URL(), "--workers", "4",
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", r.start, "--heartbeat", "200ms",
		"--large-txn-piece", "65536", "--log-level", "warn", "--http", ""}

	// The first half, applied by a paraply that is then SIGKILLed while
	// the second half streams in.
	half := len(cases) / 2
	for _, c := range cases[:half] {
		r.run(t, c)
	}
	p := startParaply(t, args...)
	waitApplied(t, r.tdb, r.sourcePos(t), p.Exited, p.Logs)
	for _, c := range cases[half:] {
		r.run(t, c)
		if c.name == cases[half].name {
			time.Sleep(150 * time.Millisecond)
			p.Kill()
		}
	}
	end := r.sourcePos(t)
	if code, out := runParaply(t, nil, append(args, "--until-caught-up")...); code != 0 {
		t.Fatalf("paraply after the kill: exit %d\n%s", code, out)
	}
	r.waitNative(t, end)
	for _, c := range cases {
		db := "f_" + c.name
		native, ours := dumpDatabase(t, r.ndb, db), dumpDatabase(t, r.tdb, db)
		if native != ours {
			t.Errorf("%s: paraply's target differs from MariaDB's replica\nnative:\n%s\nparaply:\n%s", c.name, native, ours)
		}
	}
}

// TestFidelitySQLPathRefuses: what the SQL path cannot apply as MariaDB's
// replica does (a target table with triggers, a system-versioned table, a
// sequence) stops replication with an error that names the transaction,
// the table and the remedy, and nothing of it is applied.
func TestFidelitySQLPathRefuses(t *testing.T) {
	want := map[string][]string{
		"trigger":   {"`f_trigger`.`a`", "has triggers"},
		"versioned": {"`f_versioned`.`ver`", "system-versioned"},
		"sequence":  {"`f_sequence`.`", "sequence"},
	}
	for _, c := range fidelityCases("") {
		w, ok := want[c.name]
		if !ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			p := newReplPair(t, "ref")
			(&fidelityRig{sdb: p.sdb}).run(t, c)
			code, out := runParaply(t, nil, "replicate", "--apply", "sql", "--source", p.src.URL(), "--target", p.tgt.URL(),
				"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", p.start, "--until-caught-up",
				"--log-level", "warn", "--http", "")
			msg := lastLine(out)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, out)
			}
			for _, s := range append(w, "GTID 0-1-", "--apply binlog") {
				if !strings.Contains(msg, s) {
					t.Errorf("the error does not say %q: %s", s, msg)
				}
			}
			t.Log(msg)
		})
	}
}

// waitApplied waits until paraply's checkpoint on tdb covers pos, or fails
// if paraply exits first.
func waitApplied(t *testing.T, tdb *sql.DB, pos string, exited <-chan error, logs *bytes.Buffer) {
	t.Helper()
	waitUntil(t, "apply "+pos, 50*time.Millisecond, exited, logs, func() bool {
		var p string
		return tdb.QueryRow("SELECT position FROM paraply.progress WHERE id = 1").Scan(&p) == nil && gtidIn(lastGTID(pos), p)
	})
}

// waitUntil polls done every poll for up to a minute, and fails if it
// stays false or paraply exits first; what says what paraply was to do.
func waitUntil(t *testing.T, what string, poll time.Duration, exited <-chan error, logs *bytes.Buffer, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("paraply exited before it did %s: %v\n%s", what, err, logs.String())
		default:
		}
		if done() {
			return
		}
		time.Sleep(poll)
	}
	t.Fatalf("paraply did not %s in time\n%s", what, logs.String())
}

// lastGTID is the GTID of a single-domain position.
func lastGTID(pos string) string { return strings.TrimSpace(strings.Split(pos, ",")[0]) }
