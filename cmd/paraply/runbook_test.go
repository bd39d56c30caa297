package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// runbook is the world the README's production path is written for,
// rebuilt in a temporary directory: its host names and ports, /etc/paraply
// and /var/lib/paraply, the paraply binary and an administrator's
// mariadb and mariadb-dump, on PATH.
type runbook struct {
	p *tlsPair
	// restore is restore.example, the server of step 9; binlogs the
	// directory of the source's binlog files.
	restore          *sandbox.Server
	binlogs          string
	dir, bin         string
	etc, state, http string
	// us is us.example, the second source of step 10, once started; usHTTP
	// its stream's status address.
	us     *sandbox.Server
	usHTTP string
}

// newRunbook makes the directories and the commands' wrappers for p, and
// the server a backup is restored on in step 9.
func newRunbook(t *testing.T, p *tlsPair) *runbook {
	t.Helper()
	dir := t.TempDir()
	files := &sandbox.TLSFiles{CA: p.certs.CA, Cert: p.certs.ServerCert, Key: p.certs.ServerKey}
	rb := &runbook{p: p, restore: sandboxtest.ForTest(t, sandbox.Options{Name: "rbrestore", ServerID: 3, TLS: files}),
		dir: dir, bin: filepath.Join(dir, "bin"), etc: filepath.Join(dir, "etc", "paraply"),
		state: filepath.Join(dir, "var", "lib", "paraply"), http: freeAddr(t), usHTTP: freeAddr(t)}
	binlogs, err := p.src.BinlogFiles(t.Context())
	if err != nil || len(binlogs) == 0 {
		t.Fatalf("the source's binlog files: %v", err)
	}
	rb.binlogs = filepath.Dir(binlogs[0])
	// paraply is this test binary; mariadb and mariadb-dump run as the
	// administrator the README assumes (root, whose ~/.my.cnf is not
	// read here: the sandbox's root has no password).
	writeFile(t, filepath.Join(rb.bin, "paraply"), "#!/bin/sh\nPARAPLY_RUN_MAIN=1 exec "+strconv.Quote(os.Args[0])+" \"$@\"\n", 0o755)
	for _, name := range []string{"mariadb", "mariadb-dump"} {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s is not installed (make deps installs it)", name)
		}
		writeFile(t, filepath.Join(rb.bin, name), "#!/bin/sh\nexec "+real+" --no-defaults --user=root \"$@\"\n", 0o755)
	}
	// StateDirectory=paraply makes /var/lib/paraply.
	if err := os.MkdirAll(rb.state, 0o750); err != nil {
		t.Fatal(err)
	}
	return rb
}

// local rewrites a README text for this world: the servers' names and
// ports, the directories, the status addresses.
func (rb *runbook) local(text string) string {
	sp, tp, rp := strconv.Itoa(rb.p.src.Port), strconv.Itoa(rb.p.tgt.Port), strconv.Itoa(rb.restore.Port)
	up := "us.example:3306" // until step 10 starts it
	if rb.us != nil {
		up = strconv.Itoa(rb.us.Port)
	}
	return strings.NewReplacer(
		"127.0.0.1:9104", rb.http,
		"127.0.0.1:9105", rb.usHTTP,
		"us.example:3306", "127.0.0.1:"+up,
		"source.example:3306", "127.0.0.1:"+sp,
		"target.example:3306", "127.0.0.1:"+tp,
		"restore.example:3306", "127.0.0.1:"+rp,
		"-h source.example", "-h 127.0.0.1 -P "+sp,
		"-h target.example", "-h 127.0.0.1 -P "+tp,
		"-h restore.example", "-h 127.0.0.1 -P "+rp,
		"/etc/paraply/", rb.etc+"/",
		"/var/lib/paraply/", rb.state+"/",
		"/var/lib/mysql/", rb.binlogs+"/",
		"/usr/bin/paraply", "paraply",
	).Replace(text)
}

// shell returns a bash command running script (a README block, made
// local) with the runbook's commands first on PATH.
func (rb *runbook) shell(script string) *exec.Cmd {
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", rb.local(script))
	cmd.Dir = rb.dir
	cmd.Env = append(os.Environ(), "PATH="+rb.bin+":"+os.Getenv("PATH"), "HOME="+rb.dir)
	return cmd
}

// background runs a README command that runs paraply, made local, in the
// background, as its service would.
func (rb *runbook) background(t *testing.T, command string) *bgParaply {
	t.Helper()
	return startBackground(t, rb.shell("exec "+command))
}

// run runs a README block to its end and returns its exit status and
// output.
func (rb *runbook) run(t *testing.T, script string) (int, string) {
	t.Helper()
	cmd := rb.shell(script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := runWithin(cmd, 2*time.Minute)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("%s: %v\n%s", script, err, out.String())
	return -1, ""
}

// setting returns the value of name in a config file's text.
func setting(t *testing.T, conf, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*=\s*(.*)$`).FindStringSubmatch(conf)
	if m == nil {
		t.Fatalf("the README's config file has no %s", name)
	}
	return strings.TrimSpace(m[1])
}

// TestRunbook follows the README's production path as written, on sandbox
// servers with TLS: the accounts of docs/security.md (narrow grants), a
// dump of a source that sysbench writes to throughout (step 9's backup),
// the config file, the first start (a clone of that source, while it
// writes), the systemd unit's command, sysbench again, paraply
// status and verify, and a SIGTERM; the target must end equal to the
// source. Then step 9: a DROP TABLE on the source, found in its binlogs,
// and paraply apply of the binlogs up to it onto the dump restored on a
// third server, which must end as the target was before the DROP. Then
// step 10: a second source as stream us beside the first, seeded by its
// own clone, each verified by its own file (severalSources). Only names are changed: host names
// and ports, the directories, the passwords. The hand-over of step 8 is TestHandover's (and
// TestStopsWhenNativeReplicaStarts').
func TestRunbook(t *testing.T) {
	p := newTLSPair(t, "rb")
	rb := newRunbook(t, p)

	// 1. Accounts and grants (docs/security.md, narrow grants).
	srcPW, tgtPW := secret("src-"), secret("tgt-")
	runDocSQL(t, p.sdb, runbookBlock(t, securityFile, "source-grants"), srcPW)
	runDocSQL(t, p.sdb, runbookBlock(t, securityFile, "source-repl"), secret("repl-"))
	runDocSQL(t, p.tdb, runbookBlock(t, securityFile, "target-grants-narrow"), tgtPW)

	// The source has data, and goes on writing while it is dumped.
	execAll(t, p.sdb, "CREATE DATABASE app")
	sysbench := func(args ...string) *exec.Cmd {
		return p.src.Sysbench(t.Context(), "oltp_write_only", append([]string{"--mysql-db=app", "--tables=2", "--table-size=2000",
			"--threads=2", "--rand-seed=7"}, args...)...)
	}
	if out, err := sysbench("prepare").CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	load := sysbench("--events=3000", "--time=0", "--report-interval=0", "run")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}

	// 2. The dump of step 2's alternative: step 9's backup. (Step 4's
	// clone seeds the target.)
	code, out := rb.run(t, runbookBlock(t, readmeFile, "seed"))
	if code != 0 {
		t.Fatalf("the dump: exit %d\n%s", code, out)
	}
	m := gtidInDump.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the dump step printed no gtid_slave_pos:\n%s", out)
	}
	dumpPos := m[1]
	t.Logf("the dump is at %s", dumpPos)

	// 3. The config file, at the path it names, with the files it names.
	conf := rb.local(runbookBlock(t, readmeFile, "config"))
	confPath := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(conf, "\n", 2)[0], "#"))
	writeFile(t, confPath, conf, 0o640)
	writeFile(t, setting(t, conf, "source-password-file"), srcPW+"\n", 0o400)
	writeFile(t, setting(t, conf, "target-password-file"), tgtPW+"\n", 0o400)
	ca, err := os.ReadFile(p.certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"source-tls-ca", "target-tls-ca"} {
		writeFile(t, setting(t, conf, name), string(ca), 0o644)
	}
	if relay := setting(t, conf, "relay-dir"); !strings.HasPrefix(relay, rb.state+"/") {
		t.Errorf("relay-dir %s is not in the unit's StateDirectory", relay)
	}

	// 4. First start: the clone, while the source writes, then caught up.
	first := runbookBlock(t, readmeFile, "first-start")
	if !strings.HasPrefix(first, "paraply clone ") {
		t.Fatalf("the first start is no clone:\n%s", first)
	}
	code, out = rb.run(t, first)
	if code != 0 || !strings.Contains(out, "clone finished") {
		t.Fatalf("the first start: exit %d\n%s", code, out)
	}
	if err := load.Wait(); err != nil {
		t.Fatalf("sysbench run: %v", err)
	}

	// 5. The service: the unit's command, in the background, under its
	// umask. (TestReadmeUnit checks the rest of the unit.)
	unit := runbookBlock(t, readmeFile, "unit")
	for _, s := range []string{"User=paraply", "StateDirectory=paraply", "Restart=on-failure"} {
		if !strings.Contains(unit, s+"\n") {
			t.Errorf("the unit lacks %s", s)
		}
	}
	execStart := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindStringSubmatch(unit)
	umask := regexp.MustCompile(`(?m)^UMask=([0-7]+)$`).FindStringSubmatch(unit)
	if execStart == nil || umask == nil {
		t.Fatalf("the unit has no ExecStart or no UMask:\n%s", unit)
	}
	// As the unit runs it: under its umask.
	service := startBackground(t, rb.shell("umask "+umask[1]+"; exec "+execStart[1]))
	if out, err := sysbench("--events=2000", "--time=0", "--report-interval=0", "run").CombinedOutput(); err != nil {
		t.Fatalf("sysbench run: %v\n%s", err, out)
	}
	waitApplied(t, p.tdb, p.sourcePos(t), service.Exited, service.Logs)
	time.Sleep(1200 * time.Millisecond) // a status sample of the caught-up replica

	// 6. Status.
	code, out = rb.run(t, runbookBlock(t, readmeFile, "status"))
	t.Logf("paraply status:\n%s", out)
	if code != 0 {
		t.Fatalf("paraply status: exit %d\n%s", code, out)
	}
	for _, s := range []string{"received up to 0-1-", "target has everything up to 0-1-", "diagnosis"} {
		if !strings.Contains(out, s) {
			t.Errorf("paraply status does not say %q", s)
		}
	}

	// 7. Verify.
	code, out = rb.run(t, runbookBlock(t, readmeFile, "verify"))
	t.Logf("paraply verify:\n%s", out)
	if code != 0 || !strings.Contains(out, "target equals source") || !strings.Contains(out, "app.sbtest1") {
		t.Fatalf("paraply verify: exit %d, want 0 and the tables equal\n%s", code, out)
	}

	// systemctl stop: SIGTERM, exit 0, the final position in the journal.
	if err := service.Stop(t); err != nil {
		t.Errorf("the service after SIGTERM: %v, want exit 0\n%s", err, service.Logs)
	}
	if last := lastLine(service.Logs.String()); !strings.Contains(last, "stopped on a signal") || !strings.Contains(last, "position=0-1-") {
		t.Errorf("the journal's last line does not give the final position: %s", last)
	}
	p.equal(t, "app")
	// The relay log, which may hold passwords (docs/security.md), is
	// paraply's alone: also what step 4, run by hand, wrote.
	relayPrivate(t, setting(t, conf, "relay-dir"))

	// 9. Point-in-time recovery: the backup (the dump) restored on
	// restore.example, which has the target account of step 1.
	rdb := sandboxtest.DB(t, rb.restore)
	runDocSQL(t, rdb, runbookBlock(t, securityFile, "target-grants-narrow"), tgtPW)
	if code, out := rb.run(t, "mariadb -h restore.example < app.sql"); code != 0 {
		t.Fatalf("restoring the dump: exit %d\n%s", code, out)
	}
	accident := commitGTID(t, p.sdb, "DROP TABLE app.sbtest2")
	execAll(t, p.sdb, "INSERT INTO app.sbtest1 (k, c, pad) VALUES (1, 'after', 'the accident')")
	pitr := strings.SplitN(runbookBlock(t, readmeFile, "pitr"), "\n", 2)
	code, out = rb.run(t, pitr[0])
	found := regexp.MustCompile(`GTID (\d+-\d+-\d+) ddl`).FindStringSubmatch(out)
	if code != 0 || found == nil || found[1] != accident {
		t.Fatalf("finding the accident %s in the binlogs: exit %d\n%s", accident, code, out)
	}
	if !strings.Contains(pitr[1], "--start-gtid 0-1-4711 --stop-gtid 0-1-5043") {
		t.Fatalf("the recovery gives no --start-gtid 0-1-4711 --stop-gtid 0-1-5043 to substitute:\n%s", pitr[1])
	}
	code, out = rb.run(t, strings.NewReplacer("0-1-4711", dumpPos, "0-1-5043", found[1]).Replace(pitr[1]))
	if code != 0 {
		t.Fatalf("paraply apply: exit %d\n%s", code, out)
	}
	// The target, stopped before the DROP, is what the recovery must give.
	equalDBs(t, p.tdb, rdb, "the restored server", "app")

	// 10. Several sources: the first stream again, beside a second.
	rb.severalSources(t, execStart[1])
}
