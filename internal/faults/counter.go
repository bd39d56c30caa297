package faults

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// CounterSetup creates the counter workload's tables on the source:
// soak.c holds 20 counters at 0, and soak.hist one row per transaction,
// (session, sequence number). hist has no primary or unique key (only a
// plain index), so a transaction applied twice leaves a duplicate row
// instead of failing on a key: doubles are counted, not merely refused.
var CounterSetup = []string{
	"CREATE DATABASE soak",
	"CREATE TABLE soak.c (id INT PRIMARY KEY, n BIGINT NOT NULL)",
	"CREATE TABLE soak.hist (sess INT NOT NULL, seq BIGINT NOT NULL, at DATETIME(6) NOT NULL DEFAULT NOW(6), KEY (sess, seq))",
	"INSERT INTO soak.c VALUES (1,0),(2,0),(3,0),(4,0),(5,0),(6,0),(7,0),(8,0),(9,0),(10,0)," +
		"(11,0),(12,0),(13,0),(14,0),(15,0),(16,0),(17,0),(18,0),(19,0),(20,0)",
}

// Counter commits transactions on the source until stopped. Session s's
// k-th transaction adds 1 to a counter and inserts (s, k) into soak.hist.
// When a commit's outcome is unknown (the source died under it), the
// session asks the source, once it answers again, whether (s, k) is there,
// and runs k again only if it is not; so each session's committed
// transactions are exactly 1..Acked()[s], and the source holds
// sum(Acked()) transactions. Methods are safe for concurrent use.
type Counter struct {
	db    *sql.DB
	pause time.Duration
	acked []atomic.Int64
	// lookups counts commits whose outcome had to be looked up.
	lookups atomic.Int64
	stop    chan struct{}
	wg      sync.WaitGroup

	mu  sync.Mutex // guards err
	err error
}

// StartCounter starts sessions sessions on db (the source, directly), each
// pausing up to pause between transactions.
func StartCounter(db *sql.DB, sessions int, pause time.Duration) *Counter {
	c := &Counter{db: db, pause: pause, acked: make([]atomic.Int64, sessions), stop: make(chan struct{})}
	for s := range sessions {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := c.session(s); err != nil {
				c.mu.Lock()
				if c.err == nil {
					c.err = err
				}
				c.mu.Unlock()
			}
		}()
	}
	return c
}

// Acked returns, per session, the number of transactions committed.
func (c *Counter) Acked() []int64 {
	out := make([]int64, len(c.acked))
	for i := range c.acked {
		out[i] = c.acked[i].Load()
	}
	return out
}

// Committed is the sum of Acked.
func (c *Counter) Committed() int64 {
	var n int64
	for _, a := range c.Acked() {
		n += a
	}
	return n
}

// Lookups is how many commits had an unknown outcome that was looked up.
func (c *Counter) Lookups() int64 { return c.lookups.Load() }

// Stop stops the sessions, waits for them and returns the first error that
// stopped one (an error other than the source going away).
func (c *Counter) Stop() error {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Counter) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

func (c *Counter) session(s int) error {
	rng := rand.New(rand.NewPCG(uint64(s), 99))
	seq := int64(1)
	for !c.stopped() {
		err := c.commit(s, seq, 1+rng.IntN(20))
		if err != nil {
			if !lost(err) {
				return fmt.Errorf("counter session %d, transaction %d: %w", s, seq, err)
			}
			c.lookups.Add(1)
			ok, lerr := c.lookup(s, seq)
			if lerr != nil {
				return lerr
			}
			if !ok {
				continue // not committed: run seq again
			}
		}
		c.acked[s].Store(seq)
		seq++
		if c.pause > 0 {
			time.Sleep(time.Duration(rng.Int64N(int64(c.pause) + 1)))
		}
	}
	return nil
}

// commit runs one transaction on a connection of its own, so that a
// connection broken under it is never reused.
func (c *Counter) commit(s int, seq int64, id int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	fail := func(err error) error {
		// Discard the session: its state is unknown.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return err
	}
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return fail(err)
	}
	if _, err := conn.ExecContext(ctx, "UPDATE soak.c SET n = n + 1 WHERE id = ?", id); err != nil {
		return fail(err)
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO soak.hist (sess, seq) VALUES (?, ?)", s, seq); err != nil {
		return fail(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fail(err)
	}
	return nil
}

// lookup waits until the source answers and says whether (s, seq) is
// committed. The connection that ran it is gone with the server that died,
// so the answer is final.
func (c *Counter) lookup(s int, seq int64) (bool, error) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var n int
		err := c.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM soak.hist WHERE sess = ? AND seq = ?", s, seq).Scan(&n)
		cancel()
		switch {
		case err == nil && n > 1:
			return false, fmt.Errorf("counter session %d: transaction %d is on the source %d times", s, seq, n)
		case err == nil:
			return n == 1, nil
		case !lost(err):
			return false, fmt.Errorf("counter session %d: looking up transaction %d: %w", s, seq, err)
		}
		// Wait even when stopping: the outcome must be known for the
		// final count.
		time.Sleep(100 * time.Millisecond)
	}
}

// lost reports errors that mean the source went away (or is starting, or
// shutting down) rather than a mistake in the workload.
func lost(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1053, // server shutdown in progress
			1927, // connection killed
			1205, // lock wait timeout
			1213, // deadlock
			1040, // too many connections
			1152, // aborted connection
			2006, 2013:
			return true
		}
		return false
	}
	return true // network errors, driver.ErrBadConn, mysql.ErrInvalidConn, timeouts
}

// Tally is what a server holds of the counter workload.
type Tally struct {
	Sum      int64 // sum of the counters
	Rows     int64 // rows in soak.hist
	Distinct int64 // distinct (sess, seq) in soak.hist
}

// Count reads the tally from db (source or target).
func Count(ctx context.Context, db *sql.DB) (Tally, error) {
	var t Tally
	err := db.QueryRowContext(ctx, "SELECT (SELECT COALESCE(SUM(n), 0) FROM soak.c), (SELECT COUNT(*) FROM soak.hist), "+
		"(SELECT COUNT(*) FROM (SELECT DISTINCT sess, seq FROM soak.hist) d)").Scan(&t.Sum, &t.Rows, &t.Distinct)
	return t, err
}

// Check compares db (the target) with acked (a snapshot of Acked whose
// transactions db should all have): lost is how many of them it lacks,
// doubled how many extra copies it holds.
func Check(ctx context.Context, db *sql.DB, acked []int64) (lost, doubled int64, err error) {
	for s, k := range acked {
		var rows, distinct int64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT seq) FROM soak.hist WHERE sess = ? AND seq BETWEEN 1 AND ?", s, k).
			Scan(&rows, &distinct); err != nil {
			return 0, 0, err
		}
		lost += k - distinct
		doubled += rows - distinct
	}
	return lost, doubled, nil
}
