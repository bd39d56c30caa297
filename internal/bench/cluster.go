package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/paraply/paraply/internal/sandbox"
)

// cluster is the three servers of one durability setting, all started with
// the same options (log-bin, ROW, durable or not, the same buffer pool):
// the source, MariaDB's replica and paraply's target.
type cluster struct {
	cfg     Config
	durable bool
	work    string // directory of this cluster's snapshots and relay logs

	source, replica, target *sandbox.Server

	// Snapshots taken right after the initial load: every backlog is built
	// from sourceSnap, every run starts from replicaSnap or targetSnap.
	sourceSnap, replicaSnap, targetSnap *snapshot
	// base is the source's GTID position after the load, where every
	// backlog starts.
	base string
	runs int // paraply runs so far, to name relay directories
}

// Server IDs; the replica and the target must differ from the source.
const (
	sourceID  = 1
	replicaID = 2
	targetID  = 3
)

// startCluster starts the three servers. On error the ones started are
// removed.
func startCluster(ctx context.Context, cfg Config, durable bool, work string) (*cluster, error) {
	c := &cluster{cfg: cfg, durable: durable, work: work}
	start := func(name string, id uint32, extra ...string) (*sandbox.Server, error) {
		return sandbox.Start(ctx, sandbox.Options{
			Name: name, ServerID: id, Binlog: true, Durable: durable,
			BufferPoolMB: cfg.BufferPoolMB, BaseDir: cfg.BaseDir,
			// What --preserve-gtids needs; paraply's checkpoint rows stay
			// out of the target's binlog in every run, as the native
			// replica's gtid_slave_pos stays out of the replica's.
			ExtraArgs: append([]string{"--binlog-ignore-db=paraply"}, extra...),
		})
	}
	var sourceArgs []string
	if cfg.BinlogFormat != "" {
		sourceArgs = append(sourceArgs, "--binlog-format="+cfg.BinlogFormat)
	}
	var err error
	if c.source, err = start("bench-source", sourceID, sourceArgs...); err == nil {
		if c.replica, err = start("bench-replica", replicaID); err == nil {
			c.target, err = start("bench-target", targetID)
		}
	}
	if err != nil {
		return nil, errors.Join(err, c.remove())
	}
	return c, nil
}

// remove stops the servers and deletes their directories.
func (c *cluster) remove() error {
	var errs []error
	for _, s := range []*sandbox.Server{c.source, c.replica, c.target} {
		if s != nil {
			errs = append(errs, s.Remove())
		}
	}
	return errors.Join(errs...)
}

// loaded is the initial data set, made once and shared by every cluster:
// the source's state after sysbench prepare, and its GTID position.
type loaded struct {
	snap     *snapshot
	position string
}

// load gives the three servers the same data and snapshots them.
//
// sysbench prepare runs once, on the first cluster's source; its binary
// logs are then purged (so that the backlogs are the only thing in them)
// and the stopped source is snapshotted. That snapshot becomes the source
// of every cluster. The replica and the target get its data directory
// only, with their own empty binary log (RESET MASTER), and the replica
// gets gtid_slave_pos = the source's position. A CHECKSUM TABLE of every
// table on the three servers must agree.
func (c *cluster) load(ctx context.Context, base *loaded, baseDir string) (*loaded, error) {
	if base == nil {
		var err error
		if base, err = c.prepare(ctx, baseDir); err != nil {
			return nil, err
		}
	}
	c.sourceSnap, c.base = base.snap, base.position
	if err := c.sourceSnap.restore(ctx, c.source); err != nil {
		return nil, err
	}
	if pos, err := queryString(ctx, c.source, "SELECT @@gtid_binlog_pos"); err != nil {
		return nil, err
	} else if pos != c.base {
		return nil, fmt.Errorf("source restored at %q, want %q", pos, c.base)
	}
	for _, s := range []*sandbox.Server{c.replica, c.target} {
		if err := c.sourceSnap.restore(ctx, s, "data"); err != nil {
			return nil, err
		}
		if err := s.Exec(ctx, "RESET MASTER"); err != nil {
			return nil, err
		}
	}
	if err := c.replica.Exec(ctx, "SET GLOBAL gtid_slave_pos = "+quote(c.base)); err != nil {
		return nil, err
	}
	if err := c.sameData(ctx); err != nil {
		return nil, err
	}
	var err error
	if c.replicaSnap, err = takeSnapshot(ctx, c.replica, filepath.Join(c.work, "replica")); err != nil {
		return nil, err
	}
	if c.targetSnap, err = takeSnapshot(ctx, c.target, filepath.Join(c.work, "target")); err != nil {
		return nil, err
	}
	return base, nil
}

// prepare runs sysbench prepare on the source, purges its binary logs and
// snapshots it into dir.
func (c *cluster) prepare(ctx context.Context, dir string) (*loaded, error) {
	if err := c.source.CreateDatabase(ctx, "sbtest"); err != nil {
		return nil, err
	}
	if err := sysbenchPrepare(ctx, c.source, c.cfg.Tables, c.cfg.TableSize); err != nil {
		return nil, err
	}
	if usesApp(c.cfg.Workloads) {
		if err := c.source.Exec(ctx, appSchema...); err != nil {
			return nil, err
		}
	}
	files, err := rotate(ctx, c.source)
	if err != nil {
		return nil, err
	}
	last := filepath.Base(files[len(files)-1])
	if err := c.source.Exec(ctx, "PURGE BINARY LOGS TO "+quote(last)); err != nil {
		return nil, err
	}
	pos, err := queryString(ctx, c.source, "SELECT @@gtid_binlog_pos")
	if err != nil {
		return nil, err
	}
	snap, err := takeSnapshot(ctx, c.source, dir)
	if err != nil {
		return nil, err
	}
	return &loaded{snap: snap, position: pos}, nil
}

// sameData compares CHECKSUM TABLE of every sbtest table on the three
// servers.
func (c *cluster) sameData(ctx context.Context) error {
	want, err := checksums(ctx, c.source, c.cfg.Tables)
	if err != nil {
		return err
	}
	for _, s := range []*sandbox.Server{c.replica, c.target} {
		got, err := checksums(ctx, s, c.cfg.Tables)
		if err != nil {
			return err
		}
		for t, sum := range want {
			if got[t] != sum {
				return fmt.Errorf("after the copy, %s on %s has checksum %q, on the source %q", t, s.Name, got[t], sum)
			}
		}
	}
	return nil
}

// checksums returns CHECKSUM TABLE of the sbtest tables by table name.
func checksums(ctx context.Context, s *sandbox.Server, tables int) (map[string]string, error) {
	db, err := s.DB("")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var names []string
	for i := 1; i <= tables; i++ {
		names = append(names, "sbtest.sbtest"+strconv.Itoa(i))
	}
	rows, err := db.QueryContext(ctx, "CHECKSUM TABLE "+strings.Join(names, ", "))
	if err != nil {
		return nil, fmt.Errorf("%s: checksum: %w", s.Name, err)
	}
	defer rows.Close()
	sums := map[string]string{}
	for rows.Next() {
		var table string
		var sum sql.NullString
		if err := rows.Scan(&table, &sum); err != nil {
			return nil, err
		}
		if !sum.Valid {
			return nil, fmt.Errorf("%s: table %s is missing", s.Name, table)
		}
		sums[table] = sum.String
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(sums) != tables {
		return nil, fmt.Errorf("%s: checksum of %d tables, want %d", s.Name, len(sums), tables)
	}
	return sums, nil
}

// warm reads every sbtest table (primary key and k index, and the app
// workload's tables where app) into the buffer pool, so that a run
// starts with the cache a running server has, and
// gives the server its first write transaction since it started, which a
// running server has long had too. That first write costs the server a
// few tenths of a second, whatever it writes (docs/benchmark.md, "The
// target's first write"); MariaDB's replica pays it before its timer
// starts (SET GLOBAL gtid_slave_pos writes mysql.gtid_slave_pos), so
// without this paraply would pay it inside its time, creating its first
// bookkeeping table. The write goes to a table of its own, out of the
// binary log, and leaves nothing behind.
func warm(ctx context.Context, s *sandbox.Server, tables int, app bool) error {
	var qs []string
	for i := 1; i <= tables; i++ {
		qs = append(qs, fmt.Sprintf("SELECT SUM(CRC32(c)) FROM sbtest.sbtest%d", i),
			fmt.Sprintf("SELECT SUM(k) FROM sbtest.sbtest%d FORCE INDEX (k_%d)", i, i))
	}
	if app {
		qs = append(qs, appWarm...)
	}
	qs = append(qs, "SET SESSION sql_log_bin = 0",
		"CREATE DATABASE "+warmSchema,
		"CREATE TABLE "+warmSchema+".w (id INT PRIMARY KEY) ENGINE=InnoDB",
		"INSERT INTO "+warmSchema+".w VALUES (1)",
		"DROP DATABASE "+warmSchema,
		"SET SESSION sql_log_bin = 1")
	return s.Exec(ctx, strings.Join(qs, "; "))
}

// warmSchema is the database of warm's write, dropped before it returns.
const warmSchema = "paraply_bench_warm"

// rotate starts a new binary log file on s and returns the files, oldest
// first.
func rotate(ctx context.Context, s *sandbox.Server) ([]string, error) {
	if err := s.Exec(ctx, "FLUSH BINARY LOGS"); err != nil {
		return nil, err
	}
	return s.BinlogFiles(ctx)
}

// queryString returns the single value of q on s.
func queryString(ctx context.Context, s *sandbox.Server, q string) (string, error) {
	db, err := s.DB("")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v sql.NullString
	if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return "", fmt.Errorf("%s: %s: %w", s.Name, q, err)
	}
	return v.String, nil
}

// quote quotes a string literal for MariaDB.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// serverCPU returns the CPU time (user + system) mariadbd of s has used,
// in seconds, or 0 if it cannot be read.
func serverCPU(s *sandbox.Server) float64 {
	return ProcessCPU(s.PID())
}

// ProcessCPU returns the CPU time (user + system) process pid has used,
// in seconds, from /proc/PID/stat; 0 if it cannot be read.
func ProcessCPU(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	// After "pid (comm)": state is field 3, utime 14 and stime 15.
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTicks
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports here.
const clockTicks = 100

// server is the server of c that applies with a.
func (c *cluster) server(a Apply) *sandbox.Server {
	if a.Kind == Native {
		return c.replica
	}
	return c.target
}
