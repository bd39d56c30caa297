package applier

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sync/errgroup"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/replay"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// Path is how workers apply row changes.
type Path uint8

// The apply paths.
const (
	// SQLPath turns row changes into SQL statements (sqlgen): any MySQL
	// or MariaDB target, with row compaction; not exact for tables whose
	// target fires triggers, system-versioned tables or sequences.
	SQLPath Path = iota
	// BinlogPath sends the row events themselves for the target's own row
	// applier (package replay): exact as a native replica, needs the
	// BINLOG REPLAY privilege on a MariaDB target. It costs the target
	// more: on the benchmark's write_only backlog one worker applied 4,000
	// tps this way and 7,300 tps with SQL (one BINLOG statement, one round
	// trip and one table open per source transaction).
	BinlogPath
	// AutoPath applies work with SQL, and with the binlog path when one
	// of its tables is one SQL cannot apply exactly (triggers on the
	// target, system versioning, a sequence) or whose definition does not
	// match the binlog's (the target's row applier takes what a replica
	// takes, extra columns at the end for one).
	AutoPath
)

// String is the path's name, as --apply spells it.
func (p Path) String() string {
	switch p {
	case BinlogPath:
		return "binlog"
	case AutoPath:
		return "auto"
	}
	return "sql"
}

// Config configures the worker pool.
type Config struct {
	// Workers is the number of target sessions applying in parallel.
	Workers int
	// Path is how row changes are applied.
	Path Path
	// SourceSession runs DDL with the character sets and sql_mode of the
	// source session, as a replica does; only meaningful when source and
	// target are of one flavor (their collation ids and modes agree).
	SourceSession bool
	// PreserveOrder makes commits happen in source order.
	PreserveOrder bool
	// MaxBackoff bounds the pause between attempts after an error.
	MaxBackoff time.Duration
	Logger     *slog.Logger
	// Observer, if set, is told what workers do (metrics).
	Observer Observer
	// NoCompact turns off compaction: without it a worker merges the
	// changes of each row of a work into one and groups the changes of
	// many rows into one statement, on tables where that is provably
	// equivalent (see sqlgen.Table.Compactable, which assumes that the
	// target has no triggers on replicated tables).
	NoCompact bool
	// PreserveGTIDs commits each work (one source transaction) under its
	// source GTID (see worker.sourceGTID).
	PreserveGTIDs bool
	// NoCompound sends SQL to a MariaDB target as multi-statement packets
	// checked by the worker, as to a MySQL target, instead of compound
	// statements that check themselves (see worker.runBatch): for tests
	// of that path.
	NoCompound bool
}

// Observer receives the workers' events. Methods are called from worker
// goroutines and must be safe for concurrent use.
type Observer interface {
	// Applied: a worker committed work. t says where the time of its last
	// attempt went.
	Applied(worker int, w *stage.Work, t Timing)
	// Retried: an attempt failed with a retryable error.
	Retried(worker int, w *stage.Work, err error)
	// Progress: how far a worker is in a large transaction (at its start
	// and after each piece).
	Progress(worker int, p LargeProgress)
}

// Timing splits a work's last attempt: executing its statements, waiting
// for its commit turn (before the COMMIT, and, for a work with AfterTurn,
// before its second part), and the COMMIT itself.
type Timing struct {
	Exec, Turn, Commit time.Duration
}

type nopObserver struct{}

func (nopObserver) Applied(int, *stage.Work, Timing) {}
func (nopObserver) Retried(int, *stage.Work, error)  {}
func (nopObserver) Progress(int, LargeProgress)      {}

// Pool is the set of workers. Work arrives on a channel and leaves, applied,
// on another; the first error that is not retryable stops every worker.
type Pool struct {
	cfg      Config
	db       *sql.DB
	store    *checkpoint.Store
	seq      *stage.Sequencer
	refusals sqlRefusals
	threads  threads
}

// NewPool applies through db (a pool on the target opened with
// SessionParams), recording progress with store and ordering commits with
// seq.
func NewPool(cfg Config, db *sql.DB, store *checkpoint.Store, seq *stage.Sequencer) *Pool {
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	return &Pool{cfg: cfg, db: db, store: store, seq: seq}
}

// The time zone and sql_mode of a worker's session (see ConfigureSession).
const (
	sessionTimeZone = "+00:00"
	sessionSQLMode  = "NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,ALLOW_INVALID_DATES"
)

// ConfigureSession sets up the driver for worker sessions: one round trip
// per packet of statements (client-side interpolation of placeholders,
// several statements per packet), UPDATE counting matched rather than
// changed rows, TIMESTAMPs in UTC as the binlog holds them, zero dates and
// explicit zeros in AUTO_INCREMENT columns accepted as a replica's SQL
// thread accepts them, row locks only on the rows touched, and a short lock
// wait so that a commit-order deadlock is noticed quickly.
func ConfigureSession(c *mysql.Config) {
	c.InterpolateParams = true
	// The server's own max_allowed_packet, read at connect: a statement
	// larger than it is prepared, and the driver sends its values of a
	// packet's size and more in pieces (see worker.execLong).
	c.MaxAllowedPacket = 0
	c.MultiStatements = true
	c.ClientFoundRows = true
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	c.Params["time_zone"] = "'" + sessionTimeZone + "'"
	// The source accepted every value a row image holds, whatever its
	// sql_mode: the target must store it as given (a replica's row
	// applier copies the bytes), not check it again under a mode of its
	// own. Not strict, so nothing is refused; ALLOW_INVALID_DATES keeps
	// '2004-02-30', which the source stored under that mode, from turning
	// into '0000-00-00'.
	c.Params["sql_mode"] = "'" + sessionSQLMode + "'"
	c.Params["tx_isolation"] = "'READ-COMMITTED'"
	c.Params["innodb_lock_wait_timeout"] = "2"
}

// Run starts the workers and returns when ctx is done or a worker fails.
// Worker i takes its work from in[i] (one channel per worker, so that the
// coordinator chooses who applies: a worker that just committed has its
// session and buffers warm) and sends it to done once committed, with
// Work.Worker set.
func (p *Pool) Run(ctx context.Context, in []chan *stage.Work, done chan<- *stage.Work) error {
	if len(in) != p.cfg.Workers {
		return fmt.Errorf("applier: %d work channels for %d workers", len(in), p.cfg.Workers)
	}
	g, ctx := errgroup.WithContext(ctx)
	for i := 0; i < p.cfg.Workers; i++ {
		w := &worker{id: i, p: p, log: p.cfg.Logger.With("worker", i)}
		g.Go(func() error { return w.run(ctx, in[i], done) })
	}
	defer p.threads.close()
	return g.Wait()
}

// WorkChannels makes the n channels of a pool of n workers.
func WorkChannels(n int) []chan *stage.Work {
	in := make([]chan *stage.Work, n)
	for i := range in {
		in[i] = make(chan *stage.Work)
	}
	return in
}

type worker struct {
	id     int
	p      *Pool
	log    *slog.Logger
	conn   *sql.Conn
	batch  sqlgen.Batch
	replay replay.Builder
	// format is the format description the session was given for BINLOG
	// statements (nil: none yet).
	format *binlog.Format
	// maxPacket is the target's max_allowed_packet, read with conn.
	maxPacket int
	// compound: the target runs each packet of SQL as a compound
	// statement (see runBatch).
	compound bool
	// mariadb: the target is MariaDB, read with conn; insertHistory: it
	// has system_versioning_insert_history (10.11 and later).
	mariadb, insertHistory bool
	// names is the session's character set and collation as the driver
	// set them ("utf8mb4 COLLATE utf8mb4_general_ci"), which a statement
	// run with the source session's changes (see restoreSession).
	names string
}

// errNotHead is a data error met by work that is not next to commit: what
// it depends on may have been rolled back after it started, so it runs
// again once everything before it has committed, and only an error then is
// real.
var errNotHead = errors.New("data error before the commit turn")

func (w *worker) run(ctx context.Context, in <-chan *stage.Work, done chan<- *stage.Work) error {
	defer w.closeConn()
	for {
		select {
		case <-ctx.Done():
			return nil
		case work, ok := <-in:
			if !ok {
				return nil
			}
			if err := w.apply(ctx, work); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				work.Err = err
				return err
			}
			work.Worker = w.id
			select {
			case done <- work:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// apply runs work until it commits or fails for good.
func (w *worker) apply(ctx context.Context, work *stage.Work) error {
	turnFirst := false
	backoff := 10 * time.Millisecond
	for {
		tm, err := w.attempt(ctx, work, turnFirst)
		if err == nil {
			w.p.cfg.Observer.Applied(w.id, work, tm)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c := classify(err)
		if c == fatal {
			return err
		}
		work.Retries++
		w.p.cfg.Observer.Retried(w.id, work, err)
		if work.Retries%retryWarnEvery == 0 {
			// Lock waits and deadlocks between workers are the normal cost
			// of applying in parallel; a work that keeps failing is not (a
			// lock held by another session on the target, say).
			w.log.Warn("still retrying", "gtid", work.Txns[0].GTID, "attempt", work.Retries, "err", err)
		} else {
			w.log.Debug("retrying", "gtid", work.Txns[0].GTID, "attempt", work.Retries, "err", err)
		}
		switch {
		case errors.Is(err, stage.ErrAborted), errors.Is(err, errNotHead):
			// Let the transactions before this one commit first, or the
			// same locks block them again.
			turnFirst = true
			continue
		case c == reconnect:
			w.closeConn()
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(2*backoff, w.p.cfg.MaxBackoff)
	}
}

// attempt applies work once and says where the time went.
func (w *worker) attempt(ctx context.Context, work *stage.Work, turnFirst bool) (tm Timing, err error) {
	conn, err := w.session(ctx)
	if err != nil {
		return tm, err
	}
	if work.Txns[0].SourceRestarted {
		w.p.threads.close()
		if _, err := conn.ExecContext(ctx, checkpoint.TempForgetSQL); err != nil {
			return tm, fmt.Errorf("forgetting the temporary tables of the source before its restart: %w", err)
		}
	}
	if id := work.Txns[0].Session; id != 0 {
		// Its source connection's session, which holds its temporary
		// tables, in place of the worker's own for this work.
		if conn, err = w.p.threads.take(ctx, w.p.db, id); err != nil {
			return tm, w.threadError(work.Txns[0], err)
		}
		own, format := w.conn, w.format
		w.conn, w.format = conn, nil // BINLOG statements give it the format anew
		defer func() {
			w.p.threads.give(id, w.conn, err == nil && work.Txns[0].SessionEnds)
			w.conn, w.format = own, format
		}()
	}
	if work.Txns[0].DDL != nil {
		t0 := time.Now()
		err := w.ddl(ctx, conn, work)
		tm.Exec = time.Since(t0)
		if err != nil || !work.Txns[0].Txn.HasRows() {
			return tm, err
		}
		// CREATE ... SELECT: its rows, now that the table exists; the DDL
		// waited for its turn (and may have closed the session).
		turnFirst = true
		if conn, err = w.session(ctx); err != nil {
			return tm, err
		}
	}
	if turnFirst && w.p.cfg.PreserveOrder {
		t0 := time.Now()
		if err := w.p.seq.WaitTurn(ctx, work.First()); err != nil {
			return tm, err
		}
		tm.Turn = time.Since(t0)
	}
	if err := w.sourceGTID(ctx, conn, work.Txns[0]); err != nil {
		return tm, err
	}
	path, stmts := w.p.cfg.Path, hasStatements(work)
	if path == AutoPath && !stmts {
		if path, err = w.choosePath(ctx, conn, work); err != nil {
			return tm, err
		}
	}
	if work.AfterTurn != nil && !turnFirst && w.p.cfg.PreserveOrder && (path == BinlogPath || stmts) {
		// Only SQL applies a work in two parts (see execute).
		t0 := time.Now()
		if err := w.p.seq.WaitTurn(ctx, work.First()); err != nil {
			return tm, err
		}
		tm.Turn, turnFirst = time.Since(t0), true
	}
	var d time.Duration
	switch {
	case work.Txns[0].Large != nil:
		d, err = w.applyLarge(ctx, conn, work, path, turnFirst)
	case stmts:
		d, err = w.executeStatements(ctx, work)
	case path == BinlogPath:
		d, err = w.replayWork(ctx, conn, work, turnFirst)
	default:
		d, err = w.executeSQL(ctx, work, turnFirst, &tm)
	}
	tm.Exec += d
	if err != nil {
		return tm, err
	}
	if conn, err = w.session(ctx); err != nil {
		return tm, err
	}
	if w.p.cfg.PreserveOrder && !turnFirst {
		t0 := time.Now()
		if err := w.p.seq.WaitTurn(ctx, work.First()); err != nil {
			w.rollback(conn)
			return tm, err
		}
		tm.Turn += time.Since(t0)
	}
	t0 := time.Now()
	if work.Txns[0].Txn.RolledBack {
		err = w.rollBackAsSource(ctx, conn, work)
	} else {
		_, err = conn.ExecContext(ctx, "COMMIT")
	}
	tm.Commit = time.Since(t0)
	if err != nil {
		if classify(err) != reconnect {
			w.rollback(conn)
			return tm, err
		}
		// The COMMIT may or may not have happened: the checkpoint rows say.
		w.closeConn()
		if ok, cerr := w.committed(ctx, work); cerr != nil || !ok {
			return tm, err
		}
	}
	work.Committed(w.p.seq)
	return tm, nil
}

// executeSQL runs work as SQL statements (SQLPath), compacted unless that
// is off or cannot keep the source's order. On success the target
// transaction stays open on w's session. A wait for the commit turn in
// the middle of work (see execute) is added to tm.Turn.
func (w *worker) executeSQL(ctx context.Context, work *stage.Work, turnFirst bool, tm *Timing) (time.Duration, error) {
	var total time.Duration
	for compact, again := !w.p.cfg.NoCompact && !rollsBack(work), false; ; compact, again = false, true {
		conn, err := w.session(ctx)
		if err != nil {
			return total, err
		}
		if again {
			// The failed attempt's rollback may have ended the session:
			// a new one must commit under the source's GTID too.
			if err := w.sourceGTID(ctx, conn, work.Txns[0]); err != nil {
				return total, err
			}
		}
		if err := w.refuseInexact(ctx, conn, work); err != nil {
			return total, err
		}
		d, err := w.execute(ctx, conn, work, compact, turnFirst, tm)
		total += d
		if !errors.Is(err, errCompacted) {
			return total, err
		}
		// Compacted statements name a range of transactions: run the
		// work again statement by statement to find the one, or to
		// succeed if the target changed meanwhile.
		w.log.Info("applying the work again without compaction", "gtid", work.Txns[0].GTID, "transactions", len(work.Txns), "err", err)
	}
}

// errCompacted is a data error met by compacted statements (see
// Config.NoCompact), which name the range of transactions they merge:
// attempt runs the work again without compaction to name the one.
var errCompacted = errors.New("data error in compacted statements")

// execute builds work's statements, runs them and checks what they
// affected. On success the target transaction stays open; on error it is
// rolled back.
//
// Work with AfterTurn, not yet at its turn, runs in two parts: the
// transactions that do not wait for earlier work, then, once every
// transaction before the work has committed (the wait is added to
// tm.Turn), those that do. The parts are one target transaction;
// compaction merges within each part only.
func (w *worker) execute(ctx context.Context, conn *sql.Conn, work *stage.Work, compact, turnFirst bool, tm *Timing) (time.Duration, error) {
	if work.AfterTurn == nil || turnFirst || !w.p.cfg.PreserveOrder {
		return w.executePart(ctx, conn, work, compact, turnFirst, wholeWork)
	}
	d, err := w.executePart(ctx, conn, work, compact, false, beforeTurn)
	if err != nil {
		return d, err
	}
	t0 := time.Now()
	if err := w.p.seq.WaitTurn(ctx, work.First()); err != nil {
		w.rollback(conn)
		return d, err
	}
	tm.Turn += time.Since(t0)
	d2, err := w.executePart(ctx, conn, work, compact, true, afterTurn)
	return d + d2, err
}

// part is which of a work's transactions a batch holds (see execute).
type part uint8

const (
	wholeWork  part = iota
	beforeTurn      // those not marked AfterTurn; the batch starts the target transaction
	afterTurn       // those marked AfterTurn; the batch records the work's GTIDs
)

// holds reports whether the batch of part p holds work's i-th transaction.
func (p part) holds(work *stage.Work, i int) bool {
	return p == wholeWork || work.AfterTurn[i] == (p == afterTurn)
}

// executePart is execute for part p of work. turnFirst says every
// transaction before the work has committed.
func (w *worker) executePart(ctx context.Context, conn *sql.Conn, work *stage.Work, compact, turnFirst bool, p part) (time.Duration, error) {
	if err := w.build(work, compact, p); err != nil {
		return 0, err
	}
	t0 := time.Now()
	mismatch, err := w.runBatch(ctx, conn, &w.batch, work)
	d := time.Since(t0)
	if err != nil {
		if err := w.abandon(conn, work, err, turnFirst); err != nil {
			return d, err
		}
		if compact {
			return d, fmt.Errorf("%w: %v", errCompacted, err)
		}
		return d, w.pinpoint(ctx, conn, work, err)
	}
	if err := mismatch; err != nil {
		w.rollback(conn)
		var ce *stage.ConflictError
		switch {
		case w.early(work, turnFirst):
			return d, fmt.Errorf("%w: %v", errNotHead, err)
		case compact && errors.As(err, &ce):
			// Not yet a conflict, and not of ce.GTID: of a range.
			return d, fmt.Errorf("%w: %s %s: %s", errCompacted, ce.Table, ce.Key, ce.What)
		case compact:
			return d, fmt.Errorf("%w: %v", errCompacted, err)
		}
		return d, err
	}
	return d, nil
}

// abandon rolls back a failed attempt at work and returns the error to
// retry with: a transient one, or errNotHead when work tried before its
// turn (what failed may be an earlier transaction's doing). nil means the
// failure is work's own, for the caller to report.
func (w *worker) abandon(conn *sql.Conn, work *stage.Work, err error, turnFirst bool) error {
	w.rollback(conn)
	w.unblockHead(work, err)
	switch {
	case classify(err) != fatal:
		return err
	case w.early(work, turnFirst):
		return fmt.Errorf("%w: %v", errNotHead, err)
	}
	return nil
}

// unblockHead makes later transactions waiting for their commit turn
// retry when work, next to commit, met a lock wait: what holds its locks
// can only be one of them.
func (w *worker) unblockHead(work *stage.Work, err error) {
	if isLockWait(err) && work.First() == w.p.seq.Prefix()+1 && w.p.cfg.PreserveOrder {
		if n := w.p.seq.AbortWaiters(); n > 0 {
			w.log.Info("lock wait at the head of the commit order: later transactions retry", "gtid", work.Txns[0].GTID, "aborted", n)
		}
	}
}

// rollBackAsSource ends the target transaction of work, a transaction
// the source rolled back (binlog.Txn.RolledBack), as its replica does:
// ROLLBACK, so that only what a rollback does not undo stays (rows of
// non-transactional tables); then its GTID is recorded in a target
// transaction of its own. A crash between the two applies it again, and
// its non-transactional rows with it, as on MariaDB's replica, whose
// gtid_slave_pos is no more atomic with such rows.
func (w *worker) rollBackAsSource(ctx context.Context, conn *sql.Conn, work *stage.Work) error {
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		return err
	}
	b := &w.batch
	b.Compact = false
	b.Reset()
	b.Raw("START TRANSACTION")
	bookkeeping(work, b.Raw)
	if _, err := w.runBatchAs(ctx, conn, b, work, false); err != nil {
		w.rollback(conn)
		return err
	}
	_, err := conn.ExecContext(ctx, "COMMIT")
	return err
}

// rollsBack reports whether a transaction of work rolls back to a
// savepoint: its statements must then run in the source's order, which
// compaction does not keep.
func rollsBack(work *stage.Work) bool {
	for _, t := range work.Txns {
		if t.Txn.RollsBackToSavepoint() {
			return true
		}
	}
	return false
}

// early reports whether work ran before everything ahead of it committed
// (see errNotHead).
func (w *worker) early(work *stage.Work, afterTurn bool) bool {
	return w.p.cfg.PreserveOrder && !afterTurn && work.First() != w.p.seq.Prefix()+1
}

// build fills the worker's batch with the statements of part p of work,
// compacted if compact is set (see sqlgen.Batch.Compact: the work is one
// target transaction, so the order of its statements is invisible to
// others).
func (w *worker) build(work *stage.Work, compact bool, p part) error {
	b := &w.batch
	b.Compact = compact
	b.Reset()
	if p != afterTurn {
		b.Raw("START TRANSACTION")
	}
	for i, t := range work.Txns {
		if !p.holds(work, i) {
			continue
		}
		off, on := rowChecks(t)
		rawAll(b, off)
		stmts := t.Txn.Statements
		for j, r := range t.Txn.Rows {
			stmts = savepoints(b, stmts, j)
			if err := b.Add(t.Tables[j], r, i); err != nil {
				return &stage.ConflictError{GTID: t.GTID, Table: t.Tables[j].Name.String(), What: "cannot build SQL", Err: err}
			}
		}
		savepoints(b, stmts, len(t.Txn.Rows))
		rawAll(b, on)
	}
	if p != beforeTurn {
		bookkeeping(work, b.Raw)
	}
	return nil
}

// rawAll adds statements qs to b.
func rawAll(b *sqlgen.Batch, qs []string) {
	for _, q := range qs {
		b.Raw(q)
	}
}

// bookkeeping adds to a target transaction, through exec, the statements
// that record work's GTIDs as applied and forget the markers of DDL
// statements that ran before its rows (see worker.ddl).
func bookkeeping(work *stage.Work, exec func(q string, args ...any)) {
	q, args := checkpoint.AppliedSQL(work.Last().GTID, work.Others())
	exec(q, args...)
	for _, t := range work.Txns {
		if t.DDL != nil && t.Txn.HasRows() {
			for _, m := range ddlMarkers(t) {
				q, args := checkpoint.ForgetSQL(m)
				exec(q, args...)
			}
		}
	}
}

// savepoints adds the savepoint statements of stmts logged before rows
// event at, and returns the statements after them.
func savepoints(b *sqlgen.Batch, stmts []binlog.Statement, at int) []binlog.Statement {
	for len(stmts) > 0 && stmts[0].At <= at {
		if stmts[0].Kind == binlog.StmtSavepoint {
			b.Raw(stmts[0].Query)
		}
		stmts = stmts[1:]
	}
	return stmts
}

// rowChecks returns the statements that turn off, around t's rows, the
// checks the source ran them without (its row events say so:
// foreign_key_checks=0, check_constraint_checks=0), as MariaDB's row
// applier does, and those that turn them on again; none when it ran all.
func rowChecks(t *stage.Txn) (off, on []string) {
	var flags uint16
	for _, r := range t.Txn.Rows {
		flags |= r.Flags
	}
	if flags&binlog.RowsFlagNoForeignKeyCheck != 0 {
		off, on = append(off, "SET foreign_key_checks = 0"), append(on, "SET foreign_key_checks = 1")
	}
	if flags&binlog.RowsFlagNoCheckConstraintCheck != 0 {
		off, on = append(off, "SET check_constraint_checks = 0"), append(on, "SET check_constraint_checks = 1")
	}
	return off, on
}

// check compares the affected rows of each statement of b, built from
// work, with what the binlog says it touched.
func check(b *sqlgen.Batch, work *stage.Work, affected []int64) error {
	exp := b.Expects()
	if len(affected) != len(exp) {
		return fmt.Errorf("target answered %d results for %d statements", len(affected), len(exp))
	}
	for i, e := range exp {
		if e.Rows >= 0 && affected[i] != e.Rows {
			return rowCountConflict(work, e, affected[i])
		}
	}
	return nil
}

// rowCountConflict is the conflict of a statement, built from work, that
// affected rows on the target where the binlog says e.Rows.
func rowCountConflict(work *stage.Work, e sqlgen.Expect, affected int64) *stage.ConflictError {
	t := work.Txns[e.Txn]
	what := fmt.Sprintf("%s matched %d rows on the target, the source changed %d", strings.ToUpper(e.Op.String()), affected, e.Rows)
	if affected == 0 {
		what = fmt.Sprintf("row to %s not found on the target", e.Op)
	}
	return &stage.ConflictError{GTID: t.GTID, Table: e.Table.String(), Key: e.Key, What: what}
}

// pinpoint finds the transaction and table behind batchErr, a fatal
// error of work's statements run as one packet, which does not say which
// statement failed. It runs work's row events again one by one, in a
// target transaction that it rolls back, and returns a ConflictError for
// the first that fails. If none fails (the target changed meanwhile), the
// error names the work's transactions.
func (w *worker) pinpoint(ctx context.Context, conn *sql.Conn, work *stage.Work, batchErr error) error {
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return err
	}
	defer w.rollback(conn)
	var b sqlgen.Batch
	for i, t := range work.Txns {
		off, on := rowChecks(t)
		for j, r := range t.Txn.Rows {
			b.Reset()
			rawAll(&b, off)
			table := t.Tables[j].Name.String()
			if err := b.Add(t.Tables[j], r, i); err != nil {
				return &stage.ConflictError{GTID: t.GTID, Table: table, What: "cannot build SQL", Err: err}
			}
			rawAll(&b, on)
			mismatch, err := w.runBatch(ctx, conn, &b, work)
			if err != nil {
				if classify(err) != fatal {
					return err
				}
				return &stage.ConflictError{GTID: t.GTID, Table: table, What: describe(err), Err: err}
			}
			if mismatch != nil {
				return mismatch
			}
		}
	}
	w.log.Warn("the work failed as a whole but its row events apply one by one", "gtid", work.Txns[0].GTID, "err", batchErr)
	return w.conflict(work, batchErr)
}

// conflict turns a fatal error of work's statements into a ConflictError
// naming its transaction, or the range of its transactions.
func (w *worker) conflict(work *stage.Work, err error) error {
	t := work.Txns[0]
	if len(work.Txns) > 1 {
		return &stage.ConflictError{GTID: t.GTID + " .. " + work.Txns[len(work.Txns)-1].GTID, What: describe(err), Err: err}
	}
	return &stage.ConflictError{GTID: t.GTID, What: describe(err), Err: err}
}

// committed asks the target whether work's GTIDs are recorded, after a
// COMMIT whose answer was lost.
func (w *worker) committed(ctx context.Context, work *stage.Work) (bool, error) {
	gtids := work.GTIDs()
	for {
		n, err := w.p.store.Applied(ctx, gtids)
		if err == nil {
			return n == len(gtids), nil
		}
		if classify(err) == fatal {
			return false, err
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// retryWarnEvery is how many attempts of one work pass between warnings.
const retryWarnEvery = 10

// rollback ends the session's transaction, after the caller's context is
// done too; a target that does not answer within rollbackWait loses the
// session instead (the server rolls back when it ends).
func (w *worker) rollback(conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackWait)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		w.closeConn()
	}
}

// rollbackWait bounds a rollback.
const rollbackWait = 10 * time.Second

// session returns the worker's target session, opening it if needed.
func (w *worker) session(ctx context.Context) (*sql.Conn, error) {
	if w.conn != nil {
		return w.conn, nil
	}
	c, err := w.p.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var version, charset, collation string
	if err := c.QueryRowContext(ctx, "SELECT @@max_allowed_packet, VERSION(), @@character_set_client, @@collation_connection").
		Scan(&w.maxPacket, &version, &charset, &collation); err != nil {
		c.Close()
		return nil, err
	}
	w.mariadb = strings.Contains(strings.ToLower(version), "mariadb")
	w.insertHistory = w.mariadb && versionAtLeast(version, 10, 11)
	w.names = charset + " COLLATE " + collation
	// MariaDB runs compound statements outside stored programs since 10.1.1.
	w.compound = !w.p.cfg.NoCompound && w.mariadb
	w.conn = c
	return c, nil
}

func (w *worker) closeConn() {
	if w.conn == nil {
		return
	}
	w.format = nil
	// Raw lets us discard the session so that the pool does not reuse a
	// connection in an unknown transaction state.
	_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
	w.conn.Close()
	w.conn = nil
}

// execMulti sends a packet of statements and returns each one's affected
// rows.
func execMulti(ctx context.Context, conn *sql.Conn, query string, args []any) ([]int64, error) {
	var affected []int64
	err := conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("the target driver cannot execute statements directly")
		}
		named := make([]driver.NamedValue, len(args))
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: driverValue(a)}
		}
		res, err := ex.ExecContext(ctx, query, named)
		if err != nil {
			return err
		}
		affected = res.(mysql.Result).AllRowsAffected()
		return nil
	})
	return affected, err
}

// driverValue converts a decoded binlog value to one of the types the
// driver interpolates.
func driverValue(v any) driver.Value {
	switch v := v.(type) {
	case nil, int64, uint64, float64, bool, []byte, string, time.Time:
		return v
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case int:
		return int64(v)
	case uint8:
		return uint64(v)
	case uint16:
		return uint64(v)
	case uint32:
		return uint64(v)
	case uint:
		return uint64(v)
	case float32:
		return float64(v)
	}
	return fmt.Sprint(v)
}
