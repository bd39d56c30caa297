package replicate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestLargeTransaction: one source transaction of 120,000 rows, whose
// statements (about 20 MB) are several times the target's
// max_allowed_packet, is applied as one target transaction sent in
// several packets, and the target ends equal to the source.
func TestLargeTransaction(t *testing.T) {
	p := pair{
		src: sandboxtest.ForTest(t, sandbox.Options{Name: "lsrc", Binlog: true}),
		tgt: sandboxtest.ForTest(t, sandbox.Options{Name: "ltgt", ServerID: 2, ExtraArgs: []string{"--max-allowed-packet=4M"}}),
	}
	ctx := context.Background()
	if err := p.src.Exec(ctx, "CREATE DATABASE warmup"); err != nil {
		t.Fatal(err)
	}
	c := p.config(t, deptrack.WritesetMode, 4)
	c.StartGTID = p.position(t)
	const rows, pad = 120000, 150
	if err := p.src.Exec(ctx, "CREATE DATABASE w_large",
		"CREATE TABLE w_large.t (id INT PRIMARY KEY, pad VARCHAR(200))",
		"CREATE TABLE w_large.k (id INT, pad VARCHAR(200))", // keyless, in the same transaction
		"BEGIN",
		"INSERT INTO w_large.t SELECT seq, REPEAT('p', 150) FROM w_large.seq_1_to_120000",
		"INSERT INTO w_large.k SELECT seq, REPEAT('k', 150) FROM w_large.seq_1_to_20000",
		"COMMIT",
		"UPDATE w_large.t SET pad = REPEAT('q', 150) WHERE id % 2 = 0",
	); err != nil {
		t.Fatal(err)
	}
	db, err := p.tgt.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var packet int
	if err := db.QueryRow("SELECT @@max_allowed_packet").Scan(&packet); err != nil {
		t.Fatal(err)
	}
	if rows*pad < 4*packet {
		t.Fatalf("the transaction (%d bytes of values) is not several times max_allowed_packet %d", rows*pad, packet)
	}
	run(t, c)
	p.equal(t)
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM w_large.t WHERE pad LIKE 'q%'").Scan(&n); err != nil || n != rows/2 {
		t.Fatalf("target has %d updated rows (%v), want %d", n, err, rows/2)
	}

	// A row larger than the target's max_allowed_packet reaches it as a
	// native replica's does: its event in two fragments (the binlog path
	// takes large transactions), each within the packet.
	if err := p.src.Exec(ctx, "CREATE TABLE w_large.b (id INT PRIMARY KEY, v MEDIUMBLOB)",
		"INSERT INTO w_large.b VALUES (1, REPEAT('b', 5242880))"); err != nil {
		t.Fatal(err)
	}
	run(t, c)
	p.equal(t)
	// One too large for two fragments of a packet cannot be sent:
	// replication stops and says so, naming the GTID.
	if err := p.src.Exec(ctx, "INSERT INTO w_large.b VALUES (2, REPEAT('b', 10485760))"); err != nil {
		t.Fatal(err)
	}
	gtid := p.position(t)
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err = Run(rctx, c)
	if err == nil || !strings.Contains(err.Error(), "max_allowed_packet") || !strings.Contains(err.Error(), gtid) {
		t.Fatalf("a row beyond max_allowed_packet: got %v, want an error naming max_allowed_packet and GTID %s", err, gtid)
	}
	t.Log(err)
}
