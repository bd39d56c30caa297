package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/workload"
)

// pitrTables are the tables TestApplyPointInTimeRecovery compares.
var pitrTables = []string{"sbtest.sbtest1", "sbtest.sbtest2", "crash.c", "crash.log", "crash.doomed"}

// tableChecksums returns CHECKSUM TABLE of tables on db, by table.
func tableChecksums(t *testing.T, db *sql.DB, tables []string) map[string]string {
	t.Helper()
	rows, err := db.Query("CHECKSUM TABLE " + strings.Join(tables, ", "))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	sums := map[string]string{}
	for rows.Next() {
		var table string
		var sum sql.NullString
		if err := rows.Scan(&table, &sum); err != nil {
			t.Fatal(err)
		}
		sums[table] = sum.String // "" for a missing table
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

// diffSums names the tables whose checksums differ.
func diffSums(want, got map[string]string) []string {
	var diff []string
	for _, tb := range pitrTables {
		if want[tb] != got[tb] {
			diff = append(diff, fmt.Sprintf("%s: %q, want %q", tb, got[tb], want[tb]))
		}
	}
	return diff
}

// TestApplyPointInTimeRecovery is point-in-time recovery as the README
// describes it: a mariadb-dump --gtid of the source restored into the
// target, a workload on the source (concurrent sessions, sysbench, a DDL,
// several binlog files) that ends with the accident, DROP TABLE, and
// transactions after it; then paraply apply --start-gtid <the dump's>
// --stop-gtid <the DROP's> over the source's binlog files, SIGKILLed in the
// middle and run again. The target must equal the source as it was just
// before the DROP (checksums taken then), and a further run with the same
// arguments must apply nothing. Both apply paths are tried: apply has
// replicate's.
func TestApplyPointInTimeRecovery(t *testing.T) {
	for _, path := range []string{"binlog", "sql"} {
		t.Run(path, func(t *testing.T) { testApplyPointInTimeRecovery(t, path) })
	}
}

func testApplyPointInTimeRecovery(t *testing.T, path string) {
	ctx := context.Background()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "pitrsrc", Binlog: true})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "pitrtgt", ServerID: 2, Durable: true})
	sdb := sandboxtest.DB(t, src)
	tdb := sandboxtest.DB(t, tgt)

	// The data the backup holds.
	if err := src.CreateDatabase(ctx, "sbtest"); err != nil {
		t.Fatal(err)
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_write_only", 2, 1000, 1, 0); err != nil {
		t.Fatal(err)
	}
	execAll(t, sdb, counterSetup()...)
	execAll(t, sdb, "CREATE TABLE crash.doomed (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO crash.doomed VALUES (1, 'backup')")
	load := startCounterLoad(t, sdb, 4)
	time.Sleep(300 * time.Millisecond)

	// The backup, taken while the source writes.
	backup, start := gtidDump(t, src, "sbtest", "crash")

	// The day's work after the backup, in several binlog files.
	execAll(t, sdb, "FLUSH BINARY LOGS")
	if err := workload.Sysbench(ctx, src, "run", "oltp_write_only", 2, 1000, 4, 1500); err != nil {
		t.Fatal(err)
	}
	execAll(t, sdb, "FLUSH BINARY LOGS", "ALTER TABLE crash.log ADD COLUMN note VARCHAR(10) NULL",
		"INSERT INTO crash.doomed VALUES (2, 'after the backup')")
	time.Sleep(500 * time.Millisecond)
	committed := load.finish(t)
	restore := tgt.Client(ctx)
	restore.Stdin = backup
	if out, err := restore.CombinedOutput(); err != nil {
		t.Fatalf("restoring the dump: %v\n%s", err, out)
	}

	// The accident, and life going on after it.
	want := tableChecksums(t, sdb, pitrTables)
	drop := commitGTID(t, sdb, "DROP TABLE crash.doomed")
	execAll(t, sdb, "UPDATE crash.c SET n = n + 1000", "INSERT INTO sbtest.sbtest1 (k, c, pad) VALUES (1, 'after', 'the drop')")
	files, err := src.BinlogFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backup at %s, %d counter transactions, DROP TABLE is %s, %d binlog files", start, committed, drop, len(files))
	if got := tableChecksums(t, tdb, pitrTables); len(diffSums(want, got)) == 0 {
		t.Fatal("the restored backup already equals the source before the drop: the test would prove nothing")
	}

	addr := freeAddr(t)
	args := append([]string{"apply", "--target", tgt.URL(), "--start-gtid", start, "--stop-gtid", drop,
		"--workers", "4", "--apply", path, "--log-level", "warn", "--http", addr, "--progress", "1s", "--spool-dir", t.TempDir()}, files...)

	// The first run is SIGKILLed as soon as it has applied something.
	var logs bytes.Buffer
	cmd := paraply(args...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// It serves replicate's metrics (the endpoint is up before applying
	// starts).
	waitUntil(t, "serve /metrics", 2*time.Millisecond, exited, &logs, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	if m := httpGet(t, "http://"+addr+"/metrics"); !strings.Contains(m, "paraply_applied_transactions_total") || !strings.Contains(m, "paraply_received_transactions_total") {
		t.Errorf("/metrics of paraply apply lacks the pipeline's metrics:\n%s", m)
	}
	waitProgress(t, tdb, start, exited, &logs)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("paraply apply ended before it was killed (%v)\n%s", cmd.ProcessState, logs.String())
	}
	if len(diffSums(want, tableChecksums(t, tdb, pitrTables))) == 0 {
		t.Fatalf("the kill came after everything was applied: the test would prove nothing\n%s", logs.String())
	}

	// The second run resumes and finishes.
	code, out := runParaply(t, nil, args...)
	if code != 0 || !strings.Contains(out, "paraply apply: done") {
		t.Fatalf("paraply apply after the kill: exit %d\n%s", code, out)
	}
	t.Log(strings.TrimSpace(out))
	if diff := diffSums(want, tableChecksums(t, tdb, pitrTables)); len(diff) > 0 {
		t.Fatalf("the target differs from the source before the DROP:\n%s\n%s", strings.Join(diff, "\n"), out)
	}

	// A third run has nothing left to apply.
	code, out = runParaply(t, nil, args...)
	if code != 0 || !strings.Contains(out, "done") || !strings.Contains(out, ": 0 transactions applied") {
		t.Fatalf("paraply apply run again: exit %d, want 0 and nothing applied\n%s", code, out)
	}
	if diff := diffSums(want, tableChecksums(t, tdb, pitrTables)); len(diff) > 0 {
		t.Fatalf("running apply again changed the target:\n%s", strings.Join(diff, "\n"))
	}

	// replicate does not take apply's checkpoint for its own.
	code, out = runParaply(t, nil, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--relay-dir", filepath.Join(t.TempDir(), "relay"),
		"--until-caught-up", "--log-level", "warn", "--http", "")
	if code != 1 || !strings.Contains(out, "checkpoint of paraply apply") {
		t.Fatalf("replicate on a target applied to by apply: exit %d, want 1 and an error naming apply's checkpoint\n%s", code, out)
	}
	t.Log(lastLine(out))
}

// waitProgress waits until apply has committed something on tdb (a GTID
// in paraply.applied, or its checkpoint moved past start), or fails if
// paraply exits first. It polls often: the kill that follows must land
// while most of the files are still to be applied.
func waitProgress(t *testing.T, tdb *sql.DB, start string, exited <-chan error, logs *bytes.Buffer) {
	t.Helper()
	waitUntil(t, "apply anything", 2*time.Millisecond, exited, logs, func() bool {
		var applied int
		var pos sql.NullString
		err := tdb.QueryRow("SELECT (SELECT COUNT(*) FROM paraply.applied), (SELECT position FROM paraply.progress WHERE id = 2)").Scan(&applied, &pos)
		return err == nil && (applied > 0 || (pos.String != start && pos.String != ""))
	})
}
