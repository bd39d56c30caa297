package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStartRefusedWithoutPosition: a target loaded with the source's
// tables (a restored dump) and no checkpoint is refused when no
// --start-gtid says where its data was taken: starting at the source's
// current position would skip what the source wrote since. The error names
// a table and the remedy; --start-gtid current starts there on purpose.
func TestStartRefusedWithoutPosition(t *testing.T) {
	p := newReplPair(t, "nostart")
	execAll(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	// The dump, restored on the target; then the source goes on.
	execAll(t, p.tdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	execAll(t, p.sdb, "INSERT INTO app.t VALUES (2)")
	args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", filepath.Join(t.TempDir(), "relay"),
		"--until-caught-up", "--log-level", "warn", "--http", ""}
	code, out := runParaply(t, nil, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	for _, s := range []string{"`app`.`t`", "no checkpoint", "--start-gtid", "mariadb-dump", "--start-gtid current"} {
		if !strings.Contains(lastLine(out), s) {
			t.Errorf("the error does not say %q: %s", s, lastLine(out))
		}
	}
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'paraply' AND TABLE_NAME = 'progress'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 1 {
		if err := p.tdb.QueryRow("SELECT COUNT(*) FROM paraply.progress").Scan(&n); err != nil || n != 0 {
			t.Errorf("a refused start left a checkpoint: %d rows (%v)", n, err)
		}
	}
	if code, out := runParaply(t, nil, append(args, "--start-gtid", "current")...); code != 0 {
		t.Fatalf("--start-gtid current: exit %d\n%s", code, out)
	}
}

// TestStartRefusedWhenItDisagrees: once the target holds a checkpoint, a
// --start-gtid that names another position than the checkpoint's, or than
// the one its first start was given, is refused with both, not ignored
// (a DBA who restored a dump over a running target and gave its position).
// The first start's --start-gtid (the same command run again), the
// checkpoint's position, and none, continue from the checkpoint.
func TestStartRefusedWhenItDisagrees(t *testing.T) {
	p := newReplPair(t, "disagree")
	execAll(t, p.sdb, "CREATE DATABASE app")
	mid := p.sourcePos(t)
	execAll(t, p.sdb, "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	base := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", filepath.Join(t.TempDir(), "relay"),
		"--until-caught-up", "--log-level", "warn", "--http", ""}
	if code, out := runParaply(t, nil, append(slices.Clone(base), "--start-gtid", p.start)...); code != 0 {
		t.Fatalf("first start: exit %d\n%s", code, out)
	}
	var checkpoint string
	if err := p.tdb.QueryRow("SELECT position FROM paraply.progress WHERE id = 1").Scan(&checkpoint); err != nil {
		t.Fatal(err)
	}
	execAll(t, p.sdb, "INSERT INTO app.t VALUES (2)")
	code, out := runParaply(t, nil, append(slices.Clone(base), "--start-gtid", mid)...)
	if code != 1 {
		t.Fatalf("another --start-gtid: exit %d, want 1\n%s", code, out)
	}
	for _, s := range []string{mid, checkpoint, "disagrees", "without --start-gtid"} {
		if !strings.Contains(lastLine(out), s) {
			t.Errorf("the error does not say %q: %s", s, lastLine(out))
		}
	}
	for _, start := range []string{p.start, "checkpoint", ""} {
		args := slices.Clone(base)
		switch start {
		case "checkpoint":
			if err := p.tdb.QueryRow("SELECT position FROM paraply.progress WHERE id = 1").Scan(&start); err != nil {
				t.Fatal(err)
			}
			fallthrough
		default:
			args = append(args, "--start-gtid", start)
		case "":
		}
		execAll(t, p.sdb, "INSERT INTO app.t SELECT MAX(id) + 1 FROM app.t")
		if code, out := runParaply(t, nil, args...); code != 0 {
			t.Fatalf("--start-gtid %q: exit %d\n%s", start, code, out)
		}
	}
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM app.t").Scan(&n); err != nil || n != 5 {
		t.Errorf("the target has %d rows (%v), want 5", n, err)
	}
}

// TestStopsWhenNativeReplicaStarts: the target's own replication threads
// start beside a running paraply (a target restart that starts a replica
// configuration it still holds, without skip-slave-start): paraply stops
// within seconds with an error saying so, rather than applying beside it.
func TestStopsWhenNativeReplicaStarts(t *testing.T) {
	p := newReplPair(t, "native")
	execAll(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)")
	rep := startParaply(t, "replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", filepath.Join(t.TempDir(), "relay"),
		"--start-gtid", p.start, "--log-level", "warn", "--http", "")
	waitApplied(t, p.tdb, p.sourcePos(t), rep.Exited, rep.Logs)
	// A replica configuration on the target, started: paraply's own
	// position, so that it applies nothing itself before it is stopped.
	var pos string
	if err := p.tdb.QueryRow("SELECT position FROM paraply.progress WHERE id = 1").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	execAll(t, p.tdb, "SET GLOBAL gtid_slave_pos = '"+pos+"'",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", p.src.Port),
		"START SLAVE")
	t.Cleanup(func() { _, _ = p.tdb.Exec("STOP SLAVE") })
	began := time.Now()
	select {
	case err := <-rep.Exited:
		t.Logf("paraply stopped %s after the native replica started: %v", time.Since(began).Round(100*time.Millisecond), err)
	case <-time.After(30 * time.Second):
		t.Fatalf("paraply still runs 30 s after the target's own replication started\n%s", rep.Logs.String())
	}
	if msg := lastLine(rep.Logs.String()); !strings.Contains(msg, "replication threads run") || !strings.Contains(msg, "skip-slave-start") {
		t.Errorf("the error does not say why and what to do: %s", msg)
	}
}

// sourcePos is the source's GTID position.
func (p *replPair) sourcePos(t *testing.T) string {
	t.Helper()
	var pos string
	if err := p.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return pos
}
