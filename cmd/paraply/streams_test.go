package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/faults"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// stream is one source and the paraply process that applies it to the
// shared target as a named stream.
type stream struct {
	name     string
	serverID string // paraply's, towards the source
	src      *sandbox.Server
	sdb      *sql.DB
	start    string   // the source's position before its tables were made
	args     []string // the stream's own flags (filters)
	http     string
	relay    string
	proc     *bgParaply
	target   *sandbox.Server
}

// startSource starts the stream's source, the i-th (GTID domain i+1,
// named prefix+name), and notes its position before anything the stream
// is to apply.
func (s *stream) startSource(t *testing.T, prefix string, i int) {
	t.Helper()
	s.src = sandboxtest.ForTest(t, sandbox.Options{Name: prefix + s.name, Binlog: true, GTIDDomain: uint32(i + 1), ServerID: uint32(11 + i)})
	var err error
	if s.sdb, err = s.src.DB(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.sdb.Close() })
	execAll(t, s.sdb, "CREATE DATABASE warmup")
	if err := s.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&s.start); err != nil {
		t.Fatal(err)
	}
}

func (s *stream) run(t *testing.T) {
	t.Helper()
	args := append([]string{"replicate", "--name", s.name, "--source", s.src.URL(), "--target", s.target.URL(),
		"--server-id", s.serverID, "--relay-dir", s.relay, "--http", s.http}, s.args...)
	if s.start != "" {
		args = append(args, "--start-gtid", s.start)
	}
	s.proc = startParaply(t, args...)
}

// applied waits until the stream's checkpoint on the target covers the
// source's position now.
func (s *stream) caughtUp(t *testing.T, tdb *sql.DB) {
	t.Helper()
	var pos string
	if err := s.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	schema := "paraply_stream_" + s.name
	waitUntil(t, "apply "+pos+" as stream "+s.name, 100*time.Millisecond, s.proc.Exited, s.proc.Logs, func() bool {
		var p string
		return tdb.QueryRow("SELECT position FROM `"+schema+"`.progress WHERE id = 1").Scan(&p) == nil && gtidIn(lastGTID(pos), p)
	})
}

// TestSeveralSources: two MariaDB sources (gtid_domain_id 1 and 2), both
// with a database sbtest, into one target: stream one applies source
// one's as it is, stream two source two's as sbtest2 (--rewrite-db). Both
// run under sysbench write_only load, and each is SIGKILLed once and
// started again. Then each source's tables equal its stream's on the
// target (paraply verify with the stream's filters), status --target
// lists both, each /metrics carries its stream's label, and a conflict
// that stops one stream leaves the other applying.
func TestSeveralSources(t *testing.T) {
	ctx := t.Context()
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "mstgt", ServerID: 2})
	tdb, err := tgt.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer tdb.Close()
	dir := t.TempDir()
	streams := []*stream{
		{name: "one", serverID: "771", args: []string{"--include", "sbtest.%", "--include", "shared.%"}},
		{name: "two", serverID: "772", args: []string{"--rewrite-db", "sbtest=sbtest2", "--include", "sbtest2.%", "--include", "shared.%"}},
	}
	for i, s := range streams {
		s.startSource(t, "ms", i)
		execAll(t, s.sdb, "CREATE DATABASE sbtest")
		if out, err := s.src.Sysbench(ctx, "oltp_write_only", "--tables=2", "--table-size=2000", "prepare").CombinedOutput(); err != nil {
			t.Fatalf("sysbench prepare on %s: %v\n%s", s.name, err, out)
		}
		s.target, s.http, s.relay = tgt, freeAddr(t), filepath.Join(dir, "relay-"+s.name)
		s.run(t)
	}
	var loads []*faults.SysbenchLoad
	for _, s := range streams {
		loads = append(loads, faults.StartSysbench(s.src, 2, 2000, 4, 300))
	}
	for _, s := range streams { // each SIGKILLed once, mid-run, and started again
		time.Sleep(3 * time.Second)
		s.proc.Kill()
		s.run(t)
	}
	time.Sleep(3 * time.Second)
	for i, l := range loads {
		l.Stop()
		if rounds, failed := l.Rounds(); rounds == 0 || failed == rounds {
			t.Fatalf("sysbench on source %s: %d rounds, %d failed: %s", streams[i].name, rounds, failed, l.LastError())
		}
	}
	for _, s := range streams {
		s.caughtUp(t, tdb)
	}
	for _, s := range streams {
		args := append([]string{"verify", "--source", s.src.URL(), "--target", tgt.URL()}, s.args...)
		code, out := runParaply(t, nil, args...)
		if code != 0 || !strings.Contains(out, "sbtest") {
			t.Errorf("verify of stream %s: exit %d\n%s", s.name, code, out)
		}
		t.Logf("verify of stream %s: %s", s.name, lastLine(out))
	}
	code, out := runParaply(t, nil, "status", "--target", tgt.URL())
	t.Logf("status --target:\n%s", out)
	if !strings.Contains(out, "LAG AT SAVE") || strings.Contains(out, "running  replicate  -") {
		t.Errorf("status --target does not give each running stream's lag:\n%s", out)
	}
	for _, s := range streams {
		if code != 0 || !strings.Contains(out, s.name+" ") || !strings.Contains(out, "running") {
			t.Errorf("status --target does not list stream %s as running: exit %d\n%s", s.name, code, out)
		}
		if m := scrape(t, s.http); !strings.Contains(m, `paraply_workers{stream="`+s.name+`"}`) {
			t.Errorf("stream %s's /metrics has no stream label:\n%s", s.name, abbrev(m, 2000))
		}
	}

	// Stream one started twice: the second says whose its --http address
	// is.
	code, out = runParaply(t, nil, "replicate", "--name", "one", "--source", streams[0].src.URL(), "--target", tgt.URL(),
		"--relay-dir", t.TempDir(), "--http", streams[0].http)
	if code != 1 || !strings.Contains(lastLine(out), `the address is in use: paraply stream "one" serves its status there`) {
		t.Errorf("stream one started twice: exit %d, want 1 and whose the address is\n%s", code, out)
	}

	// A table both streams write: allowed, and said, by the stream that
	// found the other there and by status --target.
	for i, s := range streams {
		execAll(t, s.sdb, "CREATE DATABASE IF NOT EXISTS shared", "CREATE TABLE IF NOT EXISTS shared.t (id INT PRIMARY KEY, source INT)",
			fmt.Sprintf("INSERT INTO shared.t VALUES (%d, %d)", i+1, i+1))
		s.caughtUp(t, tdb)
	}
	waitUntil(t, "say that both streams write shared.t", 500*time.Millisecond, nil, nil, func() bool {
		_, out := runParaply(t, nil, "status", "--target", tgt.URL())
		return strings.Contains(out, "shared.t (one, two)")
	})
	if !strings.Contains(streams[0].proc.Logs.String()+streams[1].proc.Logs.String(), "another stream on the target writes this table too") {
		t.Error("neither stream warned that the other writes shared.t")
	}
	for _, s := range streams { // the logger names the stream once a line
		for _, line := range strings.Split(s.proc.Logs.String(), "\n") {
			if strings.Count(line, " stream=") > 1 {
				t.Errorf("stream %s logs its name twice: %s", s.name, line)
			}
		}
	}

	// Stream two stops at a row its target lost; stream one goes on.
	execAll(t, tdb, "DELETE FROM sbtest2.sbtest1 WHERE id = 1")
	execAll(t, streams[1].sdb, "UPDATE sbtest.sbtest1 SET k = k + 1 WHERE id = 1")
	select {
	case <-streams[1].proc.Exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("stream two did not stop at the missing row\n%s", streams[1].proc.Logs)
	}
	if !strings.Contains(streams[1].proc.Logs.String(), "sbtest2") {
		t.Errorf("stream two's error does not name its table:\n%s", lastLine(streams[1].proc.Logs.String()))
	}
	execAll(t, streams[0].sdb, "UPDATE sbtest.sbtest1 SET k = k + 1 WHERE id = 1")
	streams[0].caughtUp(t, tdb)
	if code, out := runParaply(t, nil, "status", "--target", tgt.URL()); code != 0 || !strings.Contains(out, "stopped") {
		t.Errorf("status --target after stream two stopped: exit %d\n%s", code, out)
	}
}

// scrape reads a running paraply's /metrics.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
