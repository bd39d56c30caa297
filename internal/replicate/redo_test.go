package replicate

import (
	"context"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestRedoWatch: the share of full reads covers the last redoSamples
// reads, and full starts at redoFull of the maximum age.
func TestRedoWatch(t *testing.T) {
	w := &redoWatch{}
	if r := w.state(); r.Known {
		t.Fatalf("before any read: %+v, want unknown", r)
	}
	const maxAge = 8000
	w.read(1<<26, maxAge*7/8-1, maxAge) // just below
	if r := w.state(); !r.Known || r.Samples != 1 || r.FullShare != 0 || r.FileBytes != 1<<26 || r.AgeBytes != maxAge*7/8-1 || r.MaxAgeBytes != maxAge {
		t.Fatalf("one read below 7/8: %+v", r)
	}
	w.read(1<<26, maxAge*7/8, maxAge) // at the edge
	if r := w.state(); r.Samples != 2 || r.FullShare != 0.5 {
		t.Fatalf("one read at 7/8 of two: %+v, want share 0.5", r)
	}
	for range redoSamples {
		w.read(1<<26, maxAge, maxAge)
	}
	if r := w.state(); r.Samples != redoSamples || r.FullShare != 1 {
		t.Fatalf("the last %d reads full: %+v, want share 1 over %d", redoSamples, r, redoSamples)
	}
	for range 3 {
		w.read(1<<26, 0, maxAge)
	}
	if r := w.state(); r.Samples != redoSamples || r.FullShare != float64(redoSamples-3)/redoSamples {
		t.Fatalf("3 empty reads after full ones: %+v, want share %v", r, float64(redoSamples-3)/redoSamples)
	}
	w.read(1<<26, 10, 0) // a maximum of 0 is never full
	if r := w.state(); r.FullShare != float64(redoSamples-4)/redoSamples {
		t.Fatalf("a read with no maximum counted as full: %+v", r)
	}
}

// TestRedoFullOnTarget: the target's probe reads the redo log of a real
// MariaDB, and finds it full while writes outgrow it. The log is shrunk to
// 16 MiB (its least, the log buffer's size; MariaDB 10.11 resizes it
// online), then rows are written, 3.5 MB a statement, for as long as the
// probe reads: InnoDB writes pages out only from 7/8 of the maximum age,
// so the age stays about there.
func TestRedoFullOnTarget(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "redo"})
	if err := tgt.Exec(ctx, "SET GLOBAL innodb_log_file_size = 16777216", "CREATE DATABASE r",
		"CREATE TABLE r.t (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	db, err := tgt.DB("r") // seq_1_to_500 is the current database's
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	idle := &redoWatch{}
	if err := readRedo(ctx, db, idle); err != nil {
		t.Fatalf("reading the redo log: %v", err)
	}
	if r := idle.state(); !r.Known || r.FileBytes != 16<<20 || r.MaxAgeBytes <= 0 || r.MaxAgeBytes >= r.FileBytes || r.FullShare != 0 {
		t.Fatalf("an idle target: %+v, want a 16 MiB log, a maximum age below it, not full", r)
	}

	wctx, stopWrites := context.WithCancel(ctx)
	written := make(chan error, 1)
	go func() {
		for wctx.Err() == nil {
			if _, err := db.ExecContext(wctx, "INSERT INTO r.t (v) SELECT REPEAT('x', 7000) FROM seq_1_to_500"); err != nil && wctx.Err() == nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	// The probe as paraply runs it, on its own connection, every second,
	// from a second into the writes.
	time.Sleep(time.Second)
	w, cw := &redoWatch{}, &connWatch{}
	pctx, stopProbe := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() { defer close(probed); pingTarget(pctx, endpoint(t, tgt), cw, w) }()
	for deadline := time.Now().Add(30 * time.Second); w.state().Samples < 6 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	stopProbe()
	<-probed
	stopWrites()
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if c := cw.state(time.Now()); !c.Connected {
		t.Fatalf("the probe found the target down: %+v", c)
	}
	r := w.state()
	t.Logf("redo log while writing: %+v", r)
	if r.Samples < 6 || r.FullShare < 0.5 {
		t.Errorf("writing 3.5 MB statements into a 16 MiB log: %+v, want it full in most reads", r)
	}
}
