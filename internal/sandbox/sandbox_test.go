package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain stops leftover servers on SIGINT/SIGTERM and fails the run if a
// test left a mariadbd child running, or a goroutine (a process's waiter,
// the signal handler) other than the fork thread, which lives as long as
// the process.
func TestMain(m *testing.M) {
	uninstall := HandleSignals()
	code := m.Run()
	uninstall()
	if leaked := childMariadbds(); len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "sandbox tests left mariadbd running: pids %v\n", leaked)
		code = 1
	}
	if err := StopAll(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/paraply/paraply/internal/sandbox.forkLoop")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// childMariadbds returns the PIDs of this process's mariadbd children that
// have not exited.
func childMariadbds() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		state, ppid, ok := procStat(pid)
		if ok && ppid == os.Getpid() && state != 'Z' && strings.TrimSpace(string(comm)) == "mariadbd" {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestServerArgs(t *testing.T) {
	l := newLayout("/tmp/paraply-x-1")
	o := Options{Name: "x", ExtraArgs: []string{"--slave-parallel-threads=4"}}.withDefaults()

	args := serverArgs(o, l, 4000, true)
	if args[0] != "--no-defaults" {
		t.Errorf("first argument = %q, want --no-defaults", args[0])
	}
	if last := args[len(args)-1]; last != "--slave-parallel-threads=4" {
		t.Errorf("last argument = %q, want the extra argument", last)
	}
	for _, want := range []string{
		"--port=4000", "--bind-address=127.0.0.1", "--user=root", "--skip-log-bin",
		"--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0", "--innodb-doublewrite=0",
		"--server-id=1", "--gtid-domain-id=0", "--innodb-buffer-pool-size=64M",
		"--datadir=/tmp/paraply-x-1/data", "--socket=/tmp/paraply-x-1/mysqld.sock",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("non-durable, no binlog: missing %s in %q", want, args)
		}
	}

	o.Binlog, o.Durable, o.ServerID, o.GTIDDomain = true, true, 7, 3
	args = serverArgs(o, l, 4000, false)
	for _, want := range []string{
		"--log-bin=/tmp/paraply-x-1/binlog/mariadb-bin", "--binlog-format=ROW",
		"--binlog-row-image=FULL", "--binlog-row-metadata=FULL", "--log-slave-updates",
		"--innodb-flush-log-at-trx-commit=1", "--sync-binlog=1", "--server-id=7", "--gtid-domain-id=3",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("durable, binlog: missing %s in %q", want, args)
		}
	}
	for _, unwanted := range []string{"--user=root", "--skip-log-bin", "--innodb-doublewrite=0"} {
		if slices.Contains(args, unwanted) {
			t.Errorf("durable, binlog, not root: unexpected %s", unwanted)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{Name: "a/b"},
		{Name: strings.Repeat("n", 33)},
		{BufferPoolMB: 512},
		{Port: 70000},
		{BaseDir: "/" + strings.Repeat("d", 100)},
	} {
		if err := o.withDefaults().validate(); err == nil {
			t.Errorf("validate(%+v) = nil, want an error", o)
		}
	}
	if err := (Options{}).withDefaults().validate(); err != nil {
		t.Errorf("validate(defaults) = %v", err)
	}
}

func TestBinlogDurableServer(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	s := forTest(t, Options{Name: "source", Binlog: true, Durable: true, ServerID: 7, GTIDDomain: 3})
	t.Logf("Start took %v (port %d, dir %s)", time.Since(begin).Round(time.Millisecond), s.Port, s.Dir)

	got := globals(t, s, "log_bin", "binlog_format", "binlog_row_image", "binlog_row_metadata",
		"log_slave_updates", "gtid_domain_id", "server_id", "innodb_flush_log_at_trx_commit",
		"sync_binlog", "port", "bind_address", "character_set_server", "gtid_strict_mode")
	want := map[string]string{
		"log_bin": "1", "binlog_format": "ROW", "binlog_row_image": "FULL", "binlog_row_metadata": "FULL",
		"log_slave_updates": "1", "gtid_domain_id": "3", "server_id": "7", "innodb_flush_log_at_trx_commit": "1",
		"sync_binlog": "1", "port": strconv.Itoa(s.Port), "bind_address": "127.0.0.1",
		"character_set_server": "utf8mb4", "gtid_strict_mode": "1",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("@@%s = %q, want %q", name, got[name], w)
		}
	}

	files := binlogFiles(t, s)
	if len(files) == 0 {
		t.Fatal("BinlogFiles returned no files")
	}
	for _, f := range files {
		if filepath.Dir(f) != s.BinlogDir {
			t.Errorf("binlog file %s is not in %s", f, s.BinlogDir)
		}
	}
	last := files[len(files)-1]
	before := fileSize(t, last)

	mustExec(t, s, "CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(100))",
		"INSERT INTO d.t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
	if after := fileSize(t, last); after <= before {
		t.Errorf("binlog %s did not grow: %d bytes before the writes, %d after", last, before, after)
	}

	mustExec(t, s, "FLUSH BINARY LOGS")
	rotated := binlogFiles(t, s)
	if len(rotated) != len(files)+1 || !slices.Equal(rotated[:len(files)], files) {
		t.Errorf("after FLUSH BINARY LOGS: %q, want %q plus one", rotated, files)
	}
	for _, f := range rotated {
		fileSize(t, f) // exists
	}
}

func TestKillRestartKeepsCommittedData(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := forTest(t, Options{Name: "crash", Binlog: true, Durable: true})
	mustExec(t, s, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)")
	for i := range 50 {
		mustExec(t, s, fmt.Sprintf("INSERT INTO d.t VALUES (%d)", i))
	}

	pid, port := s.PID(), s.Port
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if processExists(pid) {
		t.Errorf("pid %d still exists after Kill", pid)
	}
	if err := s.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}
	if s.Running() || s.PID() != 0 {
		t.Errorf("after Kill: Running() = %v, PID() = %d", s.Running(), s.PID())
	}

	begin := time.Now()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("Restart after Kill (crash recovery) took %v", time.Since(begin).Round(time.Millisecond))
	if s.Port != port || s.PID() == pid || s.PID() == 0 {
		t.Errorf("after Restart: port %d (was %d), pid %d (was %d)", s.Port, port, s.PID(), pid)
	}
	if n := count(t, s, "SELECT COUNT(*) FROM d.t"); n != 50 {
		t.Errorf("after Kill and Restart: %d rows, want 50", n)
	}
}

func TestStopReleasesProcessAndPort(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := forTest(t, Options{Name: "stop", Binlog: true})
	mustExec(t, s, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)")
	pid := s.PID()
	if _, err := os.Stat(s.layout.ownerPID); err != nil {
		t.Errorf("sandbox.pid while running: %v", err)
	}

	begin := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop took %v", time.Since(begin).Round(time.Millisecond))
	if processExists(pid) {
		t.Errorf("pid %d still exists after Stop", pid)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
	if err != nil {
		t.Errorf("port %d not free after Stop: %v", s.Port, err)
	} else {
		l.Close()
	}
	if _, err := os.Stat(s.layout.ownerPID); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sandbox.pid after Stop: %v, want it removed", err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := s.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("Exec on a stopped server succeeded")
	}

	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "SELECT COUNT(*) FROM d.t"); n != 1 {
		t.Errorf("after Stop and Restart: %d rows, want 1", n)
	}
}

// TestRelease: after a failed test the server is stopped and its directory
// kept and named in the log, with the end of error.log; after a passed test
// it is removed.
func TestRelease(t *testing.T) {
	t.Parallel()
	for _, failed := range []bool{true, false} {
		s, err := Start(t.Context(), Options{Name: "release", BaseDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		pid := s.PID()
		var logged []string
		err = s.Release(failed, func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) })
		if err != nil {
			t.Errorf("Release(failed=%v): %v", failed, err)
		}
		if processExists(pid) {
			t.Errorf("Release(failed=%v): pid %d still exists", failed, pid)
		}
		_, statErr := os.Stat(s.Dir)
		switch {
		case failed && (statErr != nil || len(logged) != 1 || !strings.Contains(logged[0], s.Dir) || !strings.Contains(logged[0], "ready for connections")):
			t.Errorf("Release after a failure: directory %v, logged %q; want the directory kept, named, and error.log quoted", statErr, logged)
		case !failed && (!errors.Is(statErr, os.ErrNotExist) || len(logged) != 0):
			t.Errorf("Release after a pass: directory %v, logged %q; want it removed, nothing logged", statErr, logged)
		}
	}
}

func TestTwoServersAtOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	type result struct {
		s   *Server
		err error
	}
	results := make(chan result, 2)
	for _, name := range []string{"one", "two"} {
		go func() {
			s, err := Start(ctx, Options{Name: name})
			results <- result{s, err}
		}()
	}
	var servers []*Server
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		servers = append(servers, r.s)
		t.Cleanup(func() {
			if err := r.s.Remove(); err != nil {
				t.Error(err)
			}
		})
	}
	if len(servers) != 2 {
		t.FailNow()
	}
	a, b := servers[0], servers[1]
	if a.Port == b.Port || a.Dir == b.Dir {
		t.Errorf("servers share port or dir: %d %s, %d %s", a.Port, a.Dir, b.Port, b.Dir)
	}
	for _, s := range servers {
		if got := globals(t, s, "port")["port"]; got != strconv.Itoa(s.Port) {
			t.Errorf("%s: @@port = %s, want %d", s.Name, got, s.Port)
		}
	}
}

func TestNoBinlog(t *testing.T) {
	t.Parallel()
	s := forTest(t, Options{Name: "nobinlog"})
	got := globals(t, s, "log_bin", "innodb_flush_log_at_trx_commit", "sync_binlog", "innodb_doublewrite", "innodb_buffer_pool_size")
	want := map[string]string{"log_bin": "0", "innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0",
		"innodb_doublewrite": "0", "innodb_buffer_pool_size": strconv.Itoa(64 << 20)}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("@@%s = %q, want %q", name, got[name], w)
		}
	}
	if _, err := s.BinlogFiles(t.Context()); !errors.Is(err, ErrBinlogDisabled) {
		t.Errorf("BinlogFiles = %v, want ErrBinlogDisabled", err)
	}
	// The template must not depend on the host it was built on.
	if n := count(t, s, "SELECT COUNT(*) FROM mysql.global_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1')"); n != 0 {
		t.Errorf("%d accounts for other hosts, want none (root@<hostname> from mariadb-install-db?)", n)
	}
}

func TestClientSysbenchAndDSN(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := forTest(t, Options{Name: "client"})

	out, err := s.Client(ctx, "-N", "-e", "SELECT @@port, @@character_set_client").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb client: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), fmt.Sprintf("%d\tutf8mb4", s.Port); got != want {
		t.Errorf("mariadb client printed %q, want %q", got, want)
	}

	if err := s.CreateDatabase(ctx, "sbtest"); err != nil {
		t.Fatal(err)
	}
	out, err = s.Sysbench(ctx, "oltp_write_only", "--tables=1", "--table-size=100", "prepare").CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	if n := count(t, s, "SELECT COUNT(*) FROM sbtest.sbtest1"); n != 100 {
		t.Errorf("sysbench prepared %d rows, want 100", n)
	}

	wantDSN := fmt.Sprintf("root@tcp(127.0.0.1:%d)/sbtest?", s.Port)
	if dsn := s.DSN("sbtest"); !strings.HasPrefix(dsn, wantDSN) || !strings.Contains(dsn, "multiStatements=true") {
		t.Errorf("DSN = %q, want prefix %q and multiStatements=true", dsn, wantDSN)
	}
	if got, want := s.URL(), fmt.Sprintf("mysql://root@127.0.0.1:%d", s.Port); got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	// Several statements in one Exec (multiStatements=true).
	mustExec(t, s, "CREATE TABLE sbtest.m (id INT); INSERT INTO sbtest.m VALUES (1), (2)")
	if n := count(t, s, "SELECT COUNT(*) FROM sbtest.m"); n != 2 {
		t.Errorf("multi-statement Exec inserted %d rows, want 2", n)
	}
}

func TestStartFailureQuotesErrorLog(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	s, err := Start(t.Context(), Options{Name: "bad", BaseDir: base, ExtraArgs: []string{"--no-such-option"}})
	if err == nil {
		s.Remove()
		t.Fatal("Start with an unknown option succeeded")
	}
	for _, want := range []string{"sandbox bad", base, "exited during startup", "no-such-option"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

func TestPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	s, err := Start(t.Context(), Options{Name: "taken", BaseDir: t.TempDir(), Port: port})
	if err == nil {
		s.Remove()
		t.Fatalf("Start on port %d, which is taken, succeeded", port)
	}
	if !errors.Is(err, errPortInUse) {
		t.Errorf("Start on a taken port: %v, want errPortInUse", err)
	}
}

// TestTemplateBuild builds templates the way concurrent test processes
// would: several builders race for the rename, and a damaged template is
// rebuilt.
func TestTemplateBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mariadb-install-db three times")
	}
	t.Parallel()
	parent := t.TempDir()
	dirs := make(chan string, 2)
	for range 2 {
		go func() {
			dir, err := findOrBuildTemplate(t.Context(), parent)
			if err != nil {
				t.Error(err)
			}
			dirs <- dir
		}()
	}
	a, b := <-dirs, <-dirs
	if a != b || !templateComplete(a) {
		t.Fatalf("concurrent builds returned %q and %q (complete: %v)", a, b, templateComplete(a))
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("after concurrent builds %s holds %d entries, want only the template", parent, len(entries))
	}
	if _, err := os.Stat(filepath.Join(a, "data", "sys")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("template has a sys schema (%v), want it dropped", err)
	}

	if err := os.Remove(filepath.Join(a, "data", "ibdata1")); err != nil {
		t.Fatal(err)
	}
	again, err := findOrBuildTemplate(t.Context(), parent)
	if err != nil || again != a || !templateComplete(again) {
		t.Fatalf("rebuild of a damaged template = %q, %v (complete: %v)", again, err, templateComplete(again))
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("after the rebuild %s holds %d entries, want only the template", parent, len(entries))
	}
}

func TestReapStale(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	s := forTest(t, Options{Name: "stale", BaseDir: base})
	pid := s.PID()

	reaped, err := ReapStale(base)
	if err != nil || len(reaped) != 0 {
		t.Fatalf("ReapStale with the owner alive = %q, %v; want nothing", reaped, err)
	}
	if !s.Running() {
		t.Fatal("ReapStale killed a server whose owner is alive")
	}

	// Pretend the server belongs to a process that has died (PID 0 is never
	// a parent).
	if err := os.WriteFile(s.layout.ownerPID, fmt.Appendf(nil, "%d 0\n", pid), 0o644); err != nil {
		t.Fatal(err)
	}
	reaped, err = ReapStale(base)
	if err != nil || !slices.Equal(reaped, []string{s.Dir}) {
		t.Fatalf("ReapStale with a dead owner = %q, %v; want [%s]", reaped, err, s.Dir)
	}
	if err := s.Kill(); err != nil { // collects the exit
		t.Fatal(err)
	}
	if processExists(pid) {
		t.Errorf("pid %d exists after ReapStale", pid)
	}
}

// forTest is sandboxtest.ForTest for this package's own tests, which cannot
// import sandboxtest (it imports this package).
func forTest(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Release(t.Failed(), t.Logf); err != nil {
			t.Error(err)
		}
	})
	return s
}

// mustExec runs queries on s and fails the test on error.
func mustExec(t *testing.T, s *Server, queries ...string) {
	t.Helper()
	if err := s.Exec(t.Context(), queries...); err != nil {
		t.Fatal(err)
	}
}

// globals returns @@name for each name, as text.
func globals(t *testing.T, s *Server, names ...string) map[string]string {
	t.Helper()
	db, err := s.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vals := make(map[string]string, len(names))
	for _, name := range names {
		var v string
		if err := db.QueryRowContext(t.Context(), "SELECT @@GLOBAL."+name).Scan(&v); err != nil {
			t.Fatalf("@@%s: %v", name, err)
		}
		vals[name] = v
	}
	return vals
}

func count(t *testing.T, s *Server, query string) int {
	t.Helper()
	db, err := s.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func binlogFiles(t *testing.T, s *Server) []string {
	t.Helper()
	files, err := s.BinlogFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// processExists reports whether pid exists and is not a zombie.
func processExists(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != 'Z'
}
