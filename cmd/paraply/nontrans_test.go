package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestNonTransactionalWaitsForEarlier: a transaction that changes a MyISAM
// table starts on the target only once every transaction before it has
// committed, with or without commit order, as MariaDB's optimistic replica
// runs one (it waits for prior commit). No rollback undoes its MyISAM
// rows, so it must not run ahead of an earlier transaction it could be
// aborted for, nor reach the target's binlog ahead of it (with
// --preserve-gtids that broke the target's GTID order: TestPreserveGTIDs).
//
// A lock held on the target blocks an earlier InnoDB update; the MyISAM
// insert after it, independent by its rows, must stay off the target
// until the lock goes.
func TestNonTransactionalWaitsForEarlier(t *testing.T) {
	p := newReplPair(t, "nt")
	execAll(t, p.sdb, "CREATE DATABASE nt", "CREATE TABLE nt.inn (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
		"CREATE TABLE nt.mi (id INT PRIMARY KEY) ENGINE=MyISAM", "INSERT INTO nt.inn VALUES (1, 0), (2, 0)")
	relay := filepath.Join(t.TempDir(), "relay")
	for i, order := range []string{"true", "false"} {
		id := i + 1
		args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", relay,
			"--preserve-commit-order=" + order, "--workers", "4", "--http", "", "--log-level", "warn"}
		if i == 0 {
			args = append(args, "--start-gtid", p.start)
		}
		pc := startParaply(t, args...)
		waitApplied(t, p.tdb, p.sourcePos(t), pc.Exited, pc.Logs)

		hold, err := p.tdb.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hold.Exec("SELECT v FROM nt.inn WHERE id = ? FOR UPDATE", id); err != nil {
			t.Fatal(err)
		}
		execAll(t, p.sdb, fmt.Sprintf("UPDATE nt.inn SET v = v + 1 WHERE id = %d", id),
			fmt.Sprintf("INSERT INTO nt.mi VALUES (%d)", id))
		// Long enough for a worker to have run the insert many times over
		// had it not waited: it shares no row with the blocked update.
		time.Sleep(1500 * time.Millisecond)
		var early int
		if err := p.tdb.QueryRow("SELECT COUNT(*) FROM nt.mi WHERE id = ?", id).Scan(&early); err != nil {
			t.Fatal(err)
		}
		if err := hold.Rollback(); err != nil {
			t.Fatal(err)
		}
		if early != 0 {
			t.Errorf("--preserve-commit-order=%s: the MyISAM insert reached the target while the update before it was blocked", order)
		}
		waitApplied(t, p.tdb, p.sourcePos(t), pc.Exited, pc.Logs)
		pc.Kill()
	}
	p.equal(t, "nt")
}
