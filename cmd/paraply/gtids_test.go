package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestPreserveGTIDs keeps the source's GTIDs on the target: a third server
// replicates natively from the target while paraply, SIGKILLed once,
// applies a counter load and DDL with --preserve-gtids. After catch-up the
// target's gtid_binlog_pos is the source's, and the third server, re-pointed
// at the source with MASTER_USE_GTID=current_pos, continues there with
// nothing lost or doubled: the target's binlog is a native replica's,
// paraply's checkpoint included (it is not in it).
func TestPreserveGTIDs(t *testing.T) {
	p := startReplPair(t, sandbox.Options{Name: "pgsrc", Binlog: true},
		sandbox.Options{Name: "pgtgt", ServerID: 2, Binlog: true, ExtraArgs: []string{"--binlog-ignore-db=paraply"}})
	third := sandboxtest.ForTest(t, sandbox.Options{Name: "pg3", ServerID: 3, Binlog: true})
	db3 := sandboxtest.DB(t, third)
	binlogPos := func(db *sql.DB) (pos string) {
		t.Helper()
		if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
			t.Fatal(err)
		}
		return pos
	}
	// The third server follows the target from its first transaction.
	execAll(t, db3, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", p.tgt.Port),
		"START SLAVE")

	relay := filepath.Join(t.TempDir(), "relay")
	args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", relay, "--start-gtid", p.start,
		"--preserve-gtids", "--workers", "8", "--heartbeat", "200ms", "--log-level", "warn", "--http", ""}
	if code, out := runParaply(t, nil, append(args, "--preserve-commit-order=false")...); code == 0 || !strings.Contains(out, "--preserve-gtids needs --preserve-commit-order") {
		t.Fatalf("--preserve-gtids without commit order: exit %d\n%s", code, out)
	}
	start := func() (stop func(kill bool)) {
		cmd := paraply(args...)
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return func(kill bool) {
			if kill {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				return
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("paraply: %v\n%s", err, logs.String())
			}
		}
	}

	execAll(t, p.sdb, counterSetup()...)
	stop := start()
	load := startCounterLoad(t, p.sdb, 4)
	time.Sleep(time.Second)
	execAll(t, p.sdb, "ALTER TABLE crash.c ADD COLUMN note VARCHAR(20) NOT NULL DEFAULT ''", "CREATE TABLE crash.extra (id INT PRIMARY KEY)",
		"INSERT INTO crash.extra VALUES (1), (2)",
		// Rolled back on the source after it changed a MyISAM table: the
		// MyISAM row is in the source's binlog under a GTID (in ROW
		// format a group of its own, in STATEMENT format the whole
		// transaction, ending in ROLLBACK), and must be in the target's
		// once under that GTID, without the InnoDB row.
		"CREATE TABLE crash.mi (id INT PRIMARY KEY) ENGINE=MyISAM")
	for i, format := range []string{"ROW", "STATEMENT"} {
		runIn(t, p.sdb, "crash", "SET SESSION binlog_format = "+format, "BEGIN",
			fmt.Sprintf("INSERT INTO extra VALUES (%d)", 3+i), fmt.Sprintf("INSERT INTO mi VALUES (%d)", 1+i), "ROLLBACK")
	}
	time.Sleep(500 * time.Millisecond)
	stop(true) // SIGKILL in the middle of the load
	stop = start()
	time.Sleep(time.Second)
	committed := load.finish(t)
	stop(false)
	if code, out := runParaply(t, nil, append(args, "--until-caught-up")...); code != 0 {
		t.Fatalf("catch-up: exit %d\n%s", code, out)
	}
	srcPos, tgtPos := binlogPos(p.sdb), binlogPos(p.tdb)
	if tgtPos != srcPos {
		t.Fatalf("the target's gtid_binlog_pos is %q, the source's %q", tgtPos, srcPos)
	}
	counted(t, p.tdb, "target", committed)
	p.equal(t, "crash")

	// The third server has everything the target logged, and no trace of
	// paraply (its checkpoint stayed out of the target's binlog).
	waitGTID(t, db3, tgtPos)
	var n int
	if err := db3.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'paraply'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the third server has a paraply database (%d, %v): paraply's checkpoint reached the target's binlog", n, err)
	}

	// Re-pointed at the source by GTID, it continues where the target was.
	execAll(t, db3, "STOP SLAVE",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=current_pos", p.src.Port),
		"START SLAVE")
	more := startCounterLoad(t, p.sdb, 2)
	time.Sleep(500 * time.Millisecond)
	committed += more.finish(t)
	waitGTID(t, db3, binlogPos(p.sdb))
	counted(t, db3, "third server", committed)
	equalDBs(t, p.sdb, db3, "the third server", "crash")
	t.Logf("%d transactions; target gtid_binlog_pos %s = the source's; the third server re-pointed at the source is equal to it", committed, tgtPos)
}

// waitGTID waits until a native replica has applied pos, failing with its
// replication error if it stopped.
func waitGTID(t *testing.T, db *sql.DB, pos string) {
	t.Helper()
	var r sql.NullInt64
	if err := db.QueryRow("SELECT MASTER_GTID_WAIT(?, 60)", pos).Scan(&r); err != nil || !r.Valid || r.Int64 != 0 {
		var state string
		rows, qerr := db.Query("SHOW ALL SLAVES STATUS")
		if qerr == nil {
			cols, _ := rows.Columns()
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() && rows.Scan(ptrs...) == nil {
				for i, c := range cols {
					if strings.HasSuffix(c, "_Error") || strings.HasSuffix(c, "_Running") || c == "Gtid_Slave_Pos" {
						state += fmt.Sprintf("%s=%s ", c, vals[i])
					}
				}
			}
			if err := rows.Err(); err != nil {
				state += err.Error()
			}
			rows.Close()
		}
		t.Fatalf("the replica did not reach %s (%v, %v): %s", pos, r, err, state)
	}
}
