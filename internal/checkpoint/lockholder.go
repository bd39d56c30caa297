package checkpoint

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// LockedError is the ErrLocked of a lock held by another connection: who
// holds it, as the target's process list shows it, so that the operator
// can find the process (or, if it is gone and the server has not noticed,
// end its connection).
type LockedError struct {
	// Lock is the lock's name (paraply.target, paraply.target.NAME).
	Lock string
	// Connection is the holder's connection id on the target, 0 if it
	// let go of the lock in the meantime.
	Connection int64
	// User and Host are the holder's account and client address
	// (host:port), "" if this account may not see them (another
	// account's connection, without PROCESS).
	User, Host string
	// Since is when the holder took the lock: its connection runs
	// nothing after that (a paraply older than this one checks it every
	// 5 s, so then it is the last check). Zero if unknown.
	Since time.Time
}

func (e *LockedError) Error() string {
	switch {
	case e.Connection == 0:
		return fmt.Sprintf("%v (it held the lock %s, and has let go of it since: try again)", ErrLocked, e.Lock)
	case e.Host == "":
		return fmt.Sprintf("%v: connection %d holds the lock %s (another account's: its host and age need PROCESS to see). "+
			"Stop that paraply first; if it is gone and the target has not noticed, KILL %d on the target",
			ErrLocked, e.Connection, e.Lock, e.Connection)
	}
	return fmt.Sprintf("%v: connection %d of %s from %s holds the lock %s, since %s (%s ago). "+
		"Stop that paraply first (paraply status --target lists the streams and which run); if it is gone and the target has not noticed, KILL %d on the target",
		ErrLocked, e.Connection, e.User, e.Host, e.Lock, e.Since.UTC().Format(time.DateTime+" MST"),
		time.Since(e.Since).Round(time.Second), e.Connection)
}

// Unwrap makes a LockedError an ErrLocked for errors.Is.
func (e *LockedError) Unwrap() error { return ErrLocked }

// lockHolder returns the LockedError of lock name: its holder as the
// target's process list shows it.
func lockHolder(ctx context.Context, db *sql.DB, name string) error {
	e := &LockedError{Lock: name}
	var id sql.NullInt64
	var user, host sql.NullString
	var idle sql.NullInt64
	err := db.QueryRowContext(ctx, "SELECT l.id, p.USER, p.HOST, p.TIME FROM (SELECT IS_USED_LOCK(?) AS id) l "+
		"LEFT JOIN information_schema.PROCESSLIST p ON p.ID = l.id", name).Scan(&id, &user, &host, &idle)
	if err != nil {
		return fmt.Errorf("%w (it holds the lock %s; who, the target did not say: %v)", ErrLocked, name, err)
	}
	e.Connection, e.User, e.Host = id.Int64, user.String, host.String
	if idle.Valid {
		e.Since = time.Now().Add(-time.Duration(idle.Int64) * time.Second)
	}
	return e
}
