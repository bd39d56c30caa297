package applier

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"
)

// MaxThreadSessions bounds the target sessions kept for source
// connections that hold temporary tables (see threads).
const MaxThreadSessions = 32

// threads are the target sessions of source connections that hold
// temporary tables: a statement-format statement that reads one must run
// in the session that created it, across transactions, as a replica's SQL
// thread keeps them. A transaction that needs one is applied alone
// (Txn.Alone), by whichever worker takes it, in that session; one source
// connection's transactions never run at once (a connection commits one
// after the other, and its statements wait for what came before). A
// session that breaks while it holds temporary tables is lost, and so
// are they: the next transaction of its connection fails rather than run
// without them.
type threads struct {
	mu sync.Mutex // guards m
	m  map[uint32]*threadSession
}

type threadSession struct {
	conn *sql.Conn
	lost bool // broke while holding temporary tables
}

// ErrTempTablesLost is returned for a transaction of a source connection
// whose temporary tables the target session that held them lost.
var ErrTempTablesLost = fmt.Errorf("the target session holding this source connection's temporary tables was lost")

// take returns the session of source connection id, opening one on db if
// it has none (its first temporary table is about to be created).
func (th *threads) take(ctx context.Context, db *sql.DB, id uint32) (*sql.Conn, error) {
	th.mu.Lock()
	defer th.mu.Unlock()
	if th.m == nil {
		th.m = map[uint32]*threadSession{}
	}
	if s := th.m[id]; s != nil {
		if s.lost {
			return nil, ErrTempTablesLost
		}
		return s.conn, nil
	}
	if len(th.m) >= MaxThreadSessions {
		return nil, fmt.Errorf("more than %d source connections hold temporary tables at once (each needs a target session of its own)", MaxThreadSessions)
	}
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	th.m[id] = &threadSession{conn: c}
	return c, nil
}

// give returns the session of id after a work: conn is what the worker
// holds of it now (nil if it closed it: its temporary tables are gone),
// and ends says the connection holds no temporary table any more.
func (th *threads) give(id uint32, conn *sql.Conn, ends bool) {
	th.mu.Lock()
	defer th.mu.Unlock()
	s := th.m[id]
	if s == nil {
		return
	}
	switch {
	case conn == nil && !ends:
		s.lost, s.conn = true, nil
	case ends:
		if conn != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			conn.Close()
		}
		delete(th.m, id)
	}
}

// close closes every session (the pool stops).
func (th *threads) close() {
	th.mu.Lock()
	defer th.mu.Unlock()
	for id, s := range th.m {
		if s.conn != nil {
			s.conn.Close()
		}
		delete(th.m, id)
	}
}
