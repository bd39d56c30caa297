package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// mtrRig is the source the test files run on, MariaDB's own replica of it
// (the oracle) and the target paraply replicates it to, each started with
// the options mysql-test-run gives its servers, so that the files behave
// as under mtr and a replica runs replicated DDL with the source's
// defaults. Only the source exists in discovery mode.
type mtrRig struct {
	src, native, tgt *sandbox.Server
	// The harness's own pools: nothing they do is binlogged
	// (sql_log_bin=0), and a read that waits for a lock the test holds
	// gives up after two seconds.
	sdb, ndb, tdb *sql.DB
	format        string // the source's binlog_format
	replicas      bool   // false in discovery mode: the source alone
	vardir        string // MYSQLTEST_VARDIR
	relayDirs     string // a fresh relay directory per paraply start goes here
	relayCount    int
	paraply       *mtrParaply // the running paraply, nil between files
	// What the servers started with, which reset restores or checks:
	// the accounts (others are dropped), the source's global variables
	// (changed ones are set back) and the definitions of its system
	// tables (a file that changed one and failed before it changed it
	// back leaves servers that only new ones replace).
	users   map[string]bool
	globals map[string]string
	system  string
}

// mtrServerArgs are the options of include/default_mysqld.cnf that
// change what statements do (not only how fast they run), for all three
// servers; files is secure_file_priv.
func mtrServerArgs(files string) []string {
	args := []string{
		"--character-set-server=latin1", "--collation-server=latin1_swedish_ci",
		"--default-storage-engine=myisam",
		"--local-infile", "--secure-file-priv=" + files,
		"--log-bin-trust-function-creators=1",
		"--max-heap-table-size=1M", "--key-buffer-size=1M", "--sort-buffer-size=256K",
		"--use-stat-tables=preferably", "--histogram-type=json_hb",
		"--binlog-direct-non-transactional-updates",
		"--connect-timeout=60",
	}
	for _, p := range mtrPlugins {
		args = append(args, "--plugin-load-add="+p.lib)
	}
	return args
}

// mtrPlugins are the plugins every server of the rig loads, and the
// variable mysql-test-run names each by (tests and suite.opt files use
// it; the runner sets it). suite/versioning needs test_versioning (its
// tests skip without $TEST_VERSIONING_SO), and plugin/type_mysql_timestamp
// its type; the engines are plugins in Debian's build, and tests that use
// them skip without them.
var mtrPlugins = []struct{ env, lib string }{
	{"TEST_VERSIONING_SO", "test_versioning.so"}, {"TYPE_MYSQL_TIMESTAMP_SO", "type_mysql_timestamp.so"},
	{"HA_ARCHIVE_SO", "ha_archive.so"}, {"HA_BLACKHOLE_SO", "ha_blackhole.so"},
}

// mtrLoadsPlugin reports whether the rig loads the plugin named as a
// suite.opt names it: $X_SO.
func mtrLoadsPlugin(ref string) bool {
	return slices.ContainsFunc(mtrPlugins, func(p struct{ env, lib string }) bool { return "$"+p.env == ref })
}

// newMTRRig starts the servers (only the source when replicas is false)
// and the directories mariadb-test uses. format is the source's
// binlog_format.
func newMTRRig(t *testing.T, format string, replicas bool) *mtrRig {
	t.Helper()
	// The servers' directories go into MYSQLTEST_VARDIR, which is also
	// secure_file_priv, as under mtr: tests write files relative to the
	// datadir (SELECT ... INTO OUTFILE 't1.txt', then --remove_file,
	// which must be under MYSQLTEST_VARDIR). It is kept when the test
	// fails.
	vardir, err := os.MkdirTemp("", "paraply-mtr-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("keeping %s", vardir)
			return
		}
		_ = os.RemoveAll(vardir)
	})
	r := &mtrRig{vardir: vardir, relayDirs: filepath.Join(vardir, "relay")}
	for _, d := range []string{"tmp", "log", "slave-load", "relay"} {
		if err := os.MkdirAll(filepath.Join(r.vardir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Tests read $MYSQLTEST_VARDIR/std_data, inside secure_file_priv,
	// so it is a copy rather than a link.
	if out, err := exec.Command("cp", "-r", filepath.Join(mtrDir, "std_data"), r.vardir).CombinedOutput(); err != nil {
		t.Fatalf("copy std_data: %v\n%s", err, out)
	}
	r.format, r.replicas = format, replicas
	r.start(t)
	if replicas {
		t.Cleanup(func() { r.stopParaply() })
	}
	return r
}

// start starts the servers and records what they start with.
func (r *mtrRig) start(t *testing.T) {
	t.Helper()
	args := mtrServerArgs(r.vardir)
	src := append(append([]string(nil), args...), "--binlog-format="+r.format)
	r.src = sandboxtest.ForTest(t, sandbox.Options{Name: "mtrsrc", BaseDir: r.vardir, Binlog: true, ExtraArgs: src})
	r.sdb = mtrPool(t, r.src)
	servers := []*sql.DB{r.sdb}
	if r.replicas {
		nat := append(append([]string(nil), args...), "--slave-parallel-threads=4", "--slave-parallel-mode=optimistic",
			"--slave-load-tmpdir="+filepath.Join(r.vardir, "slave-load"))
		r.native = sandboxtest.ForTest(t, sandbox.Options{Name: "mtrnat", BaseDir: r.vardir, ServerID: 2, ExtraArgs: nat})
		r.tgt = sandboxtest.ForTest(t, sandbox.Options{Name: "mtrtgt", BaseDir: r.vardir, ServerID: 3, ExtraArgs: args})
		r.ndb, r.tdb = mtrPool(t, r.native), mtrPool(t, r.tgt)
		servers = append(servers, r.ndb, r.tdb)
	}
	tz, err := os.ReadFile("/usr/share/mysql/mysql_test_data_timezone.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range servers {
		// The time zones mtr loads (MET, Japan, ...), on every server so
		// that replicated statements find them too.
		execAll(t, db, "USE mysql", mtrStripComments(string(tz)))
	}
	ctx := t.Context()
	r.users = map[string]bool{}
	rows, err := mtrRows(ctx, r.sdb, "SELECT CONCAT(QUOTE(User), '@', QUOTE(Host)) FROM mysql.global_priv")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rows {
		r.users[u[0]] = true
	}
	if r.globals, err = mtrGlobals(ctx, r.sdb); err != nil {
		t.Fatal(err)
	}
	if r.system, err = mtrSystemTables(ctx, r.sdb); err != nil {
		t.Fatal(err)
	}
	// A first GTID, so that the source's position is never empty.
	execAll(t, r.sdb, "SET sql_log_bin = 1", "CREATE DATABASE mtr_warmup", "DROP DATABASE mtr_warmup", "SET sql_log_bin = 0")
	if r.replicas {
		execAll(t, r.ndb, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", r.src.Port))
	}
}

// rebuild replaces the servers with new ones.
func (r *mtrRig) rebuild(t *testing.T) {
	t.Helper()
	r.stopParaply()
	for _, s := range r.servers() {
		_ = s.db.Close()
		if err := s.srv.Remove(); err != nil {
			t.Fatal(err)
		}
	}
	r.start(t)
}

// mtrGlobals reads the global variables a file can set.
func mtrGlobals(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := mtrRows(ctx, db, "SELECT VARIABLE_NAME, GLOBAL_VALUE, VARIABLE_TYPE FROM information_schema.SYSTEM_VARIABLES "+
		"WHERE READ_ONLY = 'NO' AND GLOBAL_VALUE IS NOT NULL AND VARIABLE_NAME NOT LIKE 'GTID%'")
	if err != nil {
		return nil, err
	}
	g := map[string]string{}
	for _, row := range rows {
		v := "'" + strings.ReplaceAll(strings.ReplaceAll(row[1], `\`, `\\`), "'", "''") + "'"
		if strings.Contains(row[2], "INT") || row[2] == "DOUBLE" {
			v = row[1]
		}
		g[row[0]] = v
	}
	return g, nil
}

// mtrSystemTables is the definitions of the source's system tables.
func mtrSystemTables(ctx context.Context, db *sql.DB) (string, error) {
	tables, err := mtrRows(ctx, db, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql' AND TABLE_TYPE = 'BASE TABLE' ORDER BY 1")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, tb := range tables {
		def, err := mtrRow(ctx, db, "SHOW CREATE TABLE mysql."+quoteName(tb[0]))
		if err != nil {
			return "", err
		}
		b.WriteString(def[1] + "\n")
	}
	return b.String(), nil
}

// mtrPool opens the harness's pool on s: one connection, so that the
// session settings of execAll's USE statements stay put.
func mtrPool(t *testing.T, s *sandbox.Server) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", s.DSN("")+"&sql_log_bin=0&lock_wait_timeout=2&innodb_lock_wait_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// mtrStripComments drops the "--" comment lines of an SQL script.
func mtrStripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// mtrServer is one of the rig's servers with the harness's pool on it.
type mtrServer struct {
	srv *sandbox.Server
	db  *sql.DB
}

// servers lists the rig's servers, the source first.
func (r *mtrRig) servers() []mtrServer {
	list := []mtrServer{{r.src, r.sdb}}
	if r.native != nil {
		list = append(list, mtrServer{r.native, r.ndb}, mtrServer{r.tgt, r.tdb})
	}
	return list
}

// reset brings the rig to a clean, equal state before a file: replication
// stopped, every database the tests may have left dropped and the
// accounts they created removed on all servers (none of it binlogged),
// test and mtr created again, the source's global variables as they
// started, and both replicas started at the source's current position.
// A server that is gone (a test shut it down or crashed it) is started
// again; servers whose system tables a file changed are replaced.
func (r *mtrRig) reset(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	r.stopParaply()
	if r.native != nil {
		// Errors are ignored: the replica may be stopped already.
		_, _ = r.ndb.ExecContext(ctx, "STOP SLAVE")
		_, _ = r.ndb.ExecContext(ctx, "RESET SLAVE")
	}
	for _, s := range r.servers() {
		if err := s.db.PingContext(ctx); err != nil {
			if err := s.srv.Restart(ctx); err != nil {
				t.Fatalf("%s is gone and does not start again: %v", s.srv.Name, err)
			}
		}
	}
	if system, err := mtrSystemTables(ctx, r.sdb); err != nil || system != r.system {
		t.Logf("the last file changed the system tables (%v): new servers", err)
		r.rebuild(t)
	}
	for _, s := range r.servers() {
		if err := r.clean(ctx, s.srv, s.db); err != nil {
			t.Fatalf("cleaning %s: %v", s.srv.Name, err)
		}
	}
	globals, err := mtrGlobals(ctx, r.sdb)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range globals {
		if was, ok := r.globals[name]; ok && was != v {
			// Some cannot be set back (a plugin's, read-only after
			// start); the next file runs with them as they are.
			_, _ = r.sdb.ExecContext(ctx, "SET GLOBAL "+name+" = "+was)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(r.vardir, "tmp"))
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(r.vardir, "tmp", e.Name()))
	}
	if r.native == nil {
		return
	}
	pos, err := mtrSourcePos(ctx, r.sdb)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SET GLOBAL gtid_slave_pos = '" + pos + "'",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", r.src.Port),
		"START SLAVE",
	} {
		if _, err := r.ndb.ExecContext(ctx, q); err != nil {
			t.Fatalf("native replica: %s: %v", q, err)
		}
	}
	if err := r.startParaply(pos); err != nil {
		t.Fatal(err)
	}
}

// clean drops what the tests may have left on one server and creates
// test and mtr, as mysql-test-run's bootstrap does.
func (r *mtrRig) clean(ctx context.Context, srv *sandbox.Server, db *sql.DB) error {
	// What holds locks on the tables to drop: sessions of a file that
	// was stopped, still running a statement, and XA transactions a file
	// left prepared (they outlive their session, on the source and on
	// the native replica that applied the XA PREPARE).
	conns, err := mtrRows(ctx, db, "SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() "+
		"AND USER NOT IN ('system user', 'event_scheduler') AND COMMAND NOT IN ('Daemon', 'Binlog Dump')")
	if err != nil {
		return err
	}
	for _, c := range conns {
		_, _ = db.ExecContext(ctx, "KILL "+c[0])
	}
	xas, err := mtrRows(ctx, db, "XA RECOVER FORMAT='SQL'")
	if err != nil {
		return err
	}
	for _, x := range xas {
		if _, err := db.ExecContext(ctx, "XA ROLLBACK "+x[3]); err != nil {
			return fmt.Errorf("XA ROLLBACK %s: %w", x[3], err)
		}
	}
	rows, err := mtrRows(ctx, db, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN "+
		"('mysql', 'information_schema', 'performance_schema', 'sys')")
	if err != nil {
		return err
	}
	for _, s := range rows {
		drop := "DROP DATABASE IF EXISTS " + quoteName(s[0])
		_, err := db.ExecContext(ctx, drop)
		if err != nil && strings.Contains(err.Error(), "errno: 39") {
			// Files a test copied into the database's directory are
			// left after the tables are dropped, and keep its
			// directory from being removed.
			_ = os.RemoveAll(filepath.Join(srv.DataDir, s[0]))
			_, err = db.ExecContext(ctx, drop)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", drop, err)
		}
	}
	var stmts []string
	users, err := mtrRows(ctx, db, "SELECT CONCAT(QUOTE(User), '@', QUOTE(Host)), Host = '' FROM mysql.global_priv")
	if err != nil {
		return err
	}
	for _, u := range users {
		if !r.users[u[0]] {
			if u[1] == "1" {
				stmts = append(stmts, "DROP ROLE IF EXISTS "+strings.TrimSuffix(u[0], "@''"))
			}
			stmts = append(stmts, "DROP USER IF EXISTS "+u[0])
		}
	}
	stmts = append(stmts,
		"CREATE DATABASE test CHARACTER SET latin1 COLLATE latin1_swedish_ci",
		"CREATE DATABASE mtr CHARACTER SET latin1",
		// Tests call mtr.add_suppression() to tell mtr which warnings
		// in the error log to ignore; nothing reads that log here.
		"CREATE PROCEDURE mtr.add_suppression(pattern VARCHAR(255)) BEGIN END",
		"USE test")
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// mtrSourcePos is the source's @@gtid_binlog_pos.
func mtrSourcePos(ctx context.Context, db *sql.DB) (string, error) {
	var pos string
	err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&pos)
	return pos, err
}
