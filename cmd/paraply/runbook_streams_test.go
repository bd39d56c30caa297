package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// severalSources is TestRunbook's step 10, after steps 1-9 on rb: a
// second source, us.example (GTID domain 2, server 12, step 1's source
// accounts, its own database app, which it has before), becomes stream us
// with the README's config file and grants, seeded by its clone; the first stream
// runs again as step 5's service (execStart) and applies what step 9 left
// on its source. Both streams apply at once, status --target lists both,
// and each stream's verify, with its own file, finds the target equal to
// its source.
func (rb *runbook) severalSources(t *testing.T, execStart string) {
	p := rb.p
	files := &sandbox.TLSFiles{CA: p.certs.CA, Cert: p.certs.ServerCert, Key: p.certs.ServerKey}
	rb.us = sandboxtest.ForTest(t, sandbox.Options{Name: "rbus", Binlog: true, GTIDDomain: 2, ServerID: 12, TLS: files})
	udb := sandboxtest.DB(t, rb.us)
	usPW := secret("us-")
	runDocSQL(t, udb, runbookBlock(t, securityFile, "source-grants"), usPW)
	// us.example's data, all of it in its binlog: its app.
	execAll(t, udb, "CREATE DATABASE app")
	sysbench := func(args ...string) []byte {
		out, err := rb.us.Sysbench(t.Context(), "oltp_write_only", append([]string{"--mysql-db=app", "--tables=1", "--table-size=1000",
			"--threads=2", "--rand-seed=11"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("sysbench on us.example: %v\n%s", err, out)
		}
		return out
	}
	sysbench("prepare")

	// The stream's config file, and the files it names: its source's
	// password; the target's password and the CA are step 3's.
	conf := rb.local(runbookBlock(t, readmeFile, "us-config"))
	confPath := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(conf, "\n", 2)[0], "#"))
	writeFile(t, confPath, conf, 0o640)
	writeFile(t, setting(t, conf, "source-password-file"), usPW+"\n", 0o400)
	for _, name := range []string{"target-password-file", "source-tls-ca", "target-tls-ca"} {
		if _, err := os.Stat(setting(t, conf, name)); err != nil {
			t.Fatalf("us.conf's %s is not one of step 3's files: %v", name, err)
		}
	}
	if setting(t, conf, "name") != "us" {
		t.Fatalf("us.conf names no stream us:\n%s", conf)
	}
	runSQLBlock(t, p.tdb, runbookBlock(t, readmeFile, "us-grants"), "us-grants")

	lines := strings.Split(strings.TrimSpace(runbookBlock(t, readmeFile, "streams")), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "paraply clone ") {
		t.Fatalf("step 10's commands are not clone, status, verify and verify:\n%s", strings.Join(lines, "\n"))
	}
	first := rb.background(t, execStart)
	us := rb.background(t, lines[0])
	sysbench("--events=500", "--time=0", "--report-interval=0", "run") // while it applies
	waitApplied(t, p.tdb, p.sourcePos(t), first.Exited, first.Logs)
	var usPos string
	if err := udb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&usPos); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "apply us.example's "+usPos+" as stream us", 100*time.Millisecond, us.Exited, us.Logs, func() bool {
		var pos string
		return p.tdb.QueryRow("SELECT position FROM paraply_stream_us.progress WHERE id = 1").Scan(&pos) == nil && gtidIn(lastGTID(usPos), pos)
	})

	code, out := rb.run(t, lines[1])
	t.Logf("paraply status --target:\n%s", out)
	if code != 0 || strings.Count(out, "running") != 2 || !strings.Contains(out, "\ndefault ") || !strings.Contains(out, "\nus ") {
		t.Errorf("status --target: exit %d, want streams default and us running\n%s", code, out)
	}
	for i, want := range []string{"app.sbtest1 ", "app.sbtest1 -> app_us.sbtest1"} {
		code, out := rb.run(t, lines[2+i])
		t.Logf("%s\n%s", lines[2+i], out)
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "target equals source") || !strings.Contains(out, "of the target's other streams") {
			t.Errorf("%s: exit %d, want 0, %q equal and the other stream's tables left out\n%s", lines[2+i], code, want, out)
		}
	}
	for name, s := range map[string]*bgParaply{"default": first, "us": us} {
		if err := s.Stop(t); err != nil {
			t.Errorf("stream %s after SIGTERM: %v, want exit 0\n%s", name, err, s.Logs)
		}
	}
}
