package analyze

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/workload"
)

// runWorkload runs w's setup on src, then its measured transactions between
// two binlog flushes, and returns the binlog files holding exactly the
// measured transactions, plus the catalog as it was before them.
func runWorkload(t *testing.T, src *sandbox.Server, w workload.Workload) ([]string, *schema.Catalog) {
	t.Helper()
	ctx := context.Background()
	if err := src.Exec(ctx, w.Setup...); err != nil {
		t.Fatalf("%s setup: %v", w.Name, err)
	}
	db, err := src.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := schema.Load(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	before := flush(t, src)
	if err := w.Run(ctx, db); err != nil {
		t.Fatalf("%s: %v", w.Name, err)
	}
	return written(before, flush(t, src)), cat
}

// written returns the binlog files that hold what was written between two
// flushes that returned before and after: the file current at the first,
// and the ones created since, but the new current one.
func written(before, after []string) []string {
	files := []string{before[len(before)-1]}
	for _, f := range after[:len(after)-1] {
		if !slices.Contains(before, f) {
			files = append(files, f)
		}
	}
	return files
}

// flush rotates the binlog and returns the files that exist afterwards.
func flush(t *testing.T, src *sandbox.Server) []string {
	t.Helper()
	ctx := context.Background()
	if err := src.Exec(ctx, "FLUSH BINARY LOGS"); err != nil {
		t.Fatal(err)
	}
	files, err := src.BinlogFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestScriptedWorkloads checks exact critical paths of workloads whose
// dependency structure is known by construction.
func TestScriptedWorkloads(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "analyze-src", Binlog: true})
	for _, w := range workload.All() {
		t.Run(w.Name, func(t *testing.T) {
			files, cat := runWorkload(t, src, w)
			r, err := Run(Options{Files: files, Catalog: cat})
			if err != nil {
				t.Fatal(err)
			}
			if r.Transactions != int64(w.Transactions) {
				t.Fatalf("transactions = %d, want %d", r.Transactions, w.Transactions)
			}
			for mode, want := range w.CriticalPath {
				if got := r.Modes[mode].CriticalPath; got != int64(want) {
					t.Errorf("%s critical path = %d, want %d (barriers %v)", mode, got, want, r.Modes[mode].Barriers)
				}
			}
			// MariaDB row events carry no session id: writeset-session
			// adds nothing to writeset on a MariaDB binlog.
			if a, b := r.Modes["writeset-session"].CriticalPath, r.Modes["writeset"].CriticalPath; a != b {
				t.Errorf("writeset-session critical path %d != writeset %d on a MariaDB binlog", a, b)
			}
			if len(r.TablesWithoutSchema) > 0 {
				t.Errorf("tables without schema: %v", r.TablesWithoutSchema)
			}
		})
	}
}

// TestSchemaSources checks that a dump file gives the same analysis as the
// live server, and that no schema at all makes writeset modes fall back to
// barriers (and says which tables lacked one) instead of guessing.
func TestSchemaSources(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "analyze-schema", Binlog: true})
	w := workload.UniqueReuse()
	files, cat := runWorkload(t, src, w)
	dump := filepath.Join(t.TempDir(), "schema.sql")
	cmd := exec.Command("mariadb-dump", "--no-defaults", "-h", src.Host, "-P", strconv.Itoa(src.Port), "-u", src.User, "--no-data", "--databases", "w_unique")
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("mariadb-dump: %v", err)
	}
	if err := os.WriteFile(dump, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fileCat, warnings, err := schema.ParseFile(dump)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("ParseFile: %v %v", err, warnings)
	}
	live, err := Run(Options{Files: files, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := Run(Options{Files: files, Catalog: fileCat})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := live.Modes["writeset"].CriticalPath, fromFile.Modes["writeset"].CriticalPath; a != b || a != 3 {
		t.Errorf("writeset critical path live %d, from dump %d, want 3", a, b)
	}
	none, err := Run(Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if got := none.Modes["writeset"].CriticalPath; got != int64(w.Transactions) {
		t.Errorf("without schema writeset critical path = %d, want %d (every transaction a barrier)", got, w.Transactions)
	}
	if !slices.Equal(none.TablesWithoutSchema, []string{"`w_unique`.`u`"}) {
		t.Errorf("tables without schema = %v", none.TablesWithoutSchema)
	}
}
