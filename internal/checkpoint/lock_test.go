package checkpoint

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestMain fails the run if a goroutine a test started is still running
// when the tests end (sandbox's fork thread aside).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, sandboxtest.IgnoreForkThread())
}

// TestLockKeptThroughLostConnections: the server frees the lock when its
// connection ends (here KILL CONNECTION, as a wait_timeout or a target
// restart would). Keep takes it again while nobody else has; once another
// session holds it, Keep stops the run with an error.
func TestLockKeptThroughLostConnections(t *testing.T) {
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "lock"})
	db, err := srv.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lock, err := Lock(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if !lock.Held() {
		t.Fatal("Held is false right after Lock")
	}
	if _, err := Lock(ctx, db); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second Lock: %v, want ErrLocked", err)
	}
	kept := make(chan error, 1)
	go func() { kept <- lock.Keep(ctx, 50*time.Millisecond, slog.New(slog.DiscardHandler)) }()

	holder := func() (id sql.NullInt64) {
		t.Helper()
		if err := db.QueryRow("SELECT IS_USED_LOCK(?)", lockName).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	kill := func() int64 {
		t.Helper()
		id := holder()
		if !id.Valid {
			t.Fatal("nobody holds the lock")
		}
		if _, err := db.Exec("KILL CONNECTION ?", id.Int64); err != nil {
			t.Fatal(err)
		}
		return id.Int64
	}

	// Lost while nobody else wants it: held again, on a new connection.
	old := kill()
	deadline := time.Now().Add(10 * time.Second)
	for id := holder(); !id.Valid || id.Int64 == old; id = holder() {
		if time.Now().After(deadline) {
			t.Fatalf("the lock was not taken again (holder %v)", id)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Lost, and another session waiting for it gets it first: Keep fails.
	other, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	took := make(chan error, 1)
	go func() {
		var got sql.NullInt64
		err := other.QueryRowContext(ctx, "SELECT GET_LOCK(?, 10)", lockName).Scan(&got)
		if err == nil && got.Int64 != 1 {
			err = errors.New("GET_LOCK timed out")
		}
		took <- err
	}()
	for waiting := 0; waiting == 0; {
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT GET_LOCK(%, 10)'").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	kill()
	if err := <-took; err != nil {
		t.Fatalf("the other session: %v", err)
	}
	select {
	case err := <-kept:
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("Keep: %v, want ErrLocked", err)
		}
		if lock.Held() {
			t.Error("Held is true while another session holds the lock (paraply_target_lock_held)")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Keep went on while another session holds the lock")
	}
}
