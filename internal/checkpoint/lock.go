package checkpoint

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrLocked is returned by Lock when another paraply process holds the
// target: one at a time may write into it, or change its bookkeeping.
var ErrLocked = errors.New("another paraply process works on this target (it holds the lock paraply.target)")

// lockName is the target-wide named lock (GET_LOCK) a paraply process
// holds while it replicates, applies or hands over. The server frees it
// when the holding connection ends, so a SIGKILLed process frees it too.
const lockName = "paraply.target"

// lockWait is how long Lock waits for another holder.
const lockWait = 10 * time.Second

// Lock takes the target's paraply lock on a connection of its own, held
// until release is called (or the process dies). It waits up to
// lockWait for a holder to go (a process SIGKILLed a moment ago holds it
// until the server notices its connection closed), then a lock held
// elsewhere is ErrLocked.
func Lock(ctx context.Context, db *sql.DB) (release func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", lockName, lockWait.Seconds()).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("taking the lock %s on the target: %w", lockName, err)
	}
	if !got.Valid || got.Int64 != 1 {
		conn.Close()
		return nil, ErrLocked
	}
	return func() { unlock(conn) }, nil
}

// unlock frees the lock, also after the context that took it is done.
// Closing the connection frees it; RELEASE_LOCK first says so at once,
// without waiting for the server to notice.
func unlock(conn *sql.Conn) {
	_, _ = conn.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", lockName)
	conn.Close()
}
