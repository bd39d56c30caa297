package analyze

import (
	"context"
	"fmt"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestStatementFormats reads binlogs that MariaDB wrote under
// binlog_format=MIXED (its default) and STATEMENT: transactions of several
// statements, savepoints, autocommit statements, a statement that MIXED
// logs as rows (UUID()), DDL. Each transaction must count once, however
// many query events it holds; a statement-format transaction is a barrier
// in the writeset modes, and it keeps its place in MariaDB's commit-order
// groups.
func TestStatementFormats(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "analyze-fmt", Binlog: true})
	ctx := context.Background()
	db, err := src.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, format := range []string{"MIXED", "STATEMENT"} {
		t.Run(format, func(t *testing.T) {
			schemaName := "fmt_" + format
			if err := src.Exec(ctx, "CREATE DATABASE "+schemaName,
				"CREATE TABLE "+schemaName+".t (id INT PRIMARY KEY, v INT, u VARCHAR(40))",
				"CREATE TABLE "+schemaName+".log (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(20))"); err != nil {
				t.Fatal(err)
			}
			before := flush(t, src)
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			run := func(q string) {
				t.Helper()
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			run("SET SESSION binlog_format = " + format)
			run("USE " + schemaName)
			const n = 40
			for i := 0; i < n; i++ {
				run("BEGIN")
				run(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, NULL)", i, i))
				run(fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", i))
				run("SAVEPOINT s")
				run(fmt.Sprintf("INSERT INTO log (note) VALUES ('txn %d')", i))
				run("COMMIT")
			}
			for i := 0; i < n; i++ {
				run(fmt.Sprintf("UPDATE t SET v = v * 2 WHERE id = %d", i)) // autocommit
			}
			if format == "MIXED" {
				run("UPDATE t SET u = UUID() WHERE id < 5") // unsafe: logged as rows
			}
			run("ALTER TABLE t ADD COLUMN w INT")
			r, err := Run(Options{Files: written(before, flush(t, src))})
			if err != nil {
				t.Fatal(err)
			}
			want := int64(2*n + 1)
			if format == "MIXED" {
				want++
			}
			if r.Transactions != want {
				t.Fatalf("%d transactions, want %d", r.Transactions, want)
			}
			if got := r.Modes["writeset"].Barriers["statement"]; got < 2*n {
				t.Errorf("writeset barriers for statements: %d, want at least %d (%v)", got, 2*n, r.Modes["writeset"].Barriers)
			}
		})
	}
}
