package checkpoint

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ErrLocked is returned by Lock and LockStream when another paraply
// process holds the stream's lock on the target: one at a time may apply a
// stream, or change its bookkeeping.
var ErrLocked = errors.New("another paraply process works on this target's stream")

// lockName is the target-wide named lock (GET_LOCK) a paraply process
// holds while it replicates, applies or hands over. The server frees it
// when the holding connection ends, so a SIGKILLed process frees it too.
const lockName = "paraply.target"

// lockWait is how long Lock waits for another holder.
const lockWait = 10 * time.Second

// TargetLock is the target's paraply lock, held on a connection of its
// own.
type TargetLock struct {
	db   *sql.DB
	name string // the lock's name (lockNameOf)
	mu   sync.Mutex
	conn *sql.Conn // nil while lost and not taken again
	// held mirrors conn != nil for Held, which must not wait for a check
	// that waits for the target.
	held atomic.Bool
}

// Held reports whether the lock is held now (false while it is lost and
// being taken again).
func (l *TargetLock) Held() bool { return l.held.Load() }

// Lock takes the target's paraply lock, held until Release (or the
// process dies). It waits up to lockWait for a holder to go (a process
// SIGKILLed a moment ago holds it until the server notices its connection
// closed), then a lock held elsewhere is ErrLocked.
func Lock(ctx context.Context, db *sql.DB) (*TargetLock, error) {
	return LockStream(ctx, db, DefaultStream)
}

// LockStream takes stream's lock on the target, as Lock takes the default
// stream's: one paraply process at a time works on a stream, and streams
// do not wait for each other.
func LockStream(ctx context.Context, db *sql.DB, stream string) (*TargetLock, error) {
	name := lockNameOf(stream)
	conn, err := take(ctx, db, name, lockWait)
	if err != nil {
		return nil, err
	}
	l := &TargetLock{db: db, conn: conn, name: name}
	l.held.Store(true)
	return l, nil
}

// take runs GET_LOCK on a new connection, returned if it holds the lock.
func take(ctx context.Context, db *sql.DB, name string, wait time.Duration) (*sql.Conn, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, wait.Seconds()).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("taking the lock %s on the target: %w", name, err)
	}
	if !got.Valid || got.Int64 != 1 {
		conn.Close()
		return nil, fmt.Errorf("%w (it holds the lock %s)", ErrLocked, name)
	}
	return conn, nil
}

// Keep checks every interval, until ctx is done, that the lock is still
// held. The server frees it when its connection ends: a target restart,
// a network cut, a wait_timeout (the checks keep the connection from
// idling into one). A lost lock is taken again as soon as the target
// answers; if another paraply process took it meanwhile, Keep returns an
// error: two processes must not work on one target at once.
func (l *TargetLock) Keep(ctx context.Context, every time.Duration, log *slog.Logger) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := l.check(ctx, log); err != nil {
			return err
		}
	}
}

func (l *TargetLock) check(ctx context.Context, log *slog.Logger) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		var mine sql.NullBool
		err := l.conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", l.name).Scan(&mine)
		if err == nil && mine.Valid && mine.Bool {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		log.Warn("the target lock was lost (its connection ended); taking it again", "lock", l.name, "err", err)
		l.conn.Close()
		l.conn = nil
		l.held.Store(false)
	}
	conn, err := take(ctx, l.db, l.name, 0)
	switch {
	case errors.Is(err, ErrLocked):
		return fmt.Errorf("the target lock was lost and another process holds it now: stopping, two processes must not work on one target: %w", err)
	case err != nil:
		return nil // the target does not answer: try again at the next check
	}
	l.conn = conn
	l.held.Store(true)
	log.Info("the target lock is held again", "lock", l.name)
	return nil
}

// Release frees the lock, also after the context that took it is done.
// Closing the connection frees it; RELEASE_LOCK first says so at once,
// without waiting for the server to notice. It is bounded in time: a
// target that does not answer frees the lock when the connection ends.
func (l *TargetLock) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = l.conn.ExecContext(ctx, "DO RELEASE_LOCK(?)", l.name)
	l.conn.Close()
	l.conn = nil
	l.held.Store(false)
}
