package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
)

// TestSourceRestartDropsTemporaryTables: a source that crashes loses its
// connections' temporary tables without logging their DROP. The first
// binlog it writes after it starts says so (its format description's
// created timestamp), and MariaDB's replica drops its copies then. paraply
// does the same while it keeps running across the crash: a connection of
// the restarted source with the same pseudo_thread_id creates a temporary
// table of the same name, with other rows, and both targets end as the
// source. (Before, paraply's target session still held the old table, and
// the CREATE TEMPORARY TABLE stopped replication with "already exists".)
func TestSourceRestartDropsTemporaryTables(t *testing.T) {
	ctx := context.Background()
	// Durable: what paraply received before the crash stays in the
	// source's binlog.
	r := newQuietRig(t, "tr", sandbox.Options{Durable: true, ExtraArgs: []string{"--binlog-format=STATEMENT"}})
	// The native replica reconnects within a second, not the default 60.
	execAll(t, r.ndb, "STOP SLAVE", "CHANGE MASTER TO MASTER_CONNECT_RETRY = 1", "START SLAVE")
	rep := startParaply(t, "replicate", "--source", r.src.URL(), "--target", r.tgt.URL(), "--workers", "4",
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", r.start, "--heartbeat", "200ms",
		"--log-level", "info", "--http", "")

	// One connection's temporary table, used across transactions, and
	// held when the source crashes.
	session := func(stmts ...string) {
		t.Helper()
		conn, err := r.sdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, q := range append([]string{"SET pseudo_thread_id = 4242"}, stmts...) {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		// The connection must not end cleanly, which would log the
		// DROP TEMPORARY TABLE: the server crashes with it open.
		if r.src.Running() {
			if err := r.src.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	execAll(t, r.sdb, "CREATE DATABASE r", "CREATE TABLE r.t (id INT PRIMARY KEY, v VARCHAR(10))")
	session("CREATE TEMPORARY TABLE r.tmp (id INT, v VARCHAR(10))", "INSERT INTO r.tmp VALUES (1, 'before')",
		"INSERT INTO r.t SELECT * FROM r.tmp")
	if err := r.src.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	session("CREATE TEMPORARY TABLE r.tmp (id INT, v VARCHAR(10))", "INSERT INTO r.tmp VALUES (2, 'after')",
		"INSERT INTO r.t SELECT * FROM r.tmp")
	if err := r.src.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	// The second connection's table is forgotten at the first
	// transaction after the second restart.
	execAll(t, r.sdb, "INSERT INTO r.t VALUES (3, 'later')")
	end := r.sourcePos(t)
	waitApplied(t, r.tdb, end, rep.Exited, rep.Logs)
	r.waitNative(t, end)
	q := "SELECT * FROM r.t ORDER BY id"
	source, native, ours := queryText(t, r.sdb, q), queryText(t, r.ndb, q), queryText(t, r.tdb, q)
	if source != "  \"1\" | \"before\"\n  \"2\" | \"after\"\n  \"3\" | \"later\"\n" {
		t.Fatalf("the source holds\n%s", source)
	}
	if native != source {
		t.Errorf("MariaDB's replica differs from the source:\n%s", native)
	}
	if ours != source {
		t.Errorf("paraply's target differs from the source:\n%s\n%s", ours, rep.Logs.String())
	}
	// Nothing is recorded as held any more: a restart of paraply would
	// otherwise stop on the next statement of connection 4242.
	if held := queryText(t, r.tdb, "SELECT thread_id, table_name FROM paraply.temporary"); held != "  \n" {
		t.Errorf("paraply.temporary still records\n%s\n%s", held, rep.Logs.String())
	}
	if !bytes.Contains(rep.Logs.Bytes(), []byte("the source restarted")) {
		t.Errorf("paraply did not log the source's restart\n%s", rep.Logs.String())
	}
}
