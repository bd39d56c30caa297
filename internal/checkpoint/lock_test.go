package checkpoint

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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

// lockDB starts a server for a lock test, named name, and returns a
// handle of it the test's end closes.
func lockDB(t *testing.T, name string) *sql.DB {
	t.Helper()
	db, err := sandboxtest.ForTest(t, sandbox.Options{Name: name}).DB("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestLockKeptThroughLostConnections: the server frees the lock when its
// connection ends (here KILL CONNECTION, as a wait_timeout or a target
// restart would). Keep takes it again while nobody else has; once another
// session holds it, Keep stops the run with an error.
func TestLockKeptThroughLostConnections(t *testing.T) {
	db := lockDB(t, "lock")
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

// TestLockedNamesHolder: a process refused the lock learns who holds it
// (the connection, its account and client address, and since when), and
// the holder's checks keep its lock connection idle, so that "since" is
// when it took the lock, not its last check.
func TestLockedNamesHolder(t *testing.T) {
	db := lockDB(t, "lockholder")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	taken := time.Now()
	lock, err := LockStream(ctx, db, "us")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	kept := make(chan error, 1)
	go func() { kept <- lock.Keep(ctx, 200*time.Millisecond, slog.New(slog.DiscardHandler)) }()
	time.Sleep(2500 * time.Millisecond) // a dozen checks

	other := &TargetLock{db: db, name: lockNameOf("us")}
	err = other.take(ctx, 0)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("a second process's lock: %v, want a LockedError", err)
	}
	t.Log(err)
	var id int64
	if err := db.QueryRow("SELECT IS_USED_LOCK('paraply.target.us')").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if le.Connection != id || le.Lock != "paraply.target.us" || le.User != "root" || le.Host == "" {
		t.Errorf("the error names connection %d of %q from %q holding %s; want connection %d of root, its host, paraply.target.us",
			le.Connection, le.User, le.Host, le.Lock, id)
	}
	// TIME is whole seconds: since is within a second or two of taken.
	if d := le.Since.Sub(taken); d < -1500*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("the error says the lock was taken at %v, %v from when it was", le.Since, d)
	}
	for _, want := range []string{fmt.Sprintf("connection %d of root from ", id), "holds the lock paraply.target.us, since ", fmt.Sprintf("KILL %d", id)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if !lock.Held() {
		t.Error("the holder's Held is false")
	}
	cancel()
	if err := <-kept; err != nil {
		t.Errorf("Keep: %v", err)
	}
}
