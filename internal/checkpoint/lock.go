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

// ErrLocked is returned by Lock and LockStream (as a *LockedError) when
// another paraply process holds the stream's lock on the target: one at a
// time may apply a stream, or change its bookkeeping.
var ErrLocked = errors.New("another paraply process works on this target's stream")

// lockName is the target-wide named lock (GET_LOCK) a paraply process
// holds while it replicates, applies or hands over. The server frees it
// when the holding connection ends, so a SIGKILLed process frees it too.
const lockName = "paraply.target"

// lockWait is how long Lock waits for another holder.
const lockWait = 10 * time.Second

// lockIdleTimeout is the lock connection's wait_timeout: the longest
// MariaDB and MySQL allow (a year). The connection stays idle while it
// holds the lock (see TargetLock), and must not be ended for it.
const lockIdleTimeout = 365 * 24 * time.Hour

// TargetLock is the target's paraply lock, held on a connection of its
// own. That connection runs nothing after GET_LOCK: the target's process
// list then shows for how long it has held the lock (its TIME), which a
// process refused the lock reports (LockedError). Keep checks from other
// sessions that it still holds it.
type TargetLock struct {
	db   *sql.DB
	name string // the lock's name (lockNameOf)
	mu   sync.Mutex
	conn *sql.Conn // nil while lost and not taken again
	// id is conn's CONNECTION_ID(), taken when conn took the lock.
	id    int64
	taken time.Time
	// held says whether the last check found the lock conn's, for Held,
	// which must not wait for a check that waits for the target.
	held atomic.Bool
}

// Held reports whether the lock is held now, as far as the last check
// could tell: false while it is lost and being taken again, or while the
// target does not answer.
func (l *TargetLock) Held() bool { return l.held.Load() }

// Lock takes the target's paraply lock, held until Release (or the
// process dies). It waits up to lockWait for a holder to go (a process
// SIGKILLed a moment ago holds it until the server notices its connection
// closed), then a lock held elsewhere is a *LockedError (ErrLocked).
func Lock(ctx context.Context, db *sql.DB) (*TargetLock, error) {
	return LockStream(ctx, db, DefaultStream)
}

// LockStream takes stream's lock on the target, as Lock takes the default
// stream's: one paraply process at a time works on a stream, and streams
// do not wait for each other.
func LockStream(ctx context.Context, db *sql.DB, stream string) (*TargetLock, error) {
	l := &TargetLock{db: db, name: lockNameOf(stream)}
	if err := l.take(ctx, lockWait); err != nil {
		return nil, err
	}
	return l, nil
}

// take runs GET_LOCK on a new connection, kept as l's if it takes the
// lock; else the error says who holds it.
func (l *TargetLock) take(ctx context.Context, wait time.Duration) error {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION wait_timeout = ?", int64(lockIdleTimeout.Seconds())); err != nil {
		conn.Close()
		return fmt.Errorf("taking the lock %s on the target: %w", l.name, err)
	}
	var got sql.NullInt64
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?), CONNECTION_ID()", l.name, wait.Seconds()).Scan(&got, &id); err != nil {
		conn.Close()
		return fmt.Errorf("taking the lock %s on the target: %w", l.name, err)
	}
	if !got.Valid || got.Int64 != 1 {
		conn.Close()
		return lockHolder(ctx, l.db, l.name)
	}
	l.conn, l.id, l.taken = conn, id, time.Now()
	l.held.Store(true)
	return nil
}

// Keep checks every interval, until ctx is done, that the lock is still
// held. The server frees it when its connection ends: a target restart,
// a network cut, a KILL. A lost lock is taken again as soon as the target
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
		mine, err := l.stillHeld(ctx)
		switch {
		case err != nil:
			// The target does not answer: look again at the next check,
			// keeping the connection (a network cut the server did not
			// notice leaves the lock with it).
			l.held.Store(false)
			return nil
		case mine:
			l.held.Store(true)
			return nil
		}
		log.Warn("the target lock was lost (its connection ended); taking it again", "lock", l.name, "connection", l.id)
		l.conn.Close()
		l.conn = nil
		l.held.Store(false)
	}
	err := l.take(ctx, 0)
	switch {
	case errors.Is(err, ErrLocked):
		return fmt.Errorf("the target lock was lost and another process holds it now: stopping, two processes must not work on one target: %w", err)
	case err != nil:
		return nil // the target does not answer: try again at the next check
	}
	log.Info("the target lock is held again", "lock", l.name, "connection", l.id)
	return nil
}

// stillHeld asks the target, from a session of the pool (the lock's
// connection stays idle), whether l's connection holds the lock. After a
// target restart connection ids start again: a connection of the new
// server with l's id has been idle less long than l has held the lock,
// and is not l's.
func (l *TargetLock) stillHeld(ctx context.Context) (bool, error) {
	var mine sql.NullBool
	err := l.db.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = ? AND "+
		"(SELECT TIME FROM information_schema.PROCESSLIST WHERE ID = ?) + 2 >= ?",
		l.name, l.id, l.id, int64(time.Since(l.taken).Seconds())).Scan(&mine)
	return mine.Valid && mine.Bool, err
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
