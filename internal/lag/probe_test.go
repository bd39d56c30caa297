package lag

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestProbesOnASource: the clock offset of a source on this machine is
// about zero; heartbeats are written, named by their GTIDs, every interval;
// a source that does not log them is refused rather than waited for.
func TestProbesOnASource(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "lagsrc", Binlog: true})
	db, err := src.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := src.Exec(ctx, "CREATE DATABASE hb"); err != nil {
		t.Fatal(err)
	}
	tr := NewTracker(20 * time.Millisecond)
	for i := 0; i < 3; i++ {
		if err := tr.MeasureOffset(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	if off, ok := tr.offset(); !ok || off < -20*time.Millisecond || off > 20*time.Millisecond {
		t.Errorf("offset of a source on this machine: %v (measured: %v)", off, ok)
	}

	// Five heartbeats, however long this machine takes to commit them
	// (once 1 in 300 ms under the race detector in CI): the test counts
	// that the writer goes on, not its rate.
	hctx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		Heartbeat{Table: "hb.beat", ServerID: 77, Interval: 20 * time.Millisecond}.Run(hctx, db, tr)
	}()
	counted := func() (int, string) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.beats), tr.beatErr
	}
	for beats, failed := counted(); beats < 5 && failed == "" && hctx.Err() == nil; beats, failed = counted() {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-ran
	if beats, failed := counted(); beats < 5 || failed != "" {
		t.Errorf("%d heartbeats in 30 s at 20 ms (error %q)", beats, failed)
	}
	var id int
	var ts string
	if err := db.QueryRow("SELECT server_id, ts FROM hb.beat").Scan(&id, &ts); err != nil || id != 77 || len(ts) != 26 {
		t.Errorf("heartbeat row (%d, %q): %v", id, ts, err)
	}

	// sql_log_bin=0 for the writer's sessions: @@last_gtid stays put.
	db2, err := sql.Open("mysql", src.DSN("")+"&sql_log_bin=0")
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	err = Heartbeat{Table: "hb.beat", ServerID: 77, Interval: 20 * time.Millisecond}.session(ctx, db2, NewTracker(20*time.Millisecond))
	if !errors.Is(err, ErrNotLogged) {
		t.Errorf("heartbeats not logged: %v, want ErrNotLogged", err)
	}
	if err := (Heartbeat{Table: "nodot"}).Validate(); err == nil {
		t.Error("a table name without its database was accepted")
	}
}
