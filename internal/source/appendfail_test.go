package source

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestMain runs the tests, or, in a copy of the test binary started with
// SOURCE_HELPER set, one helper: a process whose file size limit can be
// lowered without touching the test's.
func TestMain(m *testing.M) {
	switch os.Getenv("SOURCE_HELPER") {
	case "":
		os.Exit(m.Run())
	case "fsize":
		if err := helperFileSize(os.Getenv("SOURCE_URL"), os.Getenv("SOURCE_DIR")); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv("SOURCE_HELPER"))
		os.Exit(2)
	}
}

// TestReceiverKeepsWhatTheRelayLogCouldNotWrite: the relay log's disk
// fills while a transaction arrives. The append fails (EFBIG here; a full
// disk fails the same way), the receiver reconnects, and once there is
// room again the relay log holds that transaction: none is skipped.
func TestReceiverKeepsWhatTheRelayLogCouldNotWrite(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "source-fsize", Binlog: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := src.Exec(ctx, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SOURCE_HELPER=fsize", "SOURCE_URL="+src.URL(), "SOURCE_DIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
}

// helperFileSize runs a receiver into a relay log in dir from the source
// at url, makes an append fail for real with RLIMIT_FSIZE just above the
// segment's size, lifts the limit, and checks that the relay log holds
// every transaction the source wrote, in order.
func helperFileSize(url, dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	ep, err := config.ParseEndpoint(url)
	if err != nil {
		return err
	}
	db, err := ep.Open(nil)
	if err != nil {
		return err
	}
	defer db.Close()
	relay, err := relaylog.Open(relaylog.Options{Dir: dir, Sync: relaylog.SyncNever})
	if err != nil {
		return err
	}
	defer relay.Close()
	const heartbeat = 200 * time.Millisecond
	rcv, err := NewReceiver(Config{Source: ep, ServerID: 4243, Flavor: binlog.FlavorMariaDB,
		Heartbeat: heartbeat, MaxBackoff: heartbeat}, relay)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rcv.Run(runCtx, "") }()
	defer func() { stop(); <-done }()

	var gtids []string // of the source's inserts, in order
	insert := func(id int) error {
		if _, err := db.ExecContext(ctx, "INSERT INTO d.t VALUES (?, REPEAT('x', 1000))", id); err != nil {
			return err
		}
		var g string
		if err := db.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&g); err != nil {
			return err
		}
		gtids = append(gtids, g)
		return nil
	}
	received := func(g string) error {
		for {
			if _, last := relay.Last(); last.String() == g {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("the relay log did not receive %s: receiver %+v", g, rcv.Status())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for id := 1; id <= 3; id++ {
		if err := insert(id); err != nil {
			return err
		}
	}
	if err := received(gtids[2]); err != nil {
		return err
	}

	segs, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(segs) == 0 {
		return fmt.Errorf("no segment in %s: %w", dir, err)
	}
	var size int64
	for _, s := range segs {
		if st, err := os.Stat(s); err == nil {
			size = max(size, st.Size())
		}
	}
	signal.Ignore(syscall.SIGXFSZ)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		return err
	}
	lim := old
	lim.Cur = uint64(size) + 100 // the next transaction is larger
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return err
	}
	if err := insert(4); err != nil {
		return err
	}
	for st := rcv.Status(); !strings.Contains(st.LastError, syscall.EFBIG.Error()); st = rcv.Status() {
		if ctx.Err() != nil {
			return fmt.Errorf("the append did not fail: receiver %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		return err
	}
	if err := insert(5); err != nil {
		return err
	}
	if err := received(gtids[4]); err != nil {
		return err
	}

	r := relay.NewReader(1)
	defer r.Close()
	for i, want := range gtids {
		e, err := r.Next(ctx)
		if err != nil {
			return fmt.Errorf("reading the relay log's transaction %d: %w", i+1, err)
		}
		// The first transactions are the CREATEs.
		for e.GTID.String() != want && i == 0 {
			if e, err = r.Next(ctx); err != nil {
				return err
			}
		}
		if got := e.GTID.String(); got != want {
			return fmt.Errorf("relay log transaction %d is %s, want %s (the source wrote %v)", e.Index, got, want, gtids)
		}
	}
	return nil
}
