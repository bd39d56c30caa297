package prepare

import (
	"database/sql"
	"slices"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/stage"
)

// TestGeneratedKeysFromMixed: MariaDB logs an INSERT that leaves an
// AUTO_INCREMENT column to the server (0, as sysbench's oltp_insert
// gives it, NULL, or the column left out) as a statement under
// binlog_format=MIXED, after the INSERT_ID it generated. The preparer
// keys it by the rows it wrote, not by row 0: a later UPDATE of such a
// row waits for its INSERT, and INSERTs of different rows do not wait for
// each other. Under NO_AUTO_VALUE_ON_ZERO a 0 is row 0.
func TestGeneratedKeysFromMixed(t *testing.T) {
	var ids string
	got := preparedFromSource(t, "prepare-autoinc", func(db *sql.DB) {
		if err := db.QueryRowContext(t.Context(), "SELECT GROUP_CONCAT(id ORDER BY id) FROM ai.t").Scan(&ids); err != nil {
			t.Fatal(err)
		}
	},
		"SET SESSION binlog_format = MIXED",
		"CREATE DATABASE ai",
		"CREATE TABLE ai.t (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO ai.t (id, v) VALUES (0, 1)",         // 0-1-3: row 1
		"INSERT INTO ai.t (id, v) VALUES (0, 2), (0, 3)", // 0-1-4: rows 2 and 3
		"UPDATE ai.t SET v = 10 WHERE id = 3",            // 0-1-5
		"UPDATE ai.t SET v = 11 WHERE id = 1",            // 0-1-6
		"SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')",
		"INSERT INTO ai.t (id, v) VALUES (0, 4)",    // 0-1-7: row 0
		"UPDATE ai.t SET v = 12 WHERE id = 0",       // 0-1-8
		"UPDATE ai.t SET v = 13 WHERE id = 2",       // 0-1-9
		"INSERT INTO ai.t (v) VALUES (5)",           // 0-1-10: row 4
		"INSERT INTO ai.t (id, v) VALUES (NULL, 6)", // 0-1-11: row 5
		"SET SESSION auto_increment_increment = 5",
		"INSERT INTO ai.t (v) VALUES (7), (8)", // 0-1-12: rows 6 and 11
		"UPDATE ai.t SET v = 14 WHERE id = 4",  // 0-1-13
		"UPDATE ai.t SET v = 15 WHERE id = 5",  // 0-1-14
		"UPDATE ai.t SET v = 16 WHERE id = 11", // 0-1-15
	)
	if ids != "0,1,2,3,4,5,6,11" {
		t.Fatalf("the source's rows are %s, want 0 to 6 and 11", ids)
	}
	one, twoThree, zero := byGTID(t, got, "0-1-3"), byGTID(t, got, "0-1-4"), byGTID(t, got, "0-1-7")
	for _, c := range []struct {
		later, earlier *stage.Prepared
		want           bool
	}{
		{twoThree, one, false},                    // rows 2 and 3, row 1
		{byGTID(t, got, "0-1-5"), twoThree, true}, // row 3
		{byGTID(t, got, "0-1-5"), one, false},
		{byGTID(t, got, "0-1-6"), one, true},      // row 1
		{byGTID(t, got, "0-1-8"), zero, true},     // row 0
		{byGTID(t, got, "0-1-9"), twoThree, true}, // row 2
		{byGTID(t, got, "0-1-9"), zero, false},
		{byGTID(t, got, "0-1-13"), byGTID(t, got, "0-1-10"), true}, // row 4, its column left out
		{byGTID(t, got, "0-1-14"), byGTID(t, got, "0-1-11"), true}, // row 5, given NULL
		{byGTID(t, got, "0-1-14"), byGTID(t, got, "0-1-10"), false},
		{byGTID(t, got, "0-1-15"), byGTID(t, got, "0-1-12"), true}, // row 11, auto_increment_increment 5
		{byGTID(t, got, "0-1-12"), byGTID(t, got, "0-1-11"), false},
	} {
		if got := waitsFor(c.later, c.earlier); got != c.want {
			t.Errorf("%s (%s) waits for %s (%s): %v, want %v (deps %+v)", c.later.Txn.GTID, c.later.Txn.Txn.Statements[0].Query,
				c.earlier.Txn.GTID, c.earlier.Txn.Txn.Statements[0].Query, got, c.want, c.later.Deps)
		}
	}
}

// preparedFromSource runs stmts on one session of a fresh sandbox with a
// binary log, numbered from GTID 0-1-1, hands the sandbox to check, and
// returns what the preparer makes of the binlog they wrote.
func preparedFromSource(t *testing.T, name string, check func(*sql.DB), stmts ...string) []*stage.Prepared {
	t.Helper()
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: name, Binlog: true})
	ctx := t.Context()
	if err := srv.Exec(ctx, "RESET MASTER"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(ctx, append(stmts, "FLUSH BINARY LOGS")...); err != nil {
		t.Fatal(err)
	}
	if check != nil {
		db, err := srv.DB("")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(db)
	}
	files, err := srv.BinlogFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := run(t, preparer(), &source{entries: entriesOf(t, files[0])})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// waitsFor reports whether later waits for earlier.
func waitsFor(later, earlier *stage.Prepared) bool {
	return later.Deps.Wait >= earlier.Txn.Seq || slices.Contains(later.Deps.On, earlier.Txn.Seq)
}

// waitCase says whether transaction later (a GTID) waits for earlier.
type waitCase struct {
	later, earlier string
	want           bool
}

// checkWaits fails for each case of the prepared transactions got whose
// later does not wait for its earlier as it says.
func checkWaits(t *testing.T, got []*stage.Prepared, cases []waitCase) {
	t.Helper()
	for _, c := range cases {
		later, earlier := byGTID(t, got, c.later), byGTID(t, got, c.earlier)
		if w := waitsFor(later, earlier); w != c.want {
			t.Errorf("%s waits for %s: %v, want %v (deps %+v)", c.later, c.earlier, w, c.want, later.Deps)
		}
	}
}
