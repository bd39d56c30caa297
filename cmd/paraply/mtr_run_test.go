package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mtrDir is where Debian's package mariadb-test installs the suite.
const mtrDir = "/usr/share/mysql/mysql-test"

// mtrCheckEnv carries the checkpoint URL to the check command, which is
// this test binary run by mariadb-test's --exec (see TestMain).
const mtrCheckEnv = "PARAPLY_MTR_CHECK"

// mtrCheckpoint is what the test binary does when mariadb-test runs it at
// a checkpoint: ask the harness to compare the servers, and return once it
// has. args are the binary's arguments: "mtr-check" and where in the file.
func mtrCheckpoint(url string, args []string) int {
	at := "?"
	if len(args) >= 2 && args[0] == "mtr-check" {
		at = args[1]
	}
	client := &http.Client{Timeout: 15 * time.Minute}
	resp, err := client.Get(url + "?at=" + at)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mtr checkpoint:", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "mtr checkpoint:", resp.Status)
		return 1
	}
	return 0
}

// mtrCheckReq is one checkpoint a test file reached; the harness closes
// done when it has compared.
type mtrCheckReq struct {
	at   string
	done chan struct{}
}

// mtrServeChecks serves the checkpoints on a loopback port for the test's
// duration and returns their URL and the channel they arrive on. The
// handler only hands a checkpoint to the test's goroutine, which owns the
// servers, and waits for it.
func mtrServeChecks(t *testing.T) (string, <-chan mtrCheckReq) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reqs := make(chan mtrCheckReq)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c := mtrCheckReq{at: req.URL.Query().Get("at"), done: make(chan struct{})}
		select {
		case reqs <- c:
		case <-req.Context().Done():
			return
		}
		select {
		case <-c.done:
			_, _ = io.WriteString(w, "ok\n")
		case <-req.Context().Done():
		}
	}), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-served
	})
	return "http://" + ln.Addr().String() + "/check", reqs
}

// mtrRunner runs test files on the rig's source with mariadb-test.
type mtrRunner struct {
	rig      *mtrRig
	checkURL string
	checks   <-chan mtrCheckReq
	work     string          // mirrors of the suite's test directories, with the prepared copies
	mirrored map[string]bool // the directories mirrored so far
	bin      string          // this test binary, the check command
	timeout  time.Duration   // a file that runs longer is stopped
}

func newMTRRunner(t *testing.T, rig *mtrRig, timeout time.Duration) *mtrRunner {
	t.Helper()
	bin, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	url, checks := mtrServeChecks(t)
	return &mtrRunner{rig: rig, checkURL: url, checks: checks, work: t.TempDir(), mirrored: map[string]bool{}, bin: bin, timeout: timeout}
}

// prepare writes the copy of a test file (a path relative to mtrDir) with
// its checkpoints and returns its path and the suite directory mysqltest
// looks for include files in (with a slash at the end: mysqltest appends
// names to it as they are). The copy goes into a mirror of the file's
// directory (links to everything in it), because mysqltest looks for a
// file that a test sources next to the test first.
func (m *mtrRunner) prepare(rel string) (path, suiteDir string, err error) {
	orig := rel // an absolute path: a file of one's own, e.g. a reproduction
	if !filepath.IsAbs(rel) {
		orig = filepath.Join(mtrDir, rel)
	}
	dir := filepath.Dir(rel)
	mirror := filepath.Join(m.work, dir)
	if !m.mirrored[dir] {
		if err := os.MkdirAll(mirror, 0o755); err != nil {
			return "", "", err
		}
		entries, err := os.ReadDir(filepath.Dir(orig))
		if err != nil {
			return "", "", err
		}
		for _, e := range entries {
			if err := os.Symlink(filepath.Join(filepath.Dir(orig), e.Name()), filepath.Join(mirror, e.Name())); err != nil {
				return "", "", err
			}
		}
		m.mirrored[dir] = true
	}
	text, err := os.ReadFile(orig)
	if err != nil {
		return "", "", err
	}
	prepared, _ := mtrCheckpoints(string(text), func(line int) string {
		at := "end"
		if line > 0 {
			at = strconv.Itoa(line)
		}
		return "--exec " + m.bin + " mtr-check " + at
	})
	path = filepath.Join(mirror, filepath.Base(rel))
	_ = os.Remove(path)
	if err := os.WriteFile(path, []byte(prepared), 0o644); err != nil {
		return "", "", err
	}
	// A suite keeps its tests in t/ or, as main and sql_sequence do, at
	// its top.
	return path, mtrSuiteDir(orig) + "/", nil
}

// command is mariadb-test running a prepared file on the source, with the
// environment mysql-test-run gives it.
func (m *mtrRunner) command(path, suiteDir string) *exec.Cmd {
	src, vardir := m.rig.src, m.rig.vardir
	port := strconv.Itoa(src.Port)
	client := " --no-defaults --user=root --port=" + port + " --socket=" + src.Socket
	// Over the socket, as mysql-test-run connects: accounts a file
	// creates at localhost (change_user, connect) are found.
	cmd := exec.Command("mariadb-test", "--no-defaults", "--host=localhost", "--port="+port, "--socket="+src.Socket,
		"--user=root", "--database=test", "--basedir="+mtrDir+"/", "--suite-dir="+suiteDir, "--test-file="+path,
		"--tmpdir="+filepath.Join(vardir, "tmp"), "--logdir="+filepath.Join(vardir, "log"),
		"--skip-ssl", "--max-connect-retries=3", "--silent")
	cmd.Env = append(os.Environ(),
		"MYSQLTEST_VARDIR="+vardir, "MYSQL_TEST_DIR="+mtrDir, "MYSQL_TMP_DIR="+filepath.Join(vardir, "tmp"),
		"MYSQL_SHAREDIR=/usr/share/mysql", "MYSQL_CHARSETSDIR=/usr/share/mysql/charsets",
		"MTR_SUITE_DIR="+strings.TrimSuffix(suiteDir, "/"), "MASTER_MYPORT="+port, "MASTER_MYSOCK="+src.Socket,
		// suite/storage_engine's files test the engine $ENGINE names:
		// the servers' default.
		"ENGINE=MyISAM",
		"MYSQL=mariadb"+client, "MYSQL_DUMP=mariadb-dump"+client, "MYSQL_BINLOG=mariadb-binlog --no-defaults",
		mtrCheckEnv+"="+m.checkURL)
	for _, p := range mtrPlugins {
		cmd.Env = append(cmd.Env, p.env+"="+p.lib)
	}
	// mysql-test-run runs it in mysql-test/, where --require files and
	// a few relative paths are looked up.
	cmd.Dir = mtrDir
	// Its own process group, so that a file that hangs is stopped with
	// what it runs (--exec).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// mtrRun is how one run of mariadb-test went.
type mtrRun struct {
	started bool   // the file could be prepared and mariadb-test started
	exit    int    // 0 ran to the end, 62 skipped, 1 a command failed; -1 stopped (timeout)
	message string // the last line of its output, when it did not end with 0
	sawEnd  bool   // the checkpoint at the end of the file was reached
	// sourceGone: the source's server exited while the file ran.
	sourceGone bool
	took       time.Duration
}

// run runs a test file (relative to mtrDir) and calls check in this
// goroutine for every checkpoint the file reaches, while the file waits.
// When check returns false, the file is stopped there.
func (m *mtrRunner) run(ctx context.Context, rel string, check func(at string) bool) mtrRun {
	begin := time.Now()
	path, suiteDir, err := m.prepare(rel)
	if err != nil {
		return mtrRun{exit: -1, message: err.Error()}
	}
	cmd := m.command(path, suiteDir)
	out := &tailBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return mtrRun{exit: -1, message: "mariadb-test: " + err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(m.timeout)
	defer timer.Stop()
	// A file that shuts the source down (include/restart_mysqld.inc)
	// would wait for mtr to start it again.
	alive := time.NewTicker(500 * time.Millisecond)
	defer alive.Stop()
	run := mtrRun{started: true}
	for {
		select {
		case <-alive.C:
			if m.rig.src.Running() {
				continue
			}
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			run.exit, run.message, run.sourceGone = -1, "the source went away", true
		case c := <-m.checks:
			if c.at == "end" {
				run.sawEnd = true
			}
			if check(c.at) {
				close(c.done)
				continue
			}
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			close(c.done)
			<-done
			run.exit, run.message = -1, "stopped at its checkpoint at "+c.at
		case <-timer.C:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			run.exit, run.message = -1, fmt.Sprintf("stopped after %s", m.timeout)
		case err := <-done:
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee) && ee.Exited():
				run.exit = ee.ExitCode()
			default:
				run.exit = -1
			}
			if run.exit != 0 {
				run.message = lastLine(out.String())
			}
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			run.exit, run.message = -1, ctx.Err().Error()
		}
		run.took = time.Since(begin)
		return run
	}
}

// tailBuffer keeps the last max bytes written to it. exec's copying
// goroutine writes to it; read it only after the command's Wait.
type tailBuffer struct {
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string { return string(w.b) }
