package clone

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/verify"
)

// TestCloneRefusesTablesThere: a target that holds a table the clone would
// copy is refused, naming it, and left as it was; --overwrite-tables
// drops and copies it. A stream that replicates already is refused too.
func TestCloneRefusesTablesThere(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, sandbox.Options{})
	exec(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1), (2)")
	exec(t, p.tdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, mine INT)", "INSERT INTO app.t VALUES (7, 7)")
	cfg := p.config(t)
	_, err := New(cfg).Run(ctx)
	if !errors.Is(err, ErrTablesExist) || !strings.Contains(err.Error(), "app.t") || !strings.Contains(err.Error(), "--overwrite-tables") {
		t.Fatalf("a target holding app.t: %v, want ErrTablesExist naming app.t and --overwrite-tables", err)
	}
	if got := rowsText(t, p.tdb, "SELECT * FROM app.t"); got != "\"7\" \"7\" \n" {
		t.Fatalf("the refused target's app.t changed: %s", got)
	}
	cfg.Overwrite = true
	if _, err := New(cfg).Run(ctx); err != nil {
		t.Fatal(err)
	}
	p.equal(t, verify.Options{})
	// Run again once finished, it copies nothing.
	res, err := New(cfg).Run(ctx)
	if err != nil || !res.AlreadyDone {
		t.Fatalf("a clone run again once finished: %+v, %v; want AlreadyDone", res, err)
	}
	// A stream replicating already is no clone's to seed.
	other := sandboxtest.ForTest(t, sandbox.Options{Name: "ctgt2", ServerID: 3})
	odb := sandboxtest.DB(t, other)
	exec(t, odb, "CREATE DATABASE paraply", "CREATE TABLE paraply.progress (id TINYINT UNSIGNED NOT NULL PRIMARY KEY, position MEDIUMTEXT NOT NULL, relay_index BIGINT UNSIGNED NOT NULL)",
		"INSERT INTO paraply.progress VALUES (1, '0-1-1', 0)")
	cfg.Stream.Target = endpoint(t, other)
	if _, err := New(cfg).Run(ctx); !errors.Is(err, ErrReplicating) {
		t.Fatalf("a stream with a checkpoint: %v, want ErrReplicating", err)
	}
}

// TestCloneNamesTableAndChunk: a row the target cannot take (larger than
// its max_allowed_packet, on a target without LOAD DATA LOCAL, which
// takes INSERT statements) stops the clone with an error naming the
// table, the chunk and the remedy; the chunks committed before it stay.
func TestCloneNamesTableAndChunk(t *testing.T) {
	ctx := context.Background()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "csrc", Binlog: true})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "ctgt", ServerID: 2, ExtraArgs: []string{"--max-allowed-packet=1M", "--local-infile=0"}})
	p := pair{src: src, tgt: tgt, sdb: sandboxtest.DB(t, src), tdb: sandboxtest.DB(t, tgt)}
	exec(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.b (id INT PRIMARY KEY, v LONGBLOB)",
		"INSERT INTO app.b SELECT seq, 'small' FROM app.seq_1_to_300", "UPDATE app.b SET v = REPEAT('x', 2000000) WHERE id = 250")
	cfg := p.config(t)
	_, err := New(cfg).Run(ctx)
	if err == nil {
		t.Fatal("a row larger than the target's max_allowed_packet was copied")
	}
	for _, want := range []string{"app.b", "chunk 0.3", "max_allowed_packet", "SET GLOBAL max_allowed_packet"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	t.Log(err)
	if n := committedChunks(t, p); n == 0 {
		t.Errorf("no chunk before the bad one was committed")
	}
}

// committedChunks counts the chunks the clone recorded on p's target.
func committedChunks(t *testing.T, p pair) int {
	t.Helper()
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM paraply.clone_chunks").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTableOfPartsNotCommittedInPart: a table read as one piece in parts
// (no usable key) whose reading fails is not committed with the parts
// read so far: its worker waits for the rest until the run ends, and
// records nothing. (Here the read fails at once: the table is gone.)
func TestTableOfPartsNotCommittedInPart(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, sandbox.Options{})
	exec(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.nokey (a INT)")
	exec(t, p.tdb, "CREATE DATABASE app", "CREATE TABLE app.nokey (a INT)")
	infos, err := verify.LoadTables(ctx, p.sdb, []string{"app"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := verify.TableName{Schema: "app", Name: "nokey"}
	keys, err := verify.NewKeys(infos[n])
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newTableRun(&table{src: n, dst: n, typ: baseTable, info: infos[n]}, &definition{}, keys)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, p.sdb, "DROP TABLE app.nokey")
	store := checkpoint.NewCloneStore(p.tdb, checkpoint.DefaultStream)
	if err := checkpoint.NewStore(p.tdb).Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.Init(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := p.sdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	chunks := make(chan *chunk, 1)
	b := newBudget(1 << 20)
	r := &reader{conn: conn, rows: 100, bytes: 1 << 16, budget: b, out: chunks}
	if err := r.whole(ctx, tr, 0); err == nil || !strings.Contains(err.Error(), "app.nokey (one piece)") {
		t.Fatalf("reading a table gone: %v, want an error naming app.nokey", err)
	}
	w := &writer{tgt: p.tdb, store: store, budget: b, maxStatement: maxStatement, maxPacket: 1 << 24, done: func(*chunk) {}}
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := w.write(wctx, <-chunks); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the worker of a chunk whose reading failed: %v, want it waiting for the rest until the run ends", err)
	}
	if got := committedChunks(t, p); got != 0 {
		t.Errorf("%d chunks recorded: a chunk whose reading failed was committed", got)
	}
}
