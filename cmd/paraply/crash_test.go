package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/verify"
)

// counterLoad commits transactions on the source until stopped: each
// increments one of 20 counters and logs it, so that the target's totals
// prove no transaction was lost or applied twice.
type counterLoad struct {
	committed atomic.Int64
	stop      chan struct{}
	wg        sync.WaitGroup
	err       error
}

func startCounterLoad(t *testing.T, db *sql.DB, sessions int) *counterLoad {
	return startCounterLoadIn(t, db, "crash", sessions)
}

// startCounterLoadIn runs the counter load on database schema
// (counterSetupIn).
func startCounterLoadIn(t *testing.T, db *sql.DB, schema string, sessions int) *counterLoad {
	l := &counterLoad{stop: make(chan struct{})}
	update, insert := "UPDATE "+schema+".c SET n = n + 1 WHERE id = ?", "INSERT INTO "+schema+".log (cid) VALUES (?)"
	var mu sync.Mutex
	for s := 0; s < sessions; s++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			rng := rand.New(rand.NewPCG(uint64(s), 7))
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				id := 1 + rng.IntN(20)
				tx, err := db.Begin()
				if err == nil {
					_, err = tx.Exec(update, id)
					if err == nil {
						_, err = tx.Exec(insert, id)
					}
					if err == nil {
						err = tx.Commit()
					} else {
						tx.Rollback()
					}
				}
				if err != nil {
					mu.Lock()
					l.err = err
					mu.Unlock()
					return
				}
				l.committed.Add(1)
				time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
			}
		}()
	}
	return l
}

// counterSetup is the schema of the counter load, as statements.
func counterSetup() []string { return counterSetupIn("crash") }

// counterSetupIn is counterSetup in database schema.
func counterSetupIn(schema string) []string {
	setup := []string{"CREATE DATABASE " + schema, "CREATE TABLE " + schema + ".c (id INT PRIMARY KEY, n BIGINT NOT NULL)",
		"CREATE TABLE " + schema + ".log (id BIGINT AUTO_INCREMENT PRIMARY KEY, cid INT NOT NULL, at DATETIME(6) DEFAULT NOW(6))"}
	for i := 1; i <= 20; i++ {
		setup = append(setup, fmt.Sprintf("INSERT INTO %s.c VALUES (%d, 0)", schema, i))
	}
	return setup
}

// counted checks that db holds exactly the counter load's committed
// transactions: the counters sum to it, and the log has as many rows,
// all distinct.
func counted(t *testing.T, db *sql.DB, name string, committed int64) {
	t.Helper()
	countedIn(t, db, "crash", name, committed)
}

// countedIn is counted for the counter load in database schema.
func countedIn(t *testing.T, db *sql.DB, schema, name string, committed int64) {
	t.Helper()
	var sum, rows, distinct int64
	q := fmt.Sprintf("SELECT (SELECT SUM(n) FROM %[1]s.c), (SELECT COUNT(*) FROM %[1]s.log), (SELECT COUNT(DISTINCT id) FROM %[1]s.log)", schema)
	if err := db.QueryRow(q).Scan(&sum, &rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if sum != committed || rows != committed || distinct != committed {
		t.Fatalf("%s: counters sum %d, %d log rows (%d distinct); the source committed %d", name, sum, rows, distinct, committed)
	}
}

func (l *counterLoad) finish(t *testing.T) int64 {
	close(l.stop)
	l.wg.Wait()
	if l.err != nil {
		t.Fatalf("source load: %v", l.err)
	}
	return l.committed.Load()
}

// TestCrashSafety kills paraply with SIGKILL at random moments while a
// load runs on the source, restarts the target server and breaks the source
// connection now and then, and checks at the end that the target holds
// exactly the source's rows: nothing lost, nothing applied twice.
func TestCrashSafety(t *testing.T) {
	ctx := context.Background()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "csrc", Binlog: true, Durable: true})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "ctgt", ServerID: 2, Durable: true})
	if err := src.Exec(ctx, "CREATE DATABASE warmup"); err != nil {
		t.Fatal(err)
	}
	sdb := sandboxtest.DB(t, src)
	var start string
	if err := sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&start); err != nil {
		t.Fatal(err)
	}
	if err := src.Exec(ctx, counterSetup()...); err != nil {
		t.Fatal(err)
	}
	relay := filepath.Join(t.TempDir(), "relay")
	args := []string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "8",
		"--relay-dir", relay, "--start-gtid", start, "--heartbeat", "200ms", "--log-level", "warn", "--http", "127.0.0.1:0"}
	load := startCounterLoad(t, sdb, 4)
	rng := rand.New(rand.NewPCG(11, 12))
	kills := 24
	for i := 0; i < kills; i++ {
		var logs bytes.Buffer
		// Every other run commits out of source order, which leaves gaps
		// above the low-water mark for the next run to find.
		cmd := paraply(append(args, fmt.Sprintf("--preserve-commit-order=%v", i%2 == 0))...)
		cmd.Stderr = &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(150+rng.IntN(900)) * time.Millisecond)
		switch i % 8 {
		case 3: // the target server dies and comes back under paraply
			if err := tgt.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := tgt.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		case 6: // the replication connection breaks
			if _, err := sdb.Exec("KILL (SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' LIMIT 1)"); err != nil {
				killDump(t, sdb)
			}
			time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		}
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
		err := cmd.Wait()
		if cmd.ProcessState.Exited() {
			// paraply exited on its own: that is a failure unless killed.
			t.Fatalf("paraply exited by itself (round %d): %v\n%s", i, err, logs.String())
		}
	}
	committed := load.finish(t)
	var logs bytes.Buffer
	cmd := paraply(append(args, "--until-caught-up")...)
	cmd.Stderr = &logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("final catch-up: %v\n%s", err, logs.String())
	}
	tdb := sandboxtest.DB(t, tgt)
	counted(t, tdb, "target", committed)
	rep, err := verify.Run(ctx, verify.Options{Source: sdb, Target: tdb})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equal() {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Errorf("target differs after %d kills:\n%s", kills, b.String())
	}
	t.Logf("%d transactions, %d SIGKILLs, target restarted %d times, source connection broken %d times", committed, kills, kills/8, kills/8)
	_ = os.Stderr
}

// killDump kills the source's binlog dump threads one by one (KILL takes a
// literal id).
func killDump(t *testing.T, db *sql.DB) {
	rows, err := db.Query("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, id := range ids {
		db.Exec(fmt.Sprintf("KILL %d", id))
	}
}
