package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Discovery (PARAPLY_MTR_DISCOVER=1) finds which files of MariaDB's suite
// can serve as workload here: it runs candidate files, with their
// checkpoints (answered at once), on a source alone, and keeps those that
// run to the end within 30 seconds. Files that need what this harness does
// not give are left out before they run: their own server options (.opt,
// .cnf, .combinations), a debug build, mtr's replication setup, or a
// restart of the server (which would take the source away). The result
// is the raw material for testdata/mtr/files.txt and quick.txt.
//
//	PARAPLY_MTR_CANDIDATES=main/type_*.test,...  globs under mysql-test/ (default mtrCandidatePatterns)
//	PARAPLY_MTR_DISCOVER_OUT=path                 also write the results, one file a line, tab-separated

// mtrCandidatePatterns are the DML- and DDL-heavy parts of the suite.
var mtrCandidatePatterns = []string{
	"main/insert*.test", "main/update*.test", "main/delete*.test", "main/replace*.test", "main/type_*.test",
	"main/func_*.test", "main/alter_table*.test", "main/create*.test", "main/ctype_*.test", "main/auto_increment*.test",
	"main/null*.test", "main/default*.test", "main/trigger*.test", "main/view*.test", "main/sp*.test",
	"main/partition*.test", "main/truncate*.test", "main/multi_update*.test", "main/loaddata*.test", "main/merge*.test",
	"main/temp_table*.test", "main/strict*.test", "main/timezone*.test", "main/xa*.test", "main/check_constraint*.test",
	"main/dyncol*.test", "main/long_unique*.test", "main/commit*.test", "main/foreign_key*.test",
	"suite/innodb/t/*.test", "suite/versioning/t/*.test", "suite/vcol/t/*.test", "suite/gcol/t/*.test",
	"suite/sql_sequence/*.test", "suite/period/t/*.test", "suite/json/t/*.test", "suite/rpl/t/*.test",
}

// mtrUnfitMarkers in a test file's text mean it cannot run here.
var mtrUnfitMarkers = []string{
	"restart_mysqld", "restart_mariadbd", "shutdown_server", "kill_mysqld", "kill_and_restart", "start_mysqld",
	"mysqld.1.expect", "master-slave.inc", "rpl_init.inc", "have_debug", "debug_sync", "reset master",
	"have_wsrep", "galera", "innodb_force_recovery", "not_windows_embedded",
}

// mtrUnfit says why a file (relative to mtrDir) cannot run here, or "".
func mtrUnfit(rel string) string {
	base := strings.TrimSuffix(filepath.Join(mtrDir, rel), ".test")
	for _, ext := range []string{".opt", "-master.opt", "-slave.opt", ".cnf", ".combinations"} {
		if _, err := os.Stat(base + ext); err == nil {
			return "has its own " + ext
		}
	}
	text, err := os.ReadFile(filepath.Join(mtrDir, rel))
	if err != nil {
		return err.Error()
	}
	lower := strings.ToLower(string(text))
	for _, m := range mtrUnfitMarkers {
		if strings.Contains(lower, m) {
			return "mentions " + m
		}
	}
	return ""
}

// mtrDiscover runs the discovery (see above).
func mtrDiscover(t *testing.T, set mtrSettings) {
	patterns := mtrCandidatePatterns
	if env := os.Getenv("PARAPLY_MTR_CANDIDATES"); env != "" {
		patterns = strings.Split(env, ",")
	}
	var cands []string
	for _, p := range patterns {
		matches, err := filepath.Glob(filepath.Join(mtrDir, strings.TrimSpace(p)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			rel, _ := filepath.Rel(mtrDir, m)
			if !slices.Contains(cands, rel) {
				cands = append(cands, rel)
			}
		}
	}
	rig := newMTRRig(t, set.format, false)
	runner := newMTRRunner(t, rig, 30*time.Second)
	var out strings.Builder
	kept := 0
	for _, rel := range cands {
		line := func(exit int, took time.Duration, checks int, msg string) {
			l := fmt.Sprintf("%s\t%d\t%.1f\t%d\t%s", rel, exit, took.Seconds(), checks, abbrev(strings.ReplaceAll(msg, "\t", " "), 200))
			out.WriteString(l + "\n")
			t.Log(l)
		}
		if why := mtrUnfit(rel); why != "" {
			line(-2, 0, 0, why)
			continue
		}
		rig.reset(t)
		checks := 0
		run := runner.run(t.Context(), rel, func(string) bool { checks++; return true })
		if run.exit == 0 {
			kept++
		}
		if err := rig.sdb.PingContext(t.Context()); err != nil {
			run.message += " (the source went away)"
			run.exit = -3
		}
		line(run.exit, run.took, checks, run.message)
	}
	t.Logf("discovery: %d of %d candidates ran to the end", kept, len(cands))
	if path := os.Getenv("PARAPLY_MTR_DISCOVER_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
