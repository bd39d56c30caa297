package verify

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// releaseTimeout bounds the ROLLBACK that ends a snapshot, which runs even
// when the caller's context is done.
const releaseTimeout = 10 * time.Second

// session is one connection reading a table inside a consistent snapshot,
// with its prepared statements. It is used by one goroutine at a time.
type session struct {
	name  string // "source" or "target", for errors
	from  string // the table it reads, quoted for SQL: each side has its own name under --rewrite-db
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// openSession takes a connection from db, to read table t, and starts a
// read-only REPEATABLE READ transaction with a consistent snapshot on it.
func openSession(ctx context.Context, db *sql.DB, name string, t TableName) (*session, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", name, err)
	}
	s := &session{name: name, from: t.quoted(), conn: conn, stmts: map[string]*sql.Stmt{}}
	for _, q := range []string{
		// Only the next transaction: the session keeps its own level.
		"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			s.close()
			return nil, fmt.Errorf("%s: %s: %w", name, q, err)
		}
	}
	return s, nil
}

// close ends the transaction and returns the connection to its pool. If the
// ROLLBACK fails, the connection may still be inside the transaction, so it
// is discarded instead.
func (s *session) close() {
	for _, st := range s.stmts {
		_ = st.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if _, err := s.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		_ = s.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = s.conn.Close()
}

// query runs q with args on the session, preparing q the first time. A
// table walk runs the same few queries once per chunk.
func (s *session) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, ok := s.stmts[q]
	if !ok {
		var err error
		if st, err = s.conn.PrepareContext(ctx, q); err != nil {
			return nil, s.errorf(err)
		}
		s.stmts[q] = st
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, s.errorf(err)
	}
	return rows, nil
}

// each runs q and calls scan for each row.
func (s *session) each(ctx context.Context, q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return s.errorf(err)
		}
	}
	if err := rows.Err(); err != nil {
		return s.errorf(err)
	}
	return nil
}

// errorf prefixes err with the session's name, once.
func (s *session) errorf(err error) error {
	var se *sessionError
	if errors.As(err, &se) {
		return err
	}
	return &sessionError{side: s.name, err: err}
}

// sessionError is an error on one side's connection.
type sessionError struct {
	side string
	err  error
}

func (e *sessionError) Error() string { return e.side + ": " + e.err.Error() }
func (e *sessionError) Unwrap() error { return e.err }
