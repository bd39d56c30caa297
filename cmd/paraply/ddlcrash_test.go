package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// ddlStep is a DDL kind of TestKillAfterDDL: the statement, run between
// two inserts on the source, and the query that tells, on the target, that
// it has taken effect (one row: 1).
type ddlStep struct {
	name, ddl, insertAfter, visible string
}

// ddlSteps returns the DDL of round r: every kind the issue lists, each
// leaving the table as the next one expects.
func ddlSteps(r int) []ddlStep {
	col := fmt.Sprintf("c%d", r)
	colVisible := "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'kd' AND TABLE_NAME = 't' AND COLUMN_NAME = '" + col + "'"
	return []ddlStep{
		{"add column", "ALTER TABLE kd.t ADD COLUMN " + col + " INT DEFAULT 1", "INSERT INTO kd.t (v, " + col + ") VALUES (1, 2)", colVisible},
		{"modify column", "ALTER TABLE kd.t MODIFY COLUMN " + col + " BIGINT DEFAULT 7", "INSERT INTO kd.t (v, " + col + ") VALUES (2, 9000000000)",
			"SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'kd' AND TABLE_NAME = 't' AND COLUMN_NAME = '" + col + "' AND DATA_TYPE = 'bigint'"},
		{"create index", "CREATE INDEX ix_" + col + " ON kd.t (" + col + ")", "INSERT INTO kd.t (v) VALUES (3)",
			"SELECT COUNT(*) > 0 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'kd' AND TABLE_NAME = 't' AND INDEX_NAME = 'ix_" + col + "'"},
		{"drop column", "ALTER TABLE kd.t DROP COLUMN " + col, "INSERT INTO kd.t (v) VALUES (4)", "SELECT 1 - (" + colVisible + ")"},
		{"rename", "RENAME TABLE kd.t TO kd.t_renamed", "INSERT INTO kd.t_renamed (v) VALUES (5)",
			"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'kd' AND TABLE_NAME = 't_renamed'"},
		{"rename back", "RENAME TABLE kd.t_renamed TO kd.t", "INSERT INTO kd.t (v) VALUES (6)",
			"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'kd' AND TABLE_NAME = 't'"},
		{"drop table", "DROP TABLE kd.scratch", "INSERT INTO kd.t (v) VALUES (7)",
			"SELECT 1 - COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'kd' AND TABLE_NAME = 'scratch'"},
	}
}

// TestKillAfterDDL SIGKILLs paraply as soon as a DDL has taken effect on
// the target, for every kind of DDL, in rounds, while rows are written
// before and after each DDL; each restart must resume (the checkpoint may
// still be before the DDL, so transactions before it are stepped over
// without their old table definition, and the DDL is not followed twice),
// and the target must end equal to the source.
func TestKillAfterDDL(t *testing.T) {
	p := newReplPair(t, "kd")
	execAll(t, p.sdb, "CREATE DATABASE kd", "CREATE TABLE kd.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
	args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--workers", "4",
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", p.start, "--heartbeat", "200ms",
		"--log-level", "warn", "--http", ""}
	var logs bytes.Buffer
	start := func() (*exec.Cmd, chan error) {
		cmd := paraply(args...)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return cmd, exited
	}
	cmd, exited := start()
	kills := 0
	const rounds = 2
	for r := 1; r <= rounds; r++ {
		for _, s := range ddlSteps(r) {
			if s.name == "drop table" {
				execAll(t, p.sdb, "CREATE TABLE kd.scratch (id INT PRIMARY KEY)", "INSERT INTO kd.scratch VALUES (1)")
			}
			// The checkpoint's mark reaches what the source has so far, so
			// that the restart reads the insert before the DDL again with
			// the catalog it finds on the target, which has the DDL.
			var pos string
			if err := p.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
				t.Fatal(err)
			}
			waitApplied(t, p.tdb, pos, exited, &logs)
			execAll(t, p.sdb, fmt.Sprintf("INSERT INTO kd.%s (v) VALUES (%d)", map[bool]string{true: "t_renamed", false: "t"}[s.name == "rename back"], 100*r), s.ddl, s.insertAfter)
			waitVisible(t, p.tdb, s, exited, &logs)
			// Killed right after the DDL took effect: the progress mark is
			// at best moments old, the transactions just before the DDL
			// may or may not be recorded.
			_ = cmd.Process.Kill()
			<-exited
			kills++
			cmd, exited = start()
		}
	}
	_ = cmd.Process.Kill()
	<-exited
	if code, out := runParaply(t, nil, append(args, "--until-caught-up")...); code != 0 {
		t.Fatalf("after %d kills: exit %d\n%s\nearlier runs:\n%s", kills, code, out, logs.String())
	}
	p.equal(t, "kd")
	var src, tgt int
	if err := p.sdb.QueryRow("SELECT COUNT(*) FROM kd.t").Scan(&src); err != nil {
		t.Fatal(err)
	}
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM kd.t").Scan(&tgt); err != nil || tgt != src {
		t.Fatalf("target has %d rows (%v), source %d", tgt, err, src)
	}
	t.Logf("%d kills right after DDL; %d rows, equal", kills, src)
}

// waitVisible waits until s's effect shows on the target, failing if
// paraply exits first.
func waitVisible(t *testing.T, tdb *sql.DB, s ddlStep, exited <-chan error, logs *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("%s: paraply exited before the DDL showed on the target: %v\n%s", s.name, err, logs.String())
		default:
		}
		var ok int
		if err := tdb.QueryRow(s.visible).Scan(&ok); err == nil && ok == 1 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s: not visible on the target after 30 s\n%s", s.name, logs.String())
}

// TestRelayDirKeepsOtherFiles: paraply starts its relay log again when it
// does not match the target's checkpoint (here: a checkpoint beyond the
// relay log's last entry, as when the relay log belongs to another run); a
// --relay-dir that also holds other files, such as the password file,
// keeps them.
func TestRelayDirKeepsOtherFiles(t *testing.T) {
	p := newReplPair(t, "rd")
	dir := t.TempDir()
	other := filepath.Join(dir, "target.password")
	if err := os.WriteFile(other, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--target-password-file", other,
		"--relay-dir", dir, "--start-gtid", p.start, "--until-caught-up", "--log-level", "warn", "--http", ""}
	execAll(t, p.sdb, "CREATE DATABASE rd", "CREATE TABLE rd.t (id INT PRIMARY KEY)", "INSERT INTO rd.t VALUES (1), (2)")
	if code, out := runParaply(t, nil, args...); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	execAll(t, p.tdb, "UPDATE paraply.progress SET relay_index = relay_index + 1000")
	execAll(t, p.sdb, "INSERT INTO rd.t VALUES (3)")
	if code, out := runParaply(t, nil, args...); code != 0 {
		t.Fatalf("after the checkpoint was lost: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("the other file in --relay-dir is gone: %v", err)
	}
	p.equal(t, "rd")
}
