package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPerconaToolkit runs the DBA's standard tools on a ROW source while
// paraply replicates it: pt-table-checksum (which writes its checksums in
// statement format, so that each replica computes them on its own rows),
// pt-online-schema-change (triggers, a copy table, a rename) and
// pt-heartbeat. paraply keeps running, and on its target pt-table-checksum's
// documented replica-side query finds no differing chunk.
func TestPerconaToolkit(t *testing.T) {
	for _, tool := range []string{"pt-table-checksum", "pt-online-schema-change", "pt-heartbeat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (Debian package percona-toolkit; make deps installs it): %v", tool, err)
		}
	}
	p := newReplPair(t, "pt")
	execAll(t, p.sdb, "CREATE DATABASE app",
		"CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
		"INSERT INTO app.t SELECT seq, CONCAT('v', seq), seq FROM app.seq_1_to_5000",
		"CREATE TABLE app.u (id INT PRIMARY KEY, w DOUBLE)",
		"INSERT INTO app.u SELECT seq, seq / 7 FROM app.seq_1_to_300")
	rep := startParaply(t, "replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", filepath.Join(t.TempDir(), "relay"),
		"--start-gtid", p.start, "--log-level", "warn", "--http", "")
	dsn := fmt.Sprintf("h=127.0.0.1,P=%d,u=root", p.src.Port)
	run := func(name string, args ...string) {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		t.Logf("%s:\n%s", name, lastLines(string(out), 6))
	}
	run("pt-heartbeat", "--update", "--create-table", "--database", "app", "--run-time", "2", "--interval", "0.5", dsn)
	run("pt-online-schema-change", "--alter", "ADD COLUMN extra INT NOT NULL DEFAULT 3", "--execute", "--recursion-method=none",
		"--chunk-size=500", dsn+",D=app,t=t")
	execAll(t, p.sdb, "UPDATE app.t SET n = n + 1 WHERE id % 100 = 0")
	run("pt-table-checksum", "--recursion-method=none", "--databases", "app", "--chunk-size=400", "--no-check-binlog-format", dsn)
	waitApplied(t, p.tdb, p.sourcePos(t), rep.Exited, rep.Logs)

	// pt-table-checksum's replica-side check, as its documentation gives it.
	q := `SELECT db, tbl, SUM(this_cnt) AS total_rows, COUNT(*) AS chunks FROM percona.checksums
		WHERE (master_cnt <> this_cnt OR master_crc <> this_crc OR ISNULL(master_crc) <> ISNULL(this_crc)) GROUP BY db, tbl`
	if diff := queryText(t, p.tdb, q); strings.TrimSpace(diff) != "" {
		t.Errorf("pt-table-checksum finds chunks that differ on paraply's target:\n%s", diff)
	}
	var chunks int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM percona.checksums WHERE db = 'app' AND this_crc IS NOT NULL").Scan(&chunks); err != nil || chunks < 10 {
		t.Errorf("the target computed %d checksums of app's chunks (%v), want those of every chunk", chunks, err)
	}
	if code, out := runParaply(t, nil, "verify", "--source", p.src.URL(), "--target", p.tgt.URL(), "--schemas", "app"); code != 0 {
		t.Errorf("paraply verify: exit %d\n%s", code, out)
	}
	select {
	case err := <-rep.Exited:
		t.Fatalf("paraply stopped: %v\n%s", err, rep.Logs.String())
	default:
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
