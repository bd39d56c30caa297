package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// statementCases are the shapes a source logging MIXED or STATEMENT
// writes as statements, each reading something of its session that a
// replica must give it: the clock, AUTO_INCREMENT, LAST_INSERT_ID(),
// RAND(), user variables, temporary tables across transactions, a file
// for LOAD DATA, triggers and routines that run on the replica, and the
// unsafe ones (UUID(), SYSDATE(), LIMIT) that MIXED logs as rows.
func statementCases(loadFile string) []fidelityCase {
	return []fidelityCase{
		{name: "clock", stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, at DATETIME(6), d DATE, u BIGINT)",
			"INSERT INTO t VALUES (1, NOW(6), CURDATE(), UNIX_TIMESTAMP())",
			"SET timestamp = 1234567890.123456", "INSERT INTO t VALUES (2, NOW(6), CURDATE(), UNIX_TIMESTAMP())", "SET timestamp = DEFAULT",
			"SET time_zone = '+05:45'", "INSERT INTO t VALUES (3, NOW(6), CURDATE(), UNIX_TIMESTAMP())", "SET time_zone = DEFAULT",
			"UPDATE t SET at = NOW() + INTERVAL 1 DAY WHERE id = 1",
		}},
		{name: "auto_increment", stmts: []string{
			"CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))",
			"CREATE TABLE b (id INT AUTO_INCREMENT PRIMARY KEY, a_id INT)",
			"INSERT INTO a (v) VALUES ('x'), ('y')", "INSERT INTO b (a_id) VALUES (LAST_INSERT_ID())",
			"SET auto_increment_increment = 5, auto_increment_offset = 3", "INSERT INTO a (v) VALUES ('z'), ('w')",
			"SET auto_increment_increment = 1, auto_increment_offset = 1",
			"INSERT INTO a (v) VALUES ('q') ON DUPLICATE KEY UPDATE v = 'r'",
			"INSERT INTO b (a_id) SELECT LAST_INSERT_ID()",
			// Keyed by the rows INSERT_ID says (10, then 11 and 12), which
			// the UPDATEs after them wait for.
			"INSERT INTO a (id, v) VALUES (0, 'p')", "INSERT INTO a (id, v) VALUES (NULL, 's'), (NULL, 't')",
			"UPDATE a SET v = 'pp' WHERE id = 10", "UPDATE a SET v = 'tt' WHERE id = 12",
		}},
		// UPDATEs that keep a secondary unique key run by their rows'
		// keys; the DELETE and INSERTs that free and take its values wait.
		{name: "unique_keys", stmts: []string{
			"CREATE TABLE u (id INT PRIMARY KEY, email VARCHAR(50), n INT, UNIQUE KEY email (email))",
			"INSERT INTO u VALUES (1, 'a', 0), (2, 'b', 0)",
			"UPDATE u SET n = n + 1 WHERE id = 1", "DELETE FROM u WHERE id = 1",
			"INSERT INTO u VALUES (3, 'a', 5)", "UPDATE u SET n = n + 10 WHERE id = 3",
			"UPDATE u SET email = 'c' WHERE id = 2", "INSERT INTO u VALUES (4, 'b', 1)", "UPDATE u SET n = n * 2 WHERE id IN (3, 4)",
		}},
		// UPDATEs of a parent's other columns run by its key, which its
		// children's rows reference.
		{name: "parent_keys", stmts: []string{
			"CREATE TABLE pa (id INT PRIMARY KEY, name VARCHAR(10))",
			"CREATE TABLE ch (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES pa (id) ON DELETE CASCADE)",
			"INSERT INTO pa VALUES (1, 'a'), (2, 'b')", "INSERT INTO ch VALUES (10, 1), (11, 2)",
			"UPDATE pa SET name = 'aa' WHERE id = 1", "DELETE FROM pa WHERE id = 2", "UPDATE pa SET name = CONCAT(name, 'x') WHERE id = 1",
			"INSERT INTO ch VALUES (12, 1)", "UPDATE pa SET name = 'z' WHERE id IN (1, 2)",
		}},
		// A child whose parent's foreign key does not cascade: UPDATEs that
		// keep their references, and INSERTs naming their parents or none
		// (NULL, given or left out), run by their rows' keys (an INSERT with
		// its parent row's too), as do the parent's INSERTs, DELETEs and
		// REPLACEs; the child's DELETEs wait, and the parent's DELETE after
		// them.
		{name: "child_keys", stmts: []string{
			"CREATE TABLE pa (id INT PRIMARY KEY, name VARCHAR(10))",
			"CREATE TABLE cn (id INT PRIMARY KEY, pid INT, n INT, FOREIGN KEY (pid) REFERENCES pa (id))",
			"INSERT INTO pa VALUES (1, 'a'), (2, 'b')", "INSERT INTO cn (id, pid, n) VALUES (10, 1, 0), (11, 2, 0)",
			"UPDATE cn SET n = n + 1 WHERE id = 10", "DELETE FROM cn WHERE id = 11", "DELETE FROM pa WHERE id = 2",
			"INSERT INTO pa (id, name) VALUES (3, 'c')", "INSERT INTO cn (id, pid, n) VALUES (12, 3, 0)",
			"UPDATE pa SET name = 'cc' WHERE id = 3", "UPDATE cn SET n = n + 5 WHERE id = 12",
			"INSERT INTO cn (id, pid, n) VALUES (13, NULL, 1)", "UPDATE cn SET n = n * 2 WHERE id IN (10, 12, 13)",
			"INSERT INTO cn (id, n) VALUES (14, 2)", "UPDATE cn SET n = n + 3 WHERE id = 14", "UPDATE cn SET pid = 1 WHERE id = 14",
			"UPDATE cn SET pid = NULL, n = UUID_SHORT() % 7 WHERE id = 12", "DELETE FROM pa WHERE id = 3",
			"INSERT INTO pa (id, name) VALUES (4, 'd')", "INSERT INTO cn (id, pid, n) VALUES (15, 4, 0)",
			"REPLACE INTO pa (id, name) VALUES (5, 'e')", "REPLACE INTO pa (id, name) VALUES (5, 'f')",
			"INSERT INTO pa (id, name) VALUES (6, 'g')", "DELETE FROM pa WHERE id = 6", "INSERT INTO pa (id, name) VALUES (6, 'h')",
			"INSERT INTO cn (id, pid, n) VALUES (16, 6, 0)",
		}},
		// String keys (Laravel's sessions and cache tables): statements by
		// a plain string run by their rows' keys, folded by the column's
		// collation as row images' are; a session whose sql_mode reads
		// strings otherwise (ANSI_QUOTES), or may cut them (not strict),
		// waits.
		{name: "string_keys", stmts: []string{
			"CREATE TABLE sessions (id VARCHAR(40) PRIMARY KEY, payload TEXT, last_activity INT, KEY (last_activity)) CHARACTER SET utf8mb4",
			"CREATE TABLE cache (`key` VARCHAR(64) PRIMARY KEY, value MEDIUMTEXT, expiration INT) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
			"INSERT INTO sessions (id, payload, last_activity) VALUES ('Ab12', 'x', 1), ('cd34', 'y', 1)",
			"UPDATE sessions SET payload = IF(UUID() IS NULL, 'n', 'u'), last_activity = 2 WHERE id = 'ab12'",
			"UPDATE sessions SET payload = CONCAT(payload, '!'), last_activity = 3 WHERE id = 'AB12'",
			"INSERT INTO cache (`key`, value, expiration) VALUES ('laravel:a', 'v1', 10) ON DUPLICATE KEY UPDATE value = VALUES(value), expiration = VALUES(expiration)",
			"INSERT INTO cache (`key`, value, expiration) VALUES ('laravel:a', 'v2', 20) ON DUPLICATE KEY UPDATE value = VALUES(value), expiration = VALUES(expiration)",
			"INSERT INTO cache (`key`, value, expiration) VALUES ('Laravel:a', 'v3', 30)",
			"DELETE FROM sessions WHERE id IN ('cd34', 'zz')", "INSERT INTO sessions (id, payload, last_activity) VALUES ('cd34', 'again', 4)",
			"SET sql_mode = 'ANSI_QUOTES'", `UPDATE sessions SET last_activity = 5 WHERE id = "id"`, "SET sql_mode = DEFAULT",
			"SET sql_mode = ''", "INSERT INTO sessions (id, payload, last_activity) VALUES ('0123456789012345678901234567890123456789xyz', 'cut', 6)", "SET sql_mode = DEFAULT",
			"UPDATE sessions SET payload = 'long' WHERE id = '0123456789012345678901234567890123456789'",
		}},
		// Another unique key (users' email): an INSERT runs by its row and
		// the email it takes, after the change that freed that email (a
		// row image, by UUID()), as the collation compares them; a user
		// without one (NULL) takes none. REPLACE, ON DUPLICATE KEY UPDATE
		// and DELETE wait.
		{name: "unique_inserts", stmts: []string{
			"CREATE TABLE users (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, email VARCHAR(100), name VARCHAR(40), " +
				"UNIQUE KEY users_email_unique (email)) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
			"INSERT INTO users (email, name) VALUES ('a@x.org', 'a')", "INSERT INTO users (email, name) VALUES ('b@x.org', 'b')",
			"UPDATE users SET email = CONCAT('old-', UUID()) WHERE id = 1", "INSERT INTO users (email, name) VALUES ('A@x.org', 'c')",
			"UPDATE users SET email = IF(UUID() IS NULL, 'n@x.org', 'c@x.org') WHERE id = 2", "INSERT INTO users (email, name) VALUES ('b@x.org', 'd')",
			"INSERT INTO users (name) VALUES ('e'), ('f')", "UPDATE users SET name = 'ee' WHERE id = 5",
			"REPLACE INTO users (id, email, name) VALUES (7, 'c@x.org', 'g')",
			"INSERT INTO users (id, email, name) VALUES (8, 'b@x.org', 'h') ON DUPLICATE KEY UPDATE name = 'hh'",
			"DELETE FROM users WHERE id = 3", "INSERT INTO users (email, name) VALUES ('a@x.org', 'i')",
		}},
		// UNSIGNED keys (Laravel's BIGINT UNSIGNED AUTO_INCREMENT) run by
		// their rows' keys: an INT UNSIGNED row above 2^31, which a row
		// image without signedness decodes negative (UUID() makes MIXED log
		// it as rows; IF makes the value the same in STATEMENT), keys as the
		// literal does. A literal out of the
		// column's range, which a non-strict server clips, is a barrier.
		{name: "unsigned_keys", stmts: []string{
			"CREATE TABLE ub (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40))",
			"CREATE TABLE ui (id INT UNSIGNED PRIMARY KEY, v VARCHAR(40))",
			"INSERT INTO ub (v) VALUES ('a'), ('b')", "UPDATE ub SET v = 'aa' WHERE id = 1", "DELETE FROM ub WHERE id = 2",
			"INSERT INTO ui (id, v) VALUES (4294967290, 'x'), (3000000000, 'y')",
			"UPDATE ui SET v = IF(UUID() IS NULL, 'n', 'u') WHERE id = 4294967290", "UPDATE ui SET v = 'z' WHERE id = 4294967290",
			"DELETE FROM ui WHERE id = 3000000000", "INSERT INTO ui (id, v) VALUES (3000000000, 'again')",
			"SET sql_mode = ''", "INSERT INTO ui (id, v) VALUES (4294967296, 'clipped')", "SET sql_mode = DEFAULT",
			"UPDATE ui SET v = CONCAT(v, '!') WHERE id = 4294967295",
		}},
		{name: "user_vars", stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20) CHARACTER SET latin1, n BIGINT, f DOUBLE, d DECIMAL(20,6), u BIGINT UNSIGNED, z INT)",
			"SET @s = _latin1 'grüße', @n = -42, @f = 2.5e-3, @d = CAST(-1234.5678 AS DECIMAL(20,6)), @u = 18446744073709551615, @z = NULL",
			"INSERT INTO t VALUES (1, @s, @n, @f, @d, @u, @z)",
			"SET @k = 7", "UPDATE t SET n = n + @k WHERE id = 1",
		}},
		// User variables of character set binary (issue 41): a geometry,
		// a BLOB column's value and UNHEX's result, each read by a
		// statement the source logged as a statement.
		{name: "binary_user_vars", stmts: []string{
			"CREATE TABLE g (id INT PRIMARY KEY, g GEOMETRY NOT NULL, b BLOB, h VARBINARY(16), SPATIAL KEY (g))",
			"INSERT INTO g VALUES (1, ST_GeomFromText('POINT(1 1)'), 'one', NULL), (2, ST_GeomFromText('POINT(5 5)'), 'two', NULL), " +
				"(3, ST_GeomFromText('POINT(1.5 0.5)'), 'three', NULL)",
			"SET @g1 = ST_GeomFromText('POLYGON((0 0,0 2,2 2,2 0,0 0))')",
			"DELETE FROM g WHERE MBRWithin(g.g, @g1) AND id = 1",
			"INSERT INTO g (id, g, b) VALUES (4, @g1, 'four')",
			"SELECT b INTO @b FROM g WHERE id = 2",
			"UPDATE g SET b = CONCAT(@b, 0x00ff, @b) WHERE id = 3",
			"SET @h = UNHEX('00FF10E9')",
			"UPDATE g SET h = @h WHERE id IN (2, 4)",
		}},
		// A search of a full-text index sees only committed rows: a
		// statement that searches one must not be batched with the
		// transactions before it (MariaDB's innodb_fts_transaction).
		{name: "full_text", stmts: []string{
			"CREATE TABLE ft (id INT AUTO_INCREMENT PRIMARY KEY, a VARCHAR(100), FULLTEXT (a)) ENGINE=InnoDB",
			"INSERT INTO ft (a) VALUES ('MySQL tutorial'), ('other text')",
			"DELETE FROM ft WHERE MATCH (a) AGAINST ('+MySQL' IN BOOLEAN MODE)",
			"INSERT INTO ft (a) VALUES ('MySQL again'), ('one more')",
			"UPDATE ft SET a = 'changed' WHERE MATCH (a) AGAINST ('again')",
		}},
		{name: "rand", stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, r DOUBLE)",
			"INSERT INTO t VALUES (1, RAND()), (2, RAND())", "UPDATE t SET r = RAND() * id",
		}},
		{name: "temporary", stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
			"CREATE TEMPORARY TABLE tmp (id INT, v INT)", "INSERT INTO tmp VALUES (1, 10), (2, 20)",
			"BEGIN", "INSERT INTO t SELECT id, v FROM tmp", "COMMIT",
			"UPDATE t JOIN tmp USING (id) SET t.v = t.v + tmp.v", "DELETE FROM tmp WHERE id = 1",
			"INSERT INTO t SELECT id + 10, v FROM tmp", "DROP TEMPORARY TABLE tmp",
		}},
		{name: "load_data", stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
			"LOAD DATA INFILE '" + loadFile + "' INTO TABLE t FIELDS TERMINATED BY ','",
			"LOAD DATA INFILE '" + loadFile + "' REPLACE INTO TABLE t FIELDS TERMINATED BY ',' (id, @v) SET v = UPPER(@v)",
			"LOAD DATA INFILE '" + loadFile + "' IGNORE INTO TABLE t FIELDS TERMINATED BY ',' (@i, v) SET id = @i + 100",
		}},
		{name: "routines", stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(20), at DATETIME)",
			"CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO audit (what, at) VALUES (CONCAT('ins ', NEW.id), NOW())",
			"CREATE PROCEDURE bump(n INT) BEGIN UPDATE t SET v = v + n; INSERT INTO audit (what, at) VALUES ('bump', NOW()); END",
			"INSERT INTO t VALUES (1, 1), (2, 2)", "CALL bump(5)",
		}},
		{name: "shapes", stmts: []string{
			"CREATE TABLE p (id INT PRIMARY KEY, n INT, u CHAR(36))", "CREATE TABLE q (id INT PRIMARY KEY, pid INT, n INT)",
			"INSERT INTO p SELECT seq, seq, NULL FROM seq_1_to_20", "INSERT INTO q SELECT seq, seq % 20 + 1, seq FROM seq_1_to_40",
			"UPDATE p JOIN q ON q.pid = p.id SET p.n = p.n + q.n WHERE q.id < 10",
			"DELETE p, q FROM p JOIN q ON q.pid = p.id WHERE p.id IN (2, 3)",
			"UPDATE p SET n = 0 ORDER BY id DESC LIMIT 3", "DELETE FROM q ORDER BY id LIMIT 2",
			"UPDATE p SET u = UUID() WHERE id = 1", "UPDATE p SET n = UNIX_TIMESTAMP(SYSDATE()) WHERE id = 4",
			"CREATE TABLE c SELECT id, n * 2 AS n2 FROM p WHERE id < 10",
			"INSERT INTO p VALUES (1, 100, NULL) ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
			"REPLACE INTO p VALUES (5, -5, NULL)",
		}},
	}
}

// TestStatementFormatAgainstNativeReplica runs the statement cases and
// sysbench write_only and insert loads on a source logging MIXED and one logging
// STATEMENT, replicated by MariaDB's own replica and by paraply (SIGKILLed
// once in the middle), and requires paraply's target to equal the source
// wherever the native replica's does.
func TestStatementFormatAgainstNativeReplica(t *testing.T) {
	for _, format := range []string{"MIXED", "STATEMENT"} {
		t.Run(format, func(t *testing.T) { testStatementFormat(t, format) })
	}
}

func testStatementFormat(t *testing.T, format string) {
	secure := t.TempDir()
	loadFile := filepath.Join(secure, "load.csv")
	if err := os.WriteFile(loadFile, []byte("1,one\n2,two\n3,three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newQuietRig(t, "st"+strings.ToLower(format[:3]), sandbox.Options{
		// MariaDB's default row metadata, NO_LOG: row images say nothing of
		// signedness (see the unsigned_keys case).
		ExtraArgs: []string{"--binlog-format=" + format, "--binlog-row-metadata=NO_LOG", "--secure-file-priv=" + secure, "--log-bin-trust-function-creators=1"}})
	cases := statementCases(loadFile)
	args := []string{"replicate", "--source", r.src.URL(), "--target", r.tgt.URL(), "--workers", "4",
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", r.start, "--heartbeat", "200ms",
		"--log-level", "warn", "--http", ""}
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
	execAll(t, r.sdb, "CREATE DATABASE sbtest")
	if out, err := r.src.Sysbench(t.Context(), "oltp_write_only", "--tables=2", "--table-size=200", "--events=300", "--threads=4", "--db-ps-mode=disable", "prepare").CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	for _, script := range []string{"oltp_write_only", "oltp_insert"} { // oltp_insert: INSERT ... VALUES (0, ...), AUTO_INCREMENT
		if out, err := r.src.Sysbench(t.Context(), script, "--tables=2", "--table-size=200", "--events=300", "--threads=4", "--db-ps-mode=disable", "run").CombinedOutput(); err != nil {
			t.Fatalf("sysbench run %s: %v\n%s", script, err, out)
		}
	}
	end := r.sourcePos(t)
	if code, out := runParaply(t, nil, append(args, "--until-caught-up")...); code != 0 {
		t.Fatalf("paraply after the kill: exit %d\n%s", code, out)
	}
	r.waitNative(t, end)
	dbs := []string{"sbtest"}
	for _, c := range cases {
		dbs = append(dbs, "f_"+c.name)
	}
	for _, db := range dbs {
		source, native, ours := dumpDatabase(t, r.sdb, db), dumpDatabase(t, r.ndb, db), dumpDatabase(t, r.tdb, db)
		switch {
		case ours == source:
		case native != source:
			t.Logf("%s: MariaDB's replica differs from the source too", db)
		default:
			t.Errorf("%s: paraply's target differs from the source, MariaDB's replica's does not\nsource:\n%s\nparaply:\n%s", db, abbreviate(source), abbreviate(ours))
		}
	}
}

func abbreviate(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "..."
	}
	return s
}

// TestTransactionPreciseVersioning: MariaDB logs the DML of a
// transaction-precise system-versioned table (ROW START and ROW END as
// BIGINT UNSIGNED transaction ids) as statements even with
// binlog_format=ROW. paraply applies them as MariaDB's replica does: the
// same current and history rows (their transaction ids are each server's
// own, so the comparison leaves them out).
func TestTransactionPreciseVersioning(t *testing.T) {
	r := newFidelityRig(t, "trxver")
	execAll(t, r.sdb, "CREATE DATABASE v",
		"CREATE TABLE v.t1 (id INT PRIMARY KEY, x INT, s BIGINT UNSIGNED AS ROW START INVISIBLE, e BIGINT UNSIGNED AS ROW END INVISIBLE, PERIOD FOR SYSTEM_TIME (s, e)) WITH SYSTEM VERSIONING",
		"INSERT INTO v.t1 (id, x) VALUES (1, 1), (2, 2)", "UPDATE v.t1 SET x = x + 10", "DELETE FROM v.t1 WHERE id = 2",
		"BEGIN", "UPDATE v.t1 SET x = 100 WHERE id = 1", "INSERT INTO v.t1 (id, x) VALUES (3, 3)", "COMMIT")
	source, _, ours := r.catchUpAndQuery(t, "SELECT id, x, e = 18446744073709551615 AS current FROM v.t1 FOR SYSTEM_TIME ALL")
	if ours != source {
		t.Errorf("paraply's target differs from the source\nsource:\n%sparaply:\n%s", source, ours)
	}
}
