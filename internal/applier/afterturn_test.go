package applier

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// turnObserver keeps the timing of each applied work, by its first
// transaction.
type turnObserver struct {
	nopObserver
	mu   sync.Mutex
	turn map[uint64]time.Duration
}

func (o *turnObserver) Applied(_ int, w *stage.Work, t Timing) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.turn[w.First()] = t.Turn
}

// TestWorkPastItsTurn: a work some of whose transactions wait for an
// earlier work still applying (Work.AfterTurn) applies the others at
// once and those only once the earlier work committed, in one target
// transaction. The earlier work is held back by a row lock: meanwhile the
// rows of the later work's other transactions, before and after the one
// that waits, are locked by its open transaction, and no session waits
// for a lock but the earlier work's. A conflict in the second part names
// its transaction and leaves nothing of the work behind.
func TestWorkPastItsTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server")
	}
	ctx := t.Context()
	db, store := workerTarget(t, "applier-afterturn")
	for _, q := range []string{"CREATE DATABASE ta", "CREATE TABLE ta.t (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO ta.t VALUES (1, 0), (2, 0), (3, 0)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := schema.Load(ctx, db, "ta")
	if err != nil {
		t.Fatal(err)
	}
	tm := &replication.TableMapEvent{Schema: []byte("ta"), Table: []byte("t"), ColumnCount: 2,
		ColumnType: []byte{gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_LONG}, ColumnMeta: []uint16{0, 0},
		ColumnName: [][]byte{[]byte("id"), []byte("v")}}
	tab, err := sqlgen.NewTableIn(cat, cat.Table("ta", "t"), tm)
	if err != nil {
		t.Fatal(err)
	}
	// update is transaction seq setting v of row id from before to after.
	update := func(seq uint64, id, before, after int32) *stage.Txn {
		r := &binlog.Rows{Op: binlog.Update, Table: tm, Images: [][]any{{id, before}, {id, after}}}
		return &stage.Txn{Seq: seq, GTID: "0-1-" + strconv.FormatUint(seq, 10), Txn: &binlog.Txn{Rows: []*binlog.Rows{r}}, Tables: []*sqlgen.Table{tab}}
	}
	rows := func() string {
		var got string
		if err := db.QueryRowContext(ctx, "SELECT GROUP_CONCAT(v ORDER BY id) FROM ta.t").Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}

	lock, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.ExecContext(ctx, "SELECT v FROM ta.t WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	obs := &turnObserver{turn: map[uint64]time.Duration{}}
	seq := stage.NewSequencer(0)
	pool := NewPool(Config{PreserveOrder: true, MaxBackoff: 10 * time.Millisecond, Observer: obs,
		Logger: slog.New(slog.DiscardHandler)}, db, store, seq)
	in := WorkChannels(2)
	done := make(chan *stage.Work, 2)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- pool.Run(runCtx, in, done) }()
	// A: 1 sets row 1 to 1 (held back by the lock). B: 2 sets row 2, 3
	// sets row 1 from A's 1 to 2 (3 waits for A), 4 sets row 3.
	in[0] <- &stage.Work{Txns: []*stage.Txn{update(1, 1, 0, 1)}}
	in[1] <- &stage.Work{Txns: []*stage.Txn{update(2, 2, 0, 1), update(3, 1, 1, 2), update(4, 3, 0, 1)}, AfterTurn: []bool{false, true, false}}

	// B's first part runs while A waits: rows 2 and 3 are locked by B's
	// open transaction, and only one session waits for a lock (A, on row
	// 1).
	var waiting int
	locked := func(id int) bool {
		_, err := db.ExecContext(ctx, "SELECT v FROM ta.t WHERE id = ? FOR UPDATE NOWAIT", id)
		var me *mysql.MySQLError
		if err != nil && !(errors.As(err, &me) && me.Number == 1205) {
			t.Fatal(err)
		}
		return err != nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && !locked(2) {
		time.Sleep(20 * time.Millisecond)
	}
	if !locked(2) || !locked(3) {
		t.Fatal("rows 2 and 3 were not locked: B's first part did not run before A committed")
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.innodb_lock_waits").Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if waiting > 1 {
		t.Errorf("%d lock waits: B's second part ran before A committed", waiting)
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case w := <-done:
			w.Committed(seq) // as the coordinator records it
		case err := <-ran:
			t.Fatalf("pool stopped: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("the works did not commit")
		}
	}
	if got := rows(); got != "2,1,1" {
		t.Errorf("rows %s, want 2,1,1", got)
	}
	obs.mu.Lock()
	if obs.turn[2] <= 0 {
		t.Errorf("B's turn wait %v, want the time it waited for A", obs.turn[2])
	}
	obs.mu.Unlock()

	// A conflict after the turn: 6 does not find row 9 (the second part),
	// after 5 changed row 2 (the first).
	in[0] <- &stage.Work{Txns: []*stage.Txn{update(5, 2, 1, 5), update(6, 9, 0, 8)}, AfterTurn: []bool{false, true}}
	var ce *stage.ConflictError
	select {
	case err := <-ran:
		if !errors.As(err, &ce) || ce.GTID != "0-1-6" || !strings.Contains(ce.What, "not found") {
			t.Errorf("got %v, want a conflict of 0-1-6, row not found", err)
		}
	case <-done:
		t.Fatal("a work with a conflict committed")
	case <-time.After(30 * time.Second):
		t.Fatal("the conflicting work neither failed nor committed")
	}
	if got := rows(); got != "2,1,1" {
		t.Errorf("rows %s after the conflict, want 2,1,1 (nothing of the work)", got)
	}
}
