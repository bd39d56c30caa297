package clone

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/checkpoint"
)

// ErrReplicating is returned when the stream already replicates (its
// checkpoint holds a position) and no clone of it ever ran: a clone seeds
// a stream, it does not copy over one.
var ErrReplicating = errors.New("the stream already replicates on this target")

// ErrTablesExist is returned by a first run when the target holds tables
// it would copy, and Config.Overwrite is not set.
var ErrTablesExist = errors.New("the target already holds tables the clone would copy")

// Result is how a clone ended.
type Result struct {
	// Position is where the target stands: replicate starts there.
	Position string
	// AlreadyDone: an earlier run had finished the clone; this one did
	// nothing.
	AlreadyDone bool
	// Runs is how many runs the copy took (this one included).
	Runs int
	// Progress is the last progress.
	Progress Progress
}

// Cloner copies a source into a target for a stream. Progress may be
// called while Run runs.
type Cloner struct {
	cfg Config
	log *slog.Logger

	// loads: the target takes LOAD DATA LOCAL (local_infile), with which
	// the copy writes its rows; else with INSERT statements.
	loads bool

	mu       sync.Mutex // guards what follows
	phase    string
	position string
	blocked  time.Duration
	started  time.Time
	runs     []*tableRun
}

// New returns a Cloner for cfg; Run runs it.
func New(cfg Config) *Cloner {
	return &Cloner{cfg: cfg, log: cfg.logger(), phase: "starting", started: time.Now()}
}

// Stream is the stream the clone seeds (for the metrics' label).
func (c *Cloner) Stream() string { return c.cfg.Stream.Name }

// Progress returns the clone's progress now.
func (c *Cloner) Progress() Progress {
	c.mu.Lock()
	phase, pos, blocked, started, runs := c.phase, c.position, c.blocked, c.started, c.runs
	c.mu.Unlock()
	return gather(phase, pos, blocked, started, runs, time.Now())
}

func (c *Cloner) setPhase(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.phase = p
}

// started is what a run opened: the servers, the stream's bookkeeping
// and its lock.
type started struct {
	name   string
	src    *sql.DB // the source, for information_schema and definitions
	tgt    *sql.DB // the target, for DDL and bookkeeping (utf8mb4 sessions)
	wdb    *sql.DB // the target, for the copy's writes (writeSession)
	store  *checkpoint.Store
	clones *checkpoint.CloneStore
	lock   *checkpoint.TargetLock
	target string // for errors
}

// relock takes the stream's lock again.
func (st *started) relock(ctx context.Context) error {
	lock, err := checkpoint.LockStream(ctx, st.tgt, st.name)
	if err != nil {
		return fmt.Errorf("target %s: %w", st.target, err)
	}
	st.lock = lock
	return nil
}

func (st *started) close() {
	if st.lock != nil {
		st.lock.Release()
	}
	for _, db := range []*sql.DB{st.src, st.tgt, st.wdb} {
		if db != nil {
			db.Close()
		}
	}
}

// Run copies the source's tables into the target at one position of the
// source, then leaves the stream's checkpoint at that position for
// replicate. A clone killed resumes where it stopped (see the package
// doc); one finished already returns at once (Result.AlreadyDone).
func (c *Cloner) Run(ctx context.Context) (Result, error) {
	if err := c.cfg.Validate(); err != nil {
		return Result{}, err
	}
	st, err := c.open(ctx)
	defer st.close()
	if err != nil {
		return Result{}, err
	}
	state, err := st.clones.Load(ctx)
	if err != nil {
		return Result{}, err
	}
	cp, err := st.store.Load(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("target %s: %w", st.target, err)
	}
	switch {
	case state.Run != nil && state.Run.Finished:
		c.log.Info("the clone of this stream finished already; nothing to copy", "position", cp.Position)
		return Result{Position: cp.Position, AlreadyDone: true, Runs: state.Run.Runs}, nil
	case state.Run == nil && cp.Position != "":
		return Result{}, fmt.Errorf("%w (stream %s, checkpoint at %s): clone seeds a new stream; to copy the source again, drop the stream's database %s and the tables on the target first",
			ErrReplicating, st.name, cp.Position, checkpoint.SchemaOf(st.name))
	}
	res, err := c.copyAll(ctx, st, state)
	if err != nil {
		return res, err
	}
	if err := handOver(ctx, st.store, res.Position); err != nil {
		return res, fmt.Errorf("target %s: leaving the checkpoint at the copy's position: %w", st.target, err)
	}
	if err := st.clones.Finish(ctx); err != nil {
		return res, err
	}
	res.Progress = c.Progress()
	c.setPhase("done")
	c.log.Info("clone finished: the target holds the source as of the position; replication starts there",
		"position", res.Position, "tables", res.Progress.Total, "rows", res.Progress.Rows, "bytes", res.Progress.Bytes, "runs", res.Runs,
		"seconds", time.Since(c.started).Seconds())
	return res, nil
}

// open connects to both servers, checks them, creates the stream's
// bookkeeping and takes its lock.
func (c *Cloner) open(ctx context.Context) (*started, error) {
	s := c.cfg.Stream
	st := &started{name: s.Name, target: s.Target.String()}
	var err error
	if st.src, err = s.Source.WithTLS(s.SourceTLS).Open(nil); err != nil {
		return st, err
	}
	if st.tgt, err = s.Target.WithTLS(s.TargetTLS).Open(nil); err != nil {
		return st, err
	}
	if st.wdb, err = s.Target.WithTLS(s.TargetTLS).Open(writeSession); err != nil {
		return st, err
	}
	st.wdb.SetMaxIdleConns(c.cfg.Workers + 2)
	var version string
	if err := st.src.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return st, fmt.Errorf("source %s: %w", s.Source, err)
	}
	if !strings.Contains(strings.ToLower(version), "mariadb") {
		return st, fmt.Errorf("source %s is %s: clone reads MariaDB sources (it names its snapshot's binlog position without a lock); seed from MySQL with mysqldump or mydumper (README, step 2)", s.Source, version)
	}
	if err := st.tgt.QueryRowContext(ctx, "SELECT @@local_infile").Scan(&c.loads); err != nil {
		return st, fmt.Errorf("target %s: %w", st.target, err)
	}
	if !c.loads {
		c.log.Info("the target does not take LOAD DATA LOCAL (local_infile is off): the copy writes its rows with INSERT statements, at a third more of the target's CPU")
	}
	st.store = checkpoint.NewStreamStore(st.tgt, checkpoint.Replicate, st.name)
	st.clones = checkpoint.NewCloneStore(st.tgt, st.name)
	if err := st.store.Init(ctx); err != nil {
		return st, fmt.Errorf("target %s: %w", st.target, err)
	}
	if err := st.clones.Init(ctx); err != nil {
		return st, fmt.Errorf("target %s: %w", st.target, err)
	}
	return st, st.relock(ctx)
}

// writeSession sets up the sessions that write the copy: values as bytes
// (encode.go), time in UTC as the source sessions read it, and no checks
// the source made already: foreign keys (tables come in any order),
// unique keys and CHECK constraints; NO_AUTO_VALUE_ON_ZERO keeps a 0 in an
// AUTO_INCREMENT column, and no strict mode refuses what the source holds
// (zero dates), as mariadb-dump's output sets them.
func writeSession(c *mysql.Config) {
	c.Collation = "binary"
	for k, v := range map[string]string{
		"sql_mode":                "'NO_AUTO_VALUE_ON_ZERO'",
		"foreign_key_checks":      "0",
		"unique_checks":           "0",
		"check_constraint_checks": "0",
	} {
		c.Params[k] = v
	}
}
