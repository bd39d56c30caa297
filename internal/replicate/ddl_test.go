package replicate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/deptrack"
)

// nextGTID predicts the GTID the source gives its next transaction.
func nextGTID(t *testing.T, p pair) string {
	t.Helper()
	pos := p.position(t)
	parts := strings.Split(pos, "-")
	n, err := strconv.Atoi(parts[2])
	if err != nil || len(parts) != 3 {
		t.Fatalf("position %q", pos)
	}
	return fmt.Sprintf("%s-%s-%d", parts[0], parts[1], n+1)
}

// TestDDLCrashRecovery puts the target in the state a crash leaves while a
// DDL runs, in both orders (the DDL took effect, or not yet), and checks
// that replication resumes without stopping and without running it twice.
func TestDDLCrashRecovery(t *testing.T) {
	for _, ran := range []bool{true, false} {
		t.Run(fmt.Sprintf("ddl-ran=%v", ran), func(t *testing.T) {
			ctx := context.Background()
			p := newPair(t)
			c := p.config(t, deptrack.WritesetMode, 4)
			c.StartGTID = p.position(t)
			if err := p.src.Exec(ctx, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, a INT)", "INSERT INTO d.t VALUES (1, 1)"); err != nil {
				t.Fatal(err)
			}
			run(t, c) // the target now has d.t
			// Running it twice would fail: the table it renames is gone.
			const ddl = "RENAME TABLE t TO t2"
			gtid := nextGTID(t, p)
			tdb, err := endpoint(t, p.tgt).Open(applier.ConfigureSession)
			if err != nil {
				t.Fatal(err)
			}
			defer tdb.Close()
			store := checkpoint.NewStore(tdb)
			// What paraply does before running the DDL...
			if err := store.BeginDDL(ctx, gtid, "d", ddl, []checkpoint.Object{{Schema: "d", Table: "t"}, {Schema: "d", Table: "t2"}}); err != nil {
				t.Fatal(err)
			}
			// ...the DDL itself, if the crash came after it...
			if ran {
				if err := p.tgt.Exec(ctx, "RENAME TABLE d.t TO d.t2"); err != nil {
					t.Fatal(err)
				}
			}
			// ...and the crash: paraply never recorded it. The source runs
			// the DDL now, and more rows that need it.
			conn, err := p.src.DB("d")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Exec(ddl); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec("INSERT INTO t2 VALUES (2, 2)"); err != nil {
				t.Fatal(err)
			}
			run(t, c)
			p.equal(t)
			var n int
			if err := tdb.QueryRow("SELECT COUNT(*) FROM paraply.ddl").Scan(&n); err != nil || n != 0 {
				t.Errorf("paraply.ddl still holds %d rows (%v)", n, err)
			}
		})
	}
}

// TestWaitsForServersAtStart: a target that is down when replication
// starts is waited for (within ConnectWait), not a reason to exit.
func TestWaitsForServersAtStart(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	c := p.config(t, deptrack.WritesetMode, 2)
	c.StartGTID = p.position(t)
	if err := p.src.Exec(ctx, "CREATE DATABASE w", "CREATE TABLE w.t (id INT PRIMARY KEY)", "INSERT INTO w.t VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	if err := p.tgt.Stop(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, c) }()
	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("replicate gave up while the target was down: %v", err)
	default:
	}
	if err := p.tgt.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("replicate: %v", err)
	}
	p.equal(t)
}
