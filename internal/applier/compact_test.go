package applier

import (
	"database/sql"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// TestCompactFallback: a work whose compacted statements find a row
// missing is applied again statement by statement, and the error names
// the transaction that changes the row, not the range of the work. A work
// without conflict commits compacted. Both ways of sending SQL to MariaDB
// say so: compound statements that check their counts, and multi-statement
// packets whose counts the worker checks (as for MySQL).
func TestCompactFallback(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server")
	}
	db, store := workerTarget(t, "applier-compact")
	for _, noCompound := range []bool{false, true} {
		name := "compound"
		if noCompound {
			name = "packets"
		}
		t.Run(name, func(t *testing.T) { testCompactFallback(t, db, store, "w_"+name, noCompound) })
	}
}

// workerTarget starts a sandboxed server named name for the test and
// returns a pool of sessions configured as workers' (ConfigureSession),
// closed when the test ends, and its checkpoint store, initialised.
func workerTarget(t *testing.T, name string) (*sql.DB, *checkpoint.Store) {
	t.Helper()
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: name})
	cfg, err := mysql.ParseDSN(srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	ConfigureSession(cfg)
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	store := checkpoint.NewStore(db)
	if err := store.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db, store
}

func testCompactFallback(t *testing.T, db *sql.DB, store *checkpoint.Store, schemaName string, noCompound bool) {
	ctx := t.Context()
	domain := "0" // the GTIDs' domain: one per run, paraply.applied is shared
	if noCompound {
		domain = "1"
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+schemaName); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+schemaName+".t (id INT NOT NULL PRIMARY KEY, c VARCHAR(20) CHARACTER SET utf8mb4)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO "+schemaName+".t SELECT seq, 'a' FROM "+schemaName+".seq_1_to_10"); err != nil {
		t.Fatal(err)
	}
	cat, err := schema.Load(ctx, db, schemaName)
	if err != nil {
		t.Fatal(err)
	}
	tm := &replication.TableMapEvent{Schema: []byte(schemaName), Table: []byte("t"), ColumnCount: 2,
		ColumnType: []byte{gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_VARCHAR}, ColumnMeta: []uint16{0, 80},
		ColumnName: [][]byte{[]byte("id"), []byte("c")}}
	tab, err := sqlgen.NewTableIn(cat, cat.Table(schemaName, "t"), tm)
	if err != nil || !tab.Compactable() {
		t.Fatalf("table: compactable %v, %v", tab != nil && tab.Compactable(), err)
	}

	seq := stage.NewSequencer(0)
	var next uint64
	// work makes one transaction per list of ids, each setting c of
	// those rows to "bN" (N: the transaction).
	work := func(ids ...[]int32) *stage.Work {
		w := &stage.Work{}
		for _, txn := range ids {
			next++
			r := &binlog.Rows{Op: binlog.Update, Table: tm}
			for _, id := range txn {
				r.Images = append(r.Images, []any{id, "a"}, []any{id, "b" + strconv.FormatUint(next, 10)})
			}
			w.Txns = append(w.Txns, &stage.Txn{Seq: next, GTID: domain + "-1-" + strconv.FormatUint(next, 10),
				Txn: &binlog.Txn{Rows: []*binlog.Rows{r}}, Tables: []*sqlgen.Table{tab}})
		}
		return w
	}
	var logs strings.Builder
	run := func(w *stage.Work) error {
		logs.Reset()
		pool := NewPool(Config{NoCompound: noCompound, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, db, store, seq)
		in, done := make(chan *stage.Work, 1), make(chan *stage.Work, 1)
		in <- w
		close(in)
		return pool.Run(ctx, []chan *stage.Work{in}, done)
	}
	status := func(name string) int {
		var n int
		if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// No conflict: each row is updated once (every image says its c was
	// 'a'), in one grouped UPDATE.
	before, compounds := status("Com_update"), status("Com_compound_sql")
	if err := run(work([]int32{1, 2}, []int32{3}, []int32{4, 5})); err != nil {
		t.Fatal(err)
	}
	if n := status("Com_update") - before; n != 1 {
		t.Errorf("%d UPDATE statements, want 1 (grouped)", n)
	}
	if n := status("Com_compound_sql") - compounds; (n > 0) == noCompound {
		t.Errorf("%d compound statements with NoCompound %v", n, noCompound)
	}
	var got string
	if err := db.QueryRowContext(ctx, "SELECT GROUP_CONCAT(c ORDER BY id) FROM "+schemaName+".t").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "b1,b1,b2,b3,b3,a,a,a,a,a"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}

	// Row 8 is missing: the grouped UPDATE finds 2 rows of 3; the work is
	// applied again without compaction, which names transaction 5.
	if _, err := db.ExecContext(ctx, "DELETE FROM "+schemaName+".t WHERE id = 8"); err != nil {
		t.Fatal(err)
	}
	err = run(work([]int32{6}, []int32{7, 8}, []int32{9}))
	var ce *stage.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a stage.ConflictError", err)
	}
	if ce.GTID != domain+"-1-5" || ce.Key != "id=8" || !strings.Contains(ce.What, "not found") {
		t.Errorf("got %v, want GTID 0-1-5, key id=8", err)
	}
	if !strings.Contains(logs.String(), "applying the work again without compaction") ||
		!strings.Contains(logs.String(), "`"+schemaName+"`.`t` id=6: UPDATE matched 3 rows on the target, the source changed 4") {
		t.Errorf("the compacted attempt did not fail as expected; log:\n%s", logs.String())
	}
	if err := db.QueryRowContext(ctx, "SELECT GROUP_CONCAT(c ORDER BY id) FROM "+schemaName+".t WHERE id > 5").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "a,a,a,a" {
		t.Errorf("after the failed work: %s, want it rolled back", got)
	}
}
