package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// Tables of a server upgraded from MariaDB 5.3 to 10.0, or created while
// mysql56_temporal_format=OFF: TIME(n), DATETIME(n) and TIMESTAMP(n) with
// n > 0 in MariaDB 5.3's format, whose size the binary log does not say
// (issue 34), among other columns, and a primary key on such a column.
var oldFormatTables = []string{
	"CREATE TABLE t_time (id INT PRIMARY KEY, t1 TIME(1), v VARCHAR(20), t2 TIME(2), n INT, t3 TIME(3), b BLOB," +
		" t4 TIME(4), d DECIMAL(10,3), t5 TIME(5), t6 TIME(6), t0 TIME)",
	"CREATE TABLE t_dt (id INT PRIMARY KEY, d1 DATETIME(1), d2 DATETIME(2), v VARCHAR(10), d3 DATETIME(3), d4 DATETIME(4)," +
		" n BIGINT, d5 DATETIME(5), d6 DATETIME(6), d0 DATETIME, b BLOB)",
	"CREATE TABLE t_ts (id INT PRIMARY KEY, s1 TIMESTAMP(1) NULL, s2 TIMESTAMP(2) NULL, s3 TIMESTAMP(3) NULL, v VARCHAR(10)," +
		" s4 TIMESTAMP(4) NULL, s5 TIMESTAMP(5) NULL, s6 TIMESTAMP(6) NULL, s0 TIMESTAMP NULL, d DECIMAL(5,2))",
	"CREATE TABLE t_pk (k DATETIME(3) NOT NULL PRIMARY KEY, t TIME(2), v VARCHAR(10))",
	"CREATE TABLE t_nokey (t TIME(3), d DATETIME(2), s TIMESTAMP(4) NULL, v VARCHAR(5))",
}

// oldFormatDML changes rows of oldFormatTables: negative times, the
// extremes, zero dates, NULLs, fractions, in single statements and in
// transactions, and one transaction larger than --large-txn-piece. It
// runs with time_zone +00:00.
var oldFormatDML = []string{
	"INSERT INTO t_time VALUES (1, '12:34:56.7', 'a', '-01:02:03.04', 1, '838:59:59.999', 'blob', '-838:59:59.9999', 1.5," +
		" '00:00:00.00001', '-00:00:00.000001', '-838:59:59')," +
		" (2, '838:59:59.9', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)," +
		" (3, '-00:00:00.1', 'c', '00:00:00', 3, '-12:00:00.5', '', '100:00:00.0001', -2.25, '-99:59:59.99999', '23:59:59.999999', '00:00:00')",
	"UPDATE t_time SET t1 = '-838:59:59.9', t6 = '838:59:59.999999', t0 = '-00:00:01' WHERE id = 1",
	"BEGIN",
	"UPDATE t_time SET t3 = '01:00:00.5', v = 'two' WHERE id = 2",
	"DELETE FROM t_time WHERE id = 3",
	"INSERT INTO t_time (id, t5) VALUES (4, '-00:00:01.5')",
	"COMMIT",
	"INSERT INTO t_dt VALUES (1, '2024-02-29 23:59:59.9', '0000-00-00 00:00:00', 'x', '9999-12-31 23:59:59.999'," +
		" '1000-01-01 00:00:00.0001', 42, '2000-00-00 00:00:00.00001', '2001-02-03 04:05:06.000007', '0000-00-00 00:00:00', 'b')," +
		" (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)," +
		" (3, '2000-01-00 00:00:00.1', '2000-00-01 12:00:00.99', '', '1999-12-31 23:59:59.5', '2020-06-15 08:30:00.1234', -1," +
		" '1970-01-01 00:00:00.00001', '1000-01-01 00:00:00.000000', '2038-01-19 03:14:08', '')",
	"UPDATE t_dt SET d6 = '1970-01-01 00:00:00.000001', d0 = '1999-01-01 01:01:01' WHERE id = 1",
	"DELETE FROM t_dt WHERE id = 3",
	"INSERT INTO t_ts VALUES (1, '2038-01-19 03:14:07.9', '1970-01-01 00:00:01.01', '2001-02-03 04:05:06.789', 'v'," +
		" '2020-01-01 00:00:00.0001', '2020-01-01 00:00:00.00001', '2020-01-01 00:00:00.000001', '2000-01-01 00:00:00', 1.25)," +
		" (2, '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', NULL, NULL, NULL, NULL, '0000-00-00 00:00:00', NULL)," +
		" (3, '1999-12-31 23:59:59.5', NULL, '2010-10-10 10:10:10.101', 'x', NULL, '2010-10-10 10:10:10.10101', NULL, NULL, -1)",
	"UPDATE t_ts SET s6 = '2000-01-01 00:00:00.999999', s0 = '2000-01-01 00:00:01' WHERE id = 2",
	"DELETE FROM t_ts WHERE id = 3",
	"INSERT INTO t_pk VALUES ('2024-01-01 00:00:00.001', '10:00:00.5', 'a'), ('2024-01-01 00:00:00.002', NULL, 'b'), ('0000-00-00 00:00:00', '-01:00:00.01', 'z')",
	"UPDATE t_pk SET k = '2024-01-01 00:00:00.003' WHERE k = '2024-01-01 00:00:00.001'",
	"UPDATE t_pk SET v = 'bb', t = '-838:59:59.99' WHERE k = '2024-01-01 00:00:00.002'",
	"DELETE FROM t_pk WHERE k = '2024-01-01 00:00:00.003'",
	"INSERT INTO t_nokey VALUES ('01:02:03.456', '2020-02-02 02:02:02.02', '2020-02-02 02:02:02.0202', 'a')," +
		" ('01:02:03.456', '2020-02-02 02:02:02.02', '2020-02-02 02:02:02.0202', 'a'), ('-00:00:00.001', NULL, NULL, NULL)",
	"UPDATE t_nokey SET v = 'b' WHERE v = 'a' LIMIT 1",
	"DELETE FROM t_nokey WHERE t = '-00:00:00.001'",
	// A large transaction: the workers decode it again, piece by piece.
	"INSERT INTO t_dt (id, d3, d6, v, b) SELECT 1000 + seq, '2024-01-01 00:00:00.123' + INTERVAL seq SECOND," +
		" '1999-01-01 00:00:00.000001' + INTERVAL seq MINUTE, 'big', REPEAT('x', 50) FROM seq_1_to_3000",
}

// TestOldFormatTemporal replicates changes to tables whose temporal
// columns are in MariaDB 5.3's format on the source, with paraply (SQL
// path, default path, and onto a target whose tables are in the old
// format too) and with MariaDB's own replica, and requires every target
// to hold what the source holds.
func TestOldFormatTemporal(t *testing.T) {
	r := newFidelityRig(t, "oft")
	const db = "oldfmt"
	// Targets created by the replicated DDL get current-format columns.
	execAll(t, r.sdb, "SET GLOBAL mysql56_temporal_format=OFF", "CREATE DATABASE "+db)
	t.Cleanup(func() { _, _ = r.sdb.Exec("SET GLOBAL mysql56_temporal_format=ON") })
	runIn(t, r.sdb, db, oldFormatTables...)
	execAll(t, r.sdb, "SET GLOBAL mysql56_temporal_format=ON")
	var show string
	if err := r.sdb.QueryRow("SHOW CREATE TABLE "+db+".t_pk").Scan(new(string), &show); err != nil || !strings.Contains(show, "mariadb-5.3") {
		t.Fatalf("the source's table is not in the old format (%v):\n%s", err, show)
	}
	afterDDL := r.sourcePos(t)
	runIn(t, r.sdb, db, append([]string{"SET time_zone = '+00:00'"}, oldFormatDML...)...)
	end := r.sourcePos(t)

	// A target whose tables are in the old format too, as a copy of the
	// source's would be: paraply starts after the DDL.
	old := sandboxtest.ForTest(t, sandbox.Options{Name: "oftold", ServerID: 5})
	odb := sandboxtest.DB(t, old)
	execAll(t, odb, "SET GLOBAL mysql56_temporal_format=OFF", "CREATE DATABASE "+db)
	runIn(t, odb, db, oldFormatTables...)
	execAll(t, odb, "SET GLOBAL mysql56_temporal_format=ON")

	second := sandboxtest.ForTest(t, sandbox.Options{Name: "oftauto", ServerID: 4})
	sdb2 := sandboxtest.DB(t, second)
	for _, run := range []struct {
		name, apply, start string
		srv                *sandbox.Server
		conn               *sql.DB
	}{
		{"sql", "sql", r.start, r.tgt, r.tdb},
		{"default", "", r.start, second, sdb2},
		{"old-format target", "", afterDDL, old, odb},
	} {
		args := []string{"replicate", "--source", r.src.URL(), "--target", run.srv.URL(), "--workers", "4",
			"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", run.start, "--heartbeat", "200ms",
			"--large-txn-piece", "65536", "--log-level", "warn", "--http", "", "--until-caught-up"}
		if run.apply != "" {
			args = append(args, "--apply", run.apply)
		}
		if code, out := runParaply(t, nil, args...); code != 0 {
			t.Fatalf("%s: paraply: exit %d\n%s", run.name, code, out)
		}
		checkSame(t, run.name, dumpDatabase(t, r.sdb, db), dumpDatabase(t, run.conn, db))
	}
	// Under --rewrite-db the catalog knows the tables by their new names;
	// a table left out is not on the target, nor are its rows decoded.
	filt := sandboxtest.ForTest(t, sandbox.Options{Name: "oftfilt", ServerID: 6})
	fdb := sandboxtest.DB(t, filt)
	if code, out := runParaply(t, nil, "replicate", "--source", r.src.URL(), "--target", filt.URL(), "--start-gtid", r.start,
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--large-txn-piece", "65536", "--log-level", "warn", "--http", "",
		"--rewrite-db", db+"=renamed", "--exclude", "renamed.t_nokey", "--until-caught-up"); code != 0 {
		t.Fatalf("filtered: paraply: exit %d\n%s", code, out)
	}
	for _, table := range []string{"t_time", "t_dt", "t_ts", "t_pk"} {
		checkSame(t, "filtered "+table, queryText(t, r.sdb, "SELECT * FROM "+db+"."+table), queryText(t, fdb, "SELECT * FROM renamed."+table))
	}
	var n int
	if err := fdb.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'renamed' AND TABLE_NAME = 't_nokey'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the table left out is on the target (%d, %v)", n, err)
	}

	r.waitNative(t, end)
	checkSame(t, "MariaDB's replica", dumpDatabase(t, r.sdb, db), dumpDatabase(t, r.ndb, db))
	var rows int
	if err := r.sdb.QueryRow("SELECT COUNT(*) FROM " + db + ".t_dt").Scan(&rows); err != nil || rows != 3002 {
		t.Fatalf("the source's t_dt holds %d rows (%v), want 3002", rows, err)
	}

	// analyze follows the CREATE TABLEs in the stream for the precision.
	files, err := r.src.BinlogFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if code, out := runParaply(t, nil, append([]string{"analyze", "--json"}, files...)...); code != 0 {
		t.Fatalf("analyze: exit %d\n%s", code, lastLine(out))
	}
}

// TestOldFormatVarchar replicates a table created before MySQL 5.0.3,
// whose VARCHAR column is logged as VAR_STRING with a CHAR's metadata and
// values (MariaDB's own replica stops on its rows), onto a target whose
// table was created from the source's SHOW CREATE TABLE.
func TestOldFormatVarchar(t *testing.T) {
	for _, apply := range []string{"sql", ""} {
		t.Run("apply="+apply, func(t *testing.T) {
			// The .frm gives its columns lengths in bytes and the character
			// set the server starts with.
			latin1 := []string{"--character-set-server=latin1", "--collation-server=latin1_swedish_ci"}
			p := startReplPair(t, sandbox.Options{Name: "ofvsrc", Binlog: true, ExtraArgs: latin1}, sandbox.Options{Name: "ofvtgt", ServerID: 2})
			const db = "oldvc"
			execAll(t, p.sdb, "CREATE DATABASE "+db)
			// How MariaDB's test suite makes such a table (main/type_varchar.test).
			frm, err := os.ReadFile("/usr/share/mysql/mysql-test/std_data/vchar.frm")
			if err != nil {
				t.Fatalf("MariaDB's test suite is not installed (make deps installs mariadb-test): %v", err)
			}
			if err := os.WriteFile(filepath.Join(p.src.DataDir, db, "vchar.frm"), frm, 0o660); err != nil {
				t.Fatal(err)
			}
			runIn(t, p.sdb, db, "TRUNCATE TABLE vchar")
			var show string
			if err := p.sdb.QueryRow("SHOW CREATE TABLE "+db+".vchar").Scan(new(string), &show); err != nil || !strings.Contains(show, "/*old*/") {
				t.Fatalf("the source's table is not old (%v):\n%s", err, show)
			}
			start := sourcePosition(t, p)
			execAll(t, p.tdb, "CREATE DATABASE "+db)
			runIn(t, p.tdb, db, strings.ReplaceAll(show, "/*old*/", ""))
			runIn(t, p.sdb, db,
				"INSERT INTO vchar VALUES ('abc', 'de', 'ghi', 'jkl'), ('abc    ', 'd  ', 'ghi', 'jkl    '), (NULL, NULL, NULL, NULL),"+
					" (REPEAT('z', 30), 'xyz', 'abc', REPEAT('t', 300)), ('', '', 'def', '')",
				"UPDATE vchar SET v = 'changed  ' WHERE c = 'de'",
				"DELETE FROM vchar WHERE e = 'abc'",
				"BEGIN", "INSERT INTO vchar VALUES ('in txn', 'a', 'def', 'b')", "UPDATE vchar SET v = NULL WHERE v = ''", "COMMIT")
			args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--start-gtid", start,
				"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--log-level", "warn", "--http", "", "--until-caught-up"}
			if apply != "" {
				args = append(args, "--apply", apply)
			}
			if code, out := runParaply(t, nil, args...); code != 0 {
				t.Fatalf("paraply: exit %d\n%s", code, out)
			}
			checkSame(t, "target", dumpDatabase(t, p.sdb, db), dumpDatabase(t, p.tdb, db))
		})
	}
}

// runIn runs statements on one session of db, in database schema. The
// session is discarded after, with what its SET statements set.
func runIn(t *testing.T, db *sql.DB, schema string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn })
	for _, q := range append([]string{"USE " + schema}, stmts...) {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// checkSame fails the test if a dump of what, got, is not want, the
// source's.
func checkSame(t *testing.T, what, want, got string) {
	t.Helper()
	if got != want {
		t.Errorf("%s differs from the source\nsource:\n%s\n%s:\n%s", what, want, what, got)
	}
}
