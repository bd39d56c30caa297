package workload

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Workload is a scripted workload.
type Workload struct {
	Name string
	// Setup creates its schema and seed rows. Tests flush the binary logs
	// after it, so its events are not part of what is measured.
	Setup []string
	// Run executes the measured transactions against db.
	Run func(ctx context.Context, db *sql.DB) error
	// CriticalPath gives the exact critical path of the measured
	// transactions for the modes where it is fixed by construction.
	CriticalPath map[string]int
	// Transactions is the number of measured transactions.
	Transactions int
}

// All returns every scripted workload.
func All() []Workload {
	return []Workload{Sessions(), HotRow(), DDL(), Keyless(), ForeignKeys(), Cascade(), UniqueReuse(), Schemas(), BigTransactions(), Types()}
}

// session runs fn on one dedicated connection, so that its transactions
// come from one source session (one thread id in the binlog).
func session(ctx context.Context, db *sql.DB, fn func(c *sql.Conn) error) error {
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// txn runs statements in one transaction on c.
func txn(ctx context.Context, c *sql.Conn, stmts ...stmt) error {
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			tx.Rollback()
			return fmt.Errorf("%s: %w", s.q, err)
		}
	}
	return tx.Commit()
}

type stmt struct {
	q    string
	args []any
}

func q(query string, args ...any) stmt { return stmt{query, args} }

// parallel runs n sessions at once, session i running fn(i, conn).
func parallel(ctx context.Context, db *sql.DB, n int, fn func(i int, c *sql.Conn) error) error {
	g, ctx := errgroup.WithContext(ctx)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			return session(ctx, db, func(c *sql.Conn) error { return fn(i, c) })
		})
	}
	return g.Wait()
}

// Sessions: 4 sessions x 100 transactions, session s cycling over its own
// 5 rows. Each row is updated 20 times (writeset 20). Each session's
// transactions would chain under writeset-session (100), but a MariaDB
// binlog records no session id for row-based transactions, so on a MariaDB
// source writeset-session equals writeset; the tracker's unit tests cover
// sessions with MySQL-style binlogs.
func Sessions() Workload {
	const sessions, perSession, rows = 4, 100, 5
	w := Workload{
		Name:         "sessions",
		Setup:        []string{"CREATE DATABASE w_sessions", "CREATE TABLE w_sessions.t (id INT PRIMARY KEY, n INT NOT NULL)"},
		Transactions: sessions * perSession,
		CriticalPath: map[string]int{"serial": 400, "database": 400, "writeset": perSession / rows},
	}
	var vals []string
	for i := 0; i < sessions*rows; i++ {
		vals = append(vals, fmt.Sprintf("(%d,0)", i))
	}
	w.Setup = append(w.Setup, "INSERT INTO w_sessions.t VALUES "+strings.Join(vals, ","))
	w.Run = func(ctx context.Context, db *sql.DB) error {
		return parallel(ctx, db, sessions, func(s int, c *sql.Conn) error {
			for i := 0; i < perSession; i++ {
				if err := txn(ctx, c, q("UPDATE w_sessions.t SET n = n + 1 WHERE id = ?", s*rows+i%rows)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return w
}

// HotRow: 200 transactions from 4 sessions all incrementing one row.
func HotRow() Workload {
	return Workload{
		Name:         "hot-row",
		Setup:        []string{"CREATE DATABASE w_hot", "CREATE TABLE w_hot.c (id INT PRIMARY KEY, n BIGINT NOT NULL)", "INSERT INTO w_hot.c VALUES (1, 0)"},
		Transactions: 200,
		CriticalPath: map[string]int{"serial": 200, "writeset": 200},
		Run: func(ctx context.Context, db *sql.DB) error {
			return parallel(ctx, db, 4, func(_ int, c *sql.Conn) error {
				for i := 0; i < 50; i++ {
					if err := txn(ctx, c, q("UPDATE w_hot.c SET n = n + 1 WHERE id = 1")); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

// DDL: 100 independent inserts from 4 sessions, an ALTER TABLE from a fifth
// session, then 100 more. The DDL is a barrier between two fully parallel
// halves (writeset 3); the second half's unique key, added by the ALTER,
// must be learned from the stream.
func DDL() Workload {
	return Workload{
		Name:         "ddl",
		Setup:        []string{"CREATE DATABASE w_ddl", "CREATE TABLE w_ddl.t (id INT PRIMARY KEY, v VARCHAR(20))"},
		Transactions: 201,
		CriticalPath: map[string]int{"serial": 201, "database": 201, "writeset": 3},
		Run: func(ctx context.Context, db *sql.DB) error {
			half := func(base int) error {
				return parallel(ctx, db, 4, func(s int, c *sql.Conn) error {
					for i := 0; i < 25; i++ {
						if err := txn(ctx, c, q("INSERT INTO w_ddl.t (id, v) VALUES (?, 'x')", base+s*25+i)); err != nil {
							return err
						}
					}
					return nil
				})
			}
			if err := half(0); err != nil {
				return err
			}
			if err := session(ctx, db, func(c *sql.Conn) error {
				_, err := c.ExecContext(ctx, "ALTER TABLE w_ddl.t ADD COLUMN extra INT NULL, ADD UNIQUE KEY uv (v, id)")
				return err
			}); err != nil {
				return err
			}
			return half(1000)
		},
	}
}

// Keyless: 100 inserts into a table without any key, interleaved with 100
// independent inserts into a keyed table, from one session each. Writers of
// the keyless table run one at a time (writeset 100); the others are free.
func Keyless() Workload {
	return Workload{
		Name:         "keyless",
		Setup:        []string{"CREATE DATABASE w_keyless", "CREATE TABLE w_keyless.log (at INT, msg VARCHAR(50))", "CREATE TABLE w_keyless.t (id INT PRIMARY KEY)"},
		Transactions: 200,
		CriticalPath: map[string]int{"serial": 200, "database": 200, "writeset": 100},
		Run: func(ctx context.Context, db *sql.DB) error {
			return parallel(ctx, db, 2, func(s int, c *sql.Conn) error {
				for i := 0; i < 100; i++ {
					var err error
					if s == 0 {
						err = txn(ctx, c, q("INSERT INTO w_keyless.log VALUES (?, 'same')", i%3))
					} else {
						err = txn(ctx, c, q("INSERT INTO w_keyless.t VALUES (?)", i))
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

// ForeignKeys: 50 parents inserted, then 50 children each referencing the
// parent of the same number. A child waits for its parent only (writeset 2).
func ForeignKeys() Workload {
	return Workload{
		Name: "fk",
		Setup: []string{"CREATE DATABASE w_fk",
			"CREATE TABLE w_fk.parent (id INT PRIMARY KEY, name VARCHAR(20))",
			"CREATE TABLE w_fk.child (id INT PRIMARY KEY, pid INT NOT NULL, FOREIGN KEY (pid) REFERENCES w_fk.parent (id))"},
		Transactions: 100,
		CriticalPath: map[string]int{"serial": 100, "database": 100, "writeset": 2},
		Run: func(ctx context.Context, db *sql.DB) error {
			return session(ctx, db, func(c *sql.Conn) error {
				for i := 1; i <= 50; i++ {
					if err := txn(ctx, c, q("INSERT INTO w_fk.parent VALUES (?, 'p')", i)); err != nil {
						return err
					}
				}
				for i := 1; i <= 50; i++ {
					if err := txn(ctx, c, q("INSERT INTO w_fk.child VALUES (?, ?)", 100+i, i)); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

// Cascade: 20 parents, 20 children (ON DELETE CASCADE), then 10 parent
// deletes. The deletes change child rows the binlog never shows, so each
// waits for every earlier writer of the child table and for the previous
// delete: 1 (parents) + 1 (children) + 10 (deletes) = writeset 12.
func Cascade() Workload {
	return Workload{
		Name: "fk-cascade",
		Setup: []string{"CREATE DATABASE w_cascade",
			"CREATE TABLE w_cascade.p (id INT PRIMARY KEY)",
			"CREATE TABLE w_cascade.c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES w_cascade.p (id) ON DELETE CASCADE)"},
		Transactions: 50,
		CriticalPath: map[string]int{"serial": 50, "database": 50, "writeset": 12},
		Run: func(ctx context.Context, db *sql.DB) error {
			return session(ctx, db, func(c *sql.Conn) error {
				for i := 1; i <= 20; i++ {
					if err := txn(ctx, c, q("INSERT INTO w_cascade.p VALUES (?)", i)); err != nil {
						return err
					}
				}
				for i := 1; i <= 20; i++ {
					if err := txn(ctx, c, q("INSERT INTO w_cascade.c VALUES (?, ?)", 100+i, i)); err != nil {
						return err
					}
				}
				for i := 1; i <= 10; i++ {
					if err := txn(ctx, c, q("DELETE FROM w_cascade.p WHERE id = ?", i)); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

// UniqueReuse: a unique value freed by a delete and reused by an insert with
// another primary key; the second reuse differs only in letter case, which
// the case-insensitive collation calls equal. Ten other inserts are free.
// Chains: insert 'a' -> delete -> insert 'a' (3), and likewise for 'b'/'B'.
func UniqueReuse() Workload {
	return Workload{
		Name:         "unique-reuse",
		Setup:        []string{"CREATE DATABASE w_unique", "CREATE TABLE w_unique.u (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, UNIQUE KEY code (code)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"},
		Transactions: 16,
		CriticalPath: map[string]int{"serial": 16, "writeset": 3},
		Run: func(ctx context.Context, db *sql.DB) error {
			return session(ctx, db, func(c *sql.Conn) error {
				steps := []stmt{
					q("INSERT INTO w_unique.u VALUES (1, 'a')"),
					q("INSERT INTO w_unique.u VALUES (2, 'b')"),
				}
				for i := 0; i < 10; i++ {
					steps = append(steps, q("INSERT INTO w_unique.u VALUES (?, ?)", 10+i, fmt.Sprintf("x%d", i)))
				}
				steps = append(steps,
					q("DELETE FROM w_unique.u WHERE id = 1"),
					q("INSERT INTO w_unique.u VALUES (3, 'a')"),
					q("DELETE FROM w_unique.u WHERE id = 2"),
					q("INSERT INTO w_unique.u VALUES (4, 'B')"))
				for _, s := range steps {
					if err := txn(ctx, c, s); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

// Schemas: 3 schemas, 30 transactions each, round robin from one session,
// each inserting a distinct row: database 30, writeset 1.
func Schemas() Workload {
	w := Workload{
		Name:         "schemas",
		Transactions: 90,
		CriticalPath: map[string]int{"serial": 90, "database": 30, "writeset": 1},
	}
	for i := 1; i <= 3; i++ {
		w.Setup = append(w.Setup, fmt.Sprintf("CREATE DATABASE w_db%d", i), fmt.Sprintf("CREATE TABLE w_db%d.t (id INT PRIMARY KEY)", i))
	}
	w.Run = func(ctx context.Context, db *sql.DB) error {
		return session(ctx, db, func(c *sql.Conn) error {
			for i := 0; i < 90; i++ {
				if err := txn(ctx, c, q(fmt.Sprintf("INSERT INTO w_db%d.t VALUES (?)", i%3+1), i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return w
}

// BigTransactions: 10 transactions of 1000 inserted rows each, disjoint
// (writeset 1 while the history holds 10000 keys).
func BigTransactions() Workload {
	return Workload{
		Name:         "big-txns",
		Setup:        []string{"CREATE DATABASE w_big", "CREATE TABLE w_big.t (id INT PRIMARY KEY, pad VARCHAR(100))"},
		Transactions: 10,
		CriticalPath: map[string]int{"serial": 10, "database": 10, "writeset": 1},
		Run: func(ctx context.Context, db *sql.DB) error {
			return session(ctx, db, func(c *sql.Conn) error {
				for t := 0; t < 10; t++ {
					var vals []string
					for i := 0; i < 1000; i++ {
						vals = append(vals, fmt.Sprintf("(%d, REPEAT('x', 50))", t*1000+i))
					}
					if err := txn(ctx, c, q("INSERT INTO w_big.t VALUES "+strings.Join(vals, ","))); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}
