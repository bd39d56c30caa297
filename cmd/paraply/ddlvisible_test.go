package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// ddlSeen is a DDL the source ran: its GTID and the definition of the
// table it changed right after it.
type ddlSeen struct {
	gtid, table, def string
}

// ddlVisibleSteps re-partition range, hash and subpartitioned tables,
// MyISAM and InnoDB, with and without a primary key.
var ddlVisibleSteps = []struct{ table, ddl string }{
	{"r", "ALTER TABLE r PARTITION BY RANGE (a) (PARTITION x1 VALUES LESS THAN (8), PARTITION x2 VALUES LESS THAN (16), PARTITION x3 VALUES LESS THAN MAXVALUE)"},
	{"h", "ALTER TABLE h PARTITION BY HASH (a) PARTITIONS 5"},
	{"s", "ALTER TABLE s ADD COLUMN d INT"},
	{"k", "ALTER TABLE k PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (20), PARTITION p1 VALUES LESS THAN MAXVALUE)"},
	{"r", "ALTER TABLE r REORGANIZE PARTITION x3 INTO (PARTITION x3 VALUES LESS THAN (30), PARTITION x4 VALUES LESS THAN MAXVALUE)"},
	{"h", "ALTER TABLE h COALESCE PARTITION 2"},
	{"s", "ALTER TABLE s PARTITION BY HASH (a) PARTITIONS 3"},
	{"k", "ALTER TABLE k REMOVE PARTITIONING"},
	{"r", "ALTER TABLE r PARTITION BY HASH (a) PARTITIONS 2"},
	{"h", "ALTER TABLE h REMOVE PARTITIONING"},
	{"k", "ALTER TABLE k PARTITION BY KEY (a) PARTITIONS 4"},
	{"h", "ALTER TABLE h PARTITION BY RANGE (a) (PARTITION x1 VALUES LESS THAN (10), PARTITION x2 VALUES LESS THAN MAXVALUE)"},
}

// TestCheckpointAfterDDLVisible: paraply's checkpoint never covers a DDL
// before another session on the target sees what the DDL did (issue 41:
// a checkpoint that claimed a re-partitioning while the target's table
// had none would make a comparison at that checkpoint, or a restart from
// it, see a table the source never had at that point). Partitioned tables
// are re-partitioned while a second session writes to them; a watcher on
// the target reads the checkpoint and then each table's definition, which
// must be the one the newest covered DDL of the table gave it, or a later
// one's.
func TestCheckpointAfterDDLVisible(t *testing.T) {
	p := newReplPair(t, "ddlvis")
	execAll(t, p.sdb, "CREATE DATABASE dv",
		"CREATE TABLE dv.r (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL, PRIMARY KEY (a, b)) ENGINE=MyISAM "+
			"PARTITION BY RANGE (a) (PARTITION x1 VALUES LESS THAN (5), PARTITION x2 VALUES LESS THAN (10), PARTITION x3 VALUES LESS THAN MAXVALUE)",
		"CREATE TABLE dv.h (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL) ENGINE=MyISAM PARTITION BY HASH (a) PARTITIONS 3",
		"CREATE TABLE dv.s (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL, PRIMARY KEY (a, b)) ENGINE=InnoDB "+
			"PARTITION BY RANGE (a) SUBPARTITION BY HASH (a + b) (PARTITION x1 VALUES LESS THAN (10) (SUBPARTITION x11, SUBPARTITION x12), "+
			"PARTITION x2 VALUES LESS THAN MAXVALUE (SUBPARTITION x21, SUBPARTITION x22))",
		"CREATE TABLE dv.k (a INT NOT NULL, b INT NOT NULL, c INT NOT NULL) ENGINE=InnoDB PARTITION BY KEY (a) PARTITIONS 2")
	for _, tb := range []string{"r", "h", "s", "k"} {
		execAll(t, p.sdb, "INSERT INTO dv."+tb+" SELECT seq % 40, seq, 0 FROM dv.seq_1_to_400")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var steps []ddlSeen
	var mu sync.Mutex
	for _, tb := range []string{"r", "h", "s", "k"} {
		steps = append(steps, ddlSeen{gtid: lastGTID(p.sourcePos(t)), table: tb, def: showCreate(t, p.sdb, tb)})
	}
	pr := startParaply(t, "replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--start-gtid", p.start,
		"--workers", "4", "--relay-dir", filepath.Join(t.TempDir(), "relay"), "--heartbeat", "200ms", "--log-level", "warn", "--http", "")

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// Writes beside the DDL, in their own session.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			tb := []string{"r", "h", "s", "k"}[i%4]
			// Errors (a lock wait the DDL caused) do not matter: what
			// was written is replicated, what was not is not.
			_, _ = p.sdb.ExecContext(ctx, fmt.Sprintf("INSERT IGNORE INTO dv.%s (a, b, c) VALUES (%d, %d, 1)", tb, i%40, 1000+i))
			_, _ = p.sdb.ExecContext(ctx, fmt.Sprintf("UPDATE dv.%s SET c = c + 1 WHERE a = %d", tb, (i*7)%40))
		}
	}()
	// The watcher: the checkpoint first, then the definitions.
	violation := make(chan string, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			mu.Lock()
			known := slices.Clone(steps)
			mu.Unlock()
			covered := -1
			for i := len(known) - 1; i >= 0; i-- {
				if checkpointCovers(ctx, p.tdb, known[i].gtid) {
					covered = i
					break
				}
			}
			if covered < 0 {
				continue
			}
			for _, tb := range []string{"r", "h", "s", "k"} {
				def, err := showCreateErr(ctx, p.tdb, tb)
				if err != nil {
					continue // the table is being altered
				}
				if why := ddlVisibleCheck(known, covered, tb, def); why != "" {
					violation <- why
					return
				}
			}
		}
	}()
	for _, s := range ddlVisibleSteps {
		conn, err := p.sdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var gtid string
		if _, err := conn.ExecContext(ctx, "USE dv"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, s.ddl); err != nil {
			t.Fatalf("%s: %v", s.ddl, err)
		}
		if err := conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&gtid); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		mu.Lock()
		steps = append(steps, ddlSeen{gtid: gtid, table: s.table, def: showCreate(t, p.sdb, s.table)})
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	end := p.sourcePos(t)
	waitUntil(t, "apply "+end, 50*time.Millisecond, pr.Exited, pr.Logs, func() bool {
		select {
		case v := <-violation:
			t.Fatal(v)
		default:
		}
		return checkpointCovers(ctx, p.tdb, end)
	})
	cancel()
	wg.Wait()
	select {
	case v := <-violation:
		t.Fatal(v)
	default:
	}
	for _, tb := range []string{"r", "h", "s", "k"} {
		if src, tgt := showCreate(t, p.sdb, tb), showCreate(t, p.tdb, tb); src != tgt {
			t.Errorf("dv.%s differs at the end\nsource: %s\ntarget: %s", tb, src, tgt)
		}
	}
}

// ddlVisibleCheck says how the target's definition def of table tb
// contradicts a checkpoint that covers known[covered] and everything
// before it, or "": def must be what the newest covered DDL of tb left, or
// what a later DDL of tb did.
func ddlVisibleCheck(known []ddlSeen, covered int, tb, def string) string {
	newest := -1
	for i := 0; i <= covered; i++ {
		if known[i].table == tb {
			newest = i
		}
	}
	for i := max(newest, 0); i < len(known); i++ {
		if known[i].table == tb && known[i].def == def {
			return ""
		}
	}
	if newest < 0 {
		return ""
	}
	return fmt.Sprintf("the checkpoint covers %s, a DDL of dv.%s, but the target's dv.%s is not what it made:\nwant %s\ngot  %s",
		known[newest].gtid, tb, tb, known[newest].def, def)
}

// showCreate is SHOW CREATE TABLE dv.<tb> without its AUTO_INCREMENT
// counter.
func showCreate(t *testing.T, db *sql.DB, tb string) string {
	t.Helper()
	def, err := showCreateErr(t.Context(), db, tb)
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func showCreateErr(ctx context.Context, db *sql.DB, tb string) (string, error) {
	var name, def string
	if err := db.QueryRowContext(ctx, "SHOW CREATE TABLE dv."+tb).Scan(&name, &def); err != nil {
		return "", err
	}
	return autoIncrement.ReplaceAllString(def, ""), nil
}
