package checkpoint

import (
	"database/sql"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestPreviousReleaseLayout: a target whose bookkeeping the release before
// streams wrote (its tables as testdata/bookkeeping-1b5298d.sql creates
// them, with a checkpoint in them) is the default stream's as it is:
// Init adds only the tables streams brought (lag, tables) and the column
// that records the relay log (progress.relay_log), gives the columns that
// hold names utf8mb4 (utf8mb4_bin), and changes nothing else, Load reads the old checkpoint, and the stream's lock is the old
// release's, so that the two never run on one target at once.
func TestPreviousReleaseLayout(t *testing.T) {
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "upgrade"})
	db, err := srv.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	old, err := os.ReadFile("testdata/bookkeeping-1b5298d.sql")
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for _, s := range strings.Split(string(old), ";\n") {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "--") {
				lines = append(lines, l)
			}
		}
		if q := strings.TrimSpace(strings.Join(lines, "\n")); q != "" {
			stmts = append(stmts, q)
		}
	}
	stmts = append(stmts,
		"INSERT INTO paraply.progress (id, position, relay_index, started) VALUES (1, '0-1-40', 40, '0-1-3')",
		"INSERT INTO paraply.applied (gtid, others) VALUES ('0-1-44', '0-1-42,0-1-43'), ('0-1-46', NULL)")
	if err := srv.Exec(ctx, stmts...); err != nil {
		t.Fatal(err)
	}
	before := showTables(t, db)

	// An old process holds the target: the default stream waits for it.
	oldLock, err := Lock(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockStream(ctx, db, DefaultStream); err == nil {
		t.Error("the default stream took the lock the previous release holds")
	}
	oldLock.Release()

	st := NewStreamStore(db, Replicate, DefaultStream)
	if err := st.Init(ctx); err != nil {
		t.Fatal(err)
	}
	after := showTables(t, db)
	// progress gains the record of its relay log, and nothing else.
	relayCol := "  `relay_log` varchar(64) CHARACTER SET ascii COLLATE ascii_general_ci DEFAULT NULL,\n"
	if !strings.Contains(after["progress"], relayCol) {
		t.Errorf("Init did not add relay_log to progress:\n%s", after["progress"])
	}
	after["progress"] = strings.Replace(after["progress"], relayCol, "", 1)
	// The columns that hold names become utf8mb4, compared byte for byte.
	for _, col := range []string{"`schema_name` varchar(64)", "`table_name` varchar(64)", "`query` longtext", "`objects` mediumtext"} {
		for name, def := range before {
			before[name] = strings.ReplaceAll(def, col+" NOT NULL", col+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL")
		}
	}
	for name, def := range before {
		if after[name] != def {
			t.Errorf("Init changed %s:\n%s\nto\n%s", name, def, after[name])
		}
	}
	_, lag := after["lag"]
	if _, ok := after["tables"]; !ok || !lag || len(after) != len(before)+2 {
		t.Errorf("Init made tables %v of %v; want only `lag` and `tables` added", keys(after), keys(before))
	}
	state, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0-1-42", "0-1-43", "0-1-44", "0-1-46"}
	if state.Position != "0-1-40" || state.RelayIndex != 40 || state.Started != "0-1-3" || state.RelayLog != "" || len(state.Applied) != len(want) {
		t.Fatalf("the old checkpoint read as %+v", state)
	}
	for _, g := range want {
		if !state.Applied[g] {
			t.Errorf("%s, applied by the old release, is not in the stream's state", g)
		}
	}
}

// showTables returns SHOW CREATE TABLE of every table in paraply, by name.
func showTables(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'paraply'")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	out := map[string]string{}
	for _, n := range names {
		var name, def string
		if err := db.QueryRow("SHOW CREATE TABLE paraply."+n).Scan(&name, &def); err != nil {
			t.Fatal(err)
		}
		out[n] = def
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
