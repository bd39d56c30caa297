package checkpoint

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestSaveProgressDoesNotWaitForWorkers: compacting paraply.applied
// deletes the covered rows by their key, so it neither waits on the rows
// that workers inserted and have not committed yet (their GTIDs sort
// between the covered ones) nor deletes anything else; and the target's
// plan says so: the applied table is read by its primary key, one row per
// GTID.
func TestSaveProgressDoesNotWaitForWorkers(t *testing.T) {
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "compact"})
	// As paraply's target connections: multi-statements, interpolated
	// values; and a lock wait fails in a second instead of fifty.
	db, err := sql.Open("mysql", srv.DSN("")+"&interpolateParams=true&innodb_lock_wait_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	st := NewStore(db)
	if err := st.Init(ctx); err != nil {
		t.Fatal(err)
	}
	var all []string
	for i := 1; i <= 250; i++ {
		all = append(all, fmt.Sprintf("0-1-%d", i))
	}
	for _, g := range all {
		q, args := st.AppliedSQL(g, nil)
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// A worker's transaction, open: "0-1-1000" sorts between "0-1-100"
	// and "0-1-101", "0-1-2500" after "0-1-250".
	worker, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	pending := []string{"0-1-1000", "0-1-1999", "0-1-2500", "0-1-99999"}
	if _, err := worker.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	for _, g := range pending {
		q, args := st.AppliedSQL(g, nil)
		if _, err := worker.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}

	// 230 covered: one full statement and one of 30.
	covered := all[:230]
	if err := st.SaveProgress(ctx, "0-1-230", 230, covered); err != nil {
		t.Fatalf("SaveProgress with a worker's transaction open: %v", err)
	}
	if _, err := worker.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var left []string
	rows, err := db.QueryContext(ctx, "SELECT `gtid` FROM `paraply`.`applied` ORDER BY `gtid`")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		left = append(left, g)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(all[230:]), pending...)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("paraply.applied holds %d GTIDs %v\nwant the %d not covered %v", len(left), left, len(want), want)
	}

	// The plan of the statement, on a table where most rows go.
	explain := make([]any, 3)
	for i := range explain {
		explain[i] = all[i]
	}
	plan, err := db.QueryContext(ctx, "EXPLAIN "+deleteAppliedSQL(3), explain...)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	cols, err := plan.Columns()
	if err != nil {
		t.Fatal(err)
	}
	byKey := false
	for plan.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := plan.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i].String
		}
		if row["table"] == "applied" {
			if row["type"] != "eq_ref" || row["key"] != "PRIMARY" {
				t.Errorf("paraply.applied is read by %s on key %q, want eq_ref on PRIMARY", row["type"], row["key"])
			}
			byKey = true
		}
	}
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	if !byKey {
		t.Error("the plan does not read paraply.applied")
	}
}

// TestAppliedRows: one row per target transaction, keyed by its newest
// GTID with the others beside it. On a target whose paraply.applied an
// older paraply made (one row per GTID, no list), Init adds the list and
// the old rows still read; Load and Applied see every GTID of every row;
// compaction deletes a row by its key, and a covered GTID that is no
// row's key deletes nothing.
func TestAppliedRows(t *testing.T) {
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "rows"})
	db, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	for _, q := range []string{"CREATE DATABASE paraply",
		"CREATE TABLE paraply.applied (gtid VARCHAR(120) CHARACTER SET ascii NOT NULL PRIMARY KEY, " +
			"applied_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB",
		"INSERT INTO paraply.applied (gtid) VALUES ('0-1-3')"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	st := NewStore(db)
	for range 2 { // and again, on the table it changed
		if err := st.Init(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range [][]string{{"0-1-5", "0-1-4", "0-1-2"}, {"0-1-6"}, {"0-1-9", "0-1-7", "0-1-8"}} {
		q, args := st.AppliedSQL(w[0], w[1:])
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{"0-1-2", "0-1-3", "0-1-4", "0-1-5", "0-1-6", "0-1-7", "0-1-8", "0-1-9"}
	state, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var loaded []string
	for g := range state.Applied {
		loaded = append(loaded, g)
	}
	slices.Sort(loaded)
	if !slices.Equal(loaded, all) {
		t.Errorf("Load: applied %v, want %v", loaded, all)
	}
	for _, c := range []struct {
		gtids []string
		want  int
	}{
		{[]string{"0-1-5", "0-1-4", "0-1-2"}, 3},
		{[]string{"0-1-9", "0-1-7", "0-1-8", "0-1-6"}, 4},
		{[]string{"0-1-10", "0-1-11"}, 0},
		{[]string{"0-1-9", "0-1-10"}, 1},
		{[]string{"0-1-3"}, 1},
	} {
		if n, err := st.Applied(ctx, c.gtids); err != nil || n != c.want {
			t.Errorf("Applied(%v) = %d, %v; want %d", c.gtids, n, err, c.want)
		}
	}
	// 0-1-4 is no row's key: covering it deletes nothing.
	if err := st.SaveProgress(ctx, "0-1-6", 6, []string{"0-1-3", "0-1-4", "0-1-5", "0-1-6"}); err != nil {
		t.Fatal(err)
	}
	if state, err = st.Load(ctx); err != nil {
		t.Fatal(err)
	}
	loaded = loaded[:0]
	for g := range state.Applied {
		loaded = append(loaded, g)
	}
	slices.Sort(loaded)
	if want := []string{"0-1-7", "0-1-8", "0-1-9"}; !slices.Equal(loaded, want) || state.Position != "0-1-6" {
		t.Errorf("after compaction: applied %v at %q, want %v at 0-1-6", loaded, state.Position, want)
	}
}
