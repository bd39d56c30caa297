package clone

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/verify"
)

// pair is a sandboxed source (binlog on) and an empty target (with
// mariadbd options targetArgs).
type pair struct {
	src, tgt *sandbox.Server
	sdb, tdb *sql.DB
}

func newPair(t *testing.T, srcOpts sandbox.Options, targetArgs ...string) pair {
	t.Helper()
	srcOpts.Name, srcOpts.Binlog = "csrc", true
	p := pair{src: sandboxtest.ForTest(t, srcOpts), tgt: sandboxtest.ForTest(t, sandbox.Options{Name: "ctgt", ServerID: 2, Binlog: true, ExtraArgs: targetArgs})}
	p.sdb, p.tdb = sandboxtest.DB(t, p.src), sandboxtest.DB(t, p.tgt)
	return p
}

func endpoint(t *testing.T, s *sandbox.Server) config.Endpoint {
	t.Helper()
	ep, err := config.ParseEndpoint(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// config is a clone of p with small chunks, its relay log in a temporary
// directory.
func (p pair) config(t *testing.T) Config {
	c := Default()
	c.Stream.Source, c.Stream.Target = endpoint(t, p.src), endpoint(t, p.tgt)
	c.Stream.RelayDir = filepath.Join(t.TempDir(), "relay")
	c.Stream.UntilCaughtUp = true
	c.Stream.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c.ChunkRows = 100
	c.Workers = 3
	return c
}

// equal fails t unless verify finds the target equal to the source.
func (p pair) equal(t *testing.T, opts verify.Options) {
	t.Helper()
	opts.Source, opts.Target = p.sdb, p.tdb
	rep, err := verify.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equal() {
		rep.WriteText(os.Stderr)
		t.Fatal("target differs from source")
	}
}

func exec(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
