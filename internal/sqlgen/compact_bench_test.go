package sqlgen

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/schema"
)

// BenchmarkServerCompact applies sysbench oltp_write_only transactions
// (UPDATE of the indexed k, UPDATE of c, DELETE and INSERT of one id; ids
// uniform over a table of 100000 rows) to a MariaDB server, 32 source
// transactions per target transaction as the applier batches them, with
// and without compaction. It reports the server's CPU time (mariadbd's
// utime+stime) and the wall time per source transaction. Run it with
// -bench ServerCompact -benchtime 20000x.
func BenchmarkServerCompact(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a MariaDB server")
	}
	for _, target := range []struct {
		name string
		opts sandbox.Options
	}{
		{"fast", sandbox.Options{Name: "sqlgen-bench", BufferPoolMB: 256}},
		// As the replication benchmark's targets: binary log, durable.
		{"durable-binlog", sandbox.Options{Name: "sqlgen-bench", BufferPoolMB: 256, Binlog: true, Durable: true}},
	} {
		b.Run(target.name, func(b *testing.B) { benchmarkServerCompact(b, target.opts) })
	}
}

func benchmarkServerCompact(b *testing.B, opts sandbox.Options) {
	ctx := b.Context()
	srv := sandboxtest.ForTest(b, opts)
	if err := srv.Exec(ctx, "CREATE DATABASE sbtest",
		`CREATE TABLE sbtest.sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0,
			c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))`,
		"CREATE TABLE sbtest.applied (gtid VARCHAR(120) CHARACTER SET ascii NOT NULL PRIMARY KEY)"); err != nil {
		b.Fatal(err)
	}
	pool := applierDB(b, srv)
	sb := newSysbench(rand.New(rand.NewPCG(1, 2)), 100000)
	if err := sb.load(ctx, pool); err != nil {
		b.Fatal(err)
	}
	cat, err := schema.Load(ctx, pool, "sbtest")
	if err != nil {
		b.Fatal(err)
	}
	tab, err := NewTableIn(cat, cat.Table("sbtest", "sbtest1"), sb.tm)
	if err != nil || !tab.Compactable() {
		b.Fatalf("sbtest1: compactable %v, %v", err == nil && tab.Compactable(), err)
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	const perBatch = 32
	gtid := 0
	for _, compact := range []bool{false, true} {
		name := "plain"
		if compact {
			name = "compact"
		}
		b.Run(name, func(b *testing.B) {
			var stmts int
			cpu0, t0 := cpuTime(b, srv.PID()), time.Now()
			for done := 0; done < b.N; done += perBatch {
				batch := &Batch{Compact: compact}
				batch.Raw("START TRANSACTION")
				for i := range min(perBatch, b.N-done) {
					for _, r := range sb.txn() {
						if err := batch.Add(tab, r, i); err != nil {
							b.Fatal(err)
						}
					}
				}
				var ph []string
				var args []any
				for range min(perBatch, b.N-done) {
					gtid++
					ph = append(ph, "(?)")
					args = append(args, "0-1-"+strconv.Itoa(gtid))
				}
				batch.Raw("INSERT INTO sbtest.applied (gtid) VALUES "+strings.Join(ph, ","), args...)
				stmts += batch.Len()
				affected, err := runBatch(ctx, conn, batch)
				if err == nil {
					err = batch.Check(affected)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			wall, cpu := time.Since(t0), cpuTime(b, srv.PID())-cpu0
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-µs/txn")
			b.ReportMetric(float64(wall.Microseconds())/float64(b.N), "wall-µs/txn")
			b.ReportMetric(float64(stmts)/float64(b.N), "stmts/txn")
		})
	}
}

// cpuTime returns the CPU time (user and system) process pid has used.
func cpuTime(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // after "pid (comm) "
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// sysbench generates oltp_write_only transactions on sbtest1 and keeps the
// rows, for the before images.
type sysbench struct {
	r      *rand.Rand
	k      []int32
	c, pad []string
	tm     *replication.TableMapEvent
	cols   []col
}

func newSysbench(r *rand.Rand, rows int) *sysbench {
	cols := []col{intCol("id"), intCol("k"),
		{name: "c", typ: "char", tp: mysql.MYSQL_TYPE_STRING, meta: charMeta(480), cs: "utf8mb4", co: "utf8mb4_general_ci"},
		{name: "pad", typ: "char", tp: mysql.MYSQL_TYPE_STRING, meta: charMeta(240), cs: "utf8mb4", co: "utf8mb4_general_ci"}}
	_, tm := fixture("sbtest", "sbtest1", cols, primary(0))
	s := &sysbench{r: r, k: make([]int32, rows+1), c: make([]string, rows+1), pad: make([]string, rows+1), tm: tm, cols: cols}
	for id := 1; id <= rows; id++ {
		s.k[id], s.c[id], s.pad[id] = int32(r.IntN(rows)), s.text(11), s.text(5)
	}
	return s
}

// text returns groups of 11 digits joined by '-', as sysbench's c and pad.
func (s *sysbench) text(groups int) string {
	var b strings.Builder
	for g := range groups {
		if g > 0 {
			b.WriteByte('-')
		}
		for range 11 {
			b.WriteByte(byte('0' + s.r.IntN(10)))
		}
	}
	return b.String()
}

// load inserts the rows.
func (s *sysbench) load(ctx context.Context, db *sql.DB) error {
	const chunk = 1000
	for start := 1; start < len(s.k); start += chunk {
		var ph []string
		var args []any
		for id := start; id < min(start+chunk, len(s.k)); id++ {
			ph = append(ph, "(?,?,?,?)")
			args = append(args, id, s.k[id], s.c[id], s.pad[id])
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES "+strings.Join(ph, ","), args...); err != nil {
			return err
		}
	}
	return nil
}

func (s *sysbench) image(id int) []any {
	return []any{int32(id), s.k[id], s.c[id], s.pad[id]}
}

// txn returns the rows events of one oltp_write_only transaction, and
// applies them to the rows.
func (s *sysbench) txn() []*binlog.Rows {
	n := len(s.k) - 1
	ev := func(op binlog.Op, imgs ...[]any) *binlog.Rows {
		return &binlog.Rows{Op: op, Table: s.tm, Images: imgs}
	}
	var out []*binlog.Rows
	id := 1 + s.r.IntN(n) // index update: k = k + 1
	before := s.image(id)
	s.k[id]++
	out = append(out, ev(binlog.Update, before, s.image(id)))
	id = 1 + s.r.IntN(n) // non-index update of c
	before = s.image(id)
	s.c[id] = s.text(11)
	out = append(out, ev(binlog.Update, before, s.image(id)))
	id = 1 + s.r.IntN(n) // delete, then insert the id again
	out = append(out, ev(binlog.Delete, s.image(id)))
	s.k[id], s.c[id], s.pad[id] = int32(s.r.IntN(n)), s.text(11), s.text(5)
	out = append(out, ev(binlog.Insert, s.image(id)))
	return out
}
