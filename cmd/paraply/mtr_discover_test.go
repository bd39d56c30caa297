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
// run to the end within 30 seconds, with how many transactions each made
// the source log (a file that logs none writes nothing a replica could
// get wrong). Files that need what this harness does not give are left
// out before they run: their own server options (.opt, .cnf,
// .combinations, or their suite's, see mtrSuiteUnfit), a debug build,
// mtr's replication setup, or a restart of the server (which would take
// the source away). The result is the raw material for
// testdata/mtr/files.txt and quick.txt.
//
//	PARAPLY_MTR_CANDIDATES=main/type_*.test,...  globs under mysql-test/ (default: mtrCandidates)
//	PARAPLY_MTR_DISCOVER_OUT=path                 also write the results, one file a line, tab-separated:
//	                                              file, exit, seconds, checkpoints, transactions logged, message

// mtrMainPatterns are the DML- and DDL-heavy parts of main.
var mtrMainPatterns = []string{
	"main/insert*.test", "main/update*.test", "main/delete*.test", "main/replace*.test", "main/type_*.test",
	"main/func_*.test", "main/alter_table*.test", "main/create*.test", "main/ctype_*.test", "main/auto_increment*.test",
	"main/null*.test", "main/default*.test", "main/trigger*.test", "main/view*.test", "main/sp*.test",
	"main/partition*.test", "main/truncate*.test", "main/multi_update*.test", "main/loaddata*.test", "main/merge*.test",
	"main/temp_table*.test", "main/strict*.test", "main/timezone*.test", "main/xa*.test", "main/check_constraint*.test",
	"main/dyncol*.test", "main/long_unique*.test", "main/commit*.test", "main/foreign_key*.test",
	"main/information_schema_part*.test", "main/gis*.test", "main/grant*.test", "main/mysqldump*.test",
}

// mtrUnfitSuites are the suite and plugin directories (under mtrDir)
// whose files cannot run on one plain server, and why. The others are
// candidates, every file of theirs with a result file (how mtr tells a
// test from an include file that is named .test).
var mtrUnfitSuites = map[string]string{
	"suite/galera":                    "Galera",
	"suite/galera_3nodes":             "Galera",
	"suite/galera_sr":                 "Galera",
	"suite/galera_3nodes_sr":          "Galera",
	"suite/wsrep":                     "Galera",
	"plugin/wsrep_info":               "Galera",
	"suite/rpl":                       "replication set-ups of its own",
	"suite/multi_source":              "replication set-ups of its own",
	"suite/mariabackup":               "the backup tool and restarts",
	"suite/atomic":                    "crashes and restarts the server",
	"suite/perfschema":                "the performance schema (off here)",
	"suite/perfschema_stress":         "the performance schema (off here)",
	"suite/sysschema":                 "the performance schema (off here)",
	"suite/stress":                    "long stress runs",
	"suite/large_tests":               "long runs",
	"suite/unit":                      "unit tests of the server's code",
	"suite/mtr":                       "tests of mysql-test-run itself",
	"suite/mtr2":                      "tests of mysql-test-run itself",
	"suite/s3":                        "an S3 server",
	"plugin/hashicorp_key_management": "a Vault server",
	"plugin/rocksdb":                  "the RocksDB engine (not installed)",
	"plugin/spider":                   "the Spider engine (not installed)",
	"plugin/connect":                  "the CONNECT engine (not installed)",
	"plugin/mroonga":                  "the Mroonga engine (not installed)",
	"plugin/oqgraph":                  "the OQGraph engine (not installed)",
	"plugin/sphinx":                   "a Sphinx server",
	"plugin/handler_socket":           "the HandlerSocket plugin (not installed)",
	"plugin/auth_gssapi":              "Kerberos",
}

// mtrCandidates lists the candidate files: main's mtrMainPatterns and
// every test of every suite and plugin directory but mtrUnfitSuites'.
func mtrCandidates() ([]string, error) {
	var cands []string
	for _, p := range mtrMainPatterns {
		matches, err := filepath.Glob(filepath.Join(mtrDir, p))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			rel, _ := filepath.Rel(mtrDir, m)
			cands = append(cands, rel)
		}
	}
	for _, top := range []string{"suite", "plugin"} {
		err := filepath.WalkDir(filepath.Join(mtrDir, top), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(mtrDir, path)
			if d.IsDir() {
				if mtrUnfitSuites[rel] != "" {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(rel, ".test") && mtrHasResult(path) {
				cands = append(cands, rel)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(cands)
	return slices.Compact(cands), nil
}

// mtrHasResult reports whether a test file has its result file: r/x.result
// beside t/x.test, or x.result beside x.test.
func mtrHasResult(test string) bool {
	name := strings.TrimSuffix(filepath.Base(test), ".test") + ".result"
	dir := filepath.Dir(test)
	for _, r := range []string{filepath.Join(filepath.Dir(dir), "r", name), filepath.Join(dir, name)} {
		if _, err := os.Stat(r); err == nil {
			return true
		}
	}
	return false
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
	if why := mtrSuiteUnfit(mtrSuiteDir(filepath.Join(mtrDir, rel))); why != "" {
		return why
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

// mtrSuiteDir is the directory of the suite a test file (an absolute
// path) belongs to: its directory, or the parent of a t/ directory.
func mtrSuiteDir(test string) string {
	dir := filepath.Dir(test)
	if filepath.Base(dir) == "t" {
		dir = filepath.Dir(dir)
	}
	return dir
}

// mtrSuiteUnfit says why the files of a suite directory cannot run here
// because of the suite's own options, or "": a my.cnf (servers of its
// own; storage_engine's only sets sql_mode and the binlog, which do not
// keep its files from running), or a suite.opt with more than loading a
// plugin the rig loads or setting the server's time zone.
func mtrSuiteUnfit(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "my.cnf")); err == nil && !strings.Contains(dir, "/suite/storage_engine") {
		return "its suite has its own my.cnf"
	}
	opt, err := os.ReadFile(filepath.Join(dir, "suite.opt"))
	if err != nil {
		return ""
	}
	for _, o := range strings.Fields(string(opt)) {
		name, value, _ := strings.Cut(strings.TrimPrefix(o, "--"), "=")
		switch {
		case name == "plugin-load-add" && mtrLoadsPlugin(value):
		case name == "timezone":
		case strings.HasPrefix(name, "plugin-") && value == "ON" && mtrLoadsPlugin("$"+strings.ToUpper(strings.TrimPrefix(name, "plugin-"))+"_SO"):
		default:
			return "its suite.opt has " + o
		}
	}
	return ""
}

// mtrDiscover runs the discovery (see above).
func mtrDiscover(t *testing.T, set mtrSettings) {
	var cands []string
	if env := os.Getenv("PARAPLY_MTR_CANDIDATES"); env != "" {
		for _, p := range strings.Split(env, ",") {
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
	} else {
		var err error
		if cands, err = mtrCandidates(); err != nil {
			t.Fatal(err)
		}
	}
	rig := newMTRRig(t, set.format, false)
	runner := newMTRRunner(t, rig, 30*time.Second)
	var out strings.Builder
	kept := 0
	for _, rel := range cands {
		line := func(exit int, took time.Duration, checks int, logged uint64, msg string) {
			l := fmt.Sprintf("%s\t%d\t%.1f\t%d\t%d\t%s", rel, exit, took.Seconds(), checks, logged, abbrev(strings.ReplaceAll(msg, "\t", " "), 200))
			out.WriteString(l + "\n")
			t.Log(l)
		}
		if why := mtrUnfit(rel); why != "" {
			line(-2, 0, 0, 0, why)
			continue
		}
		rig.reset(t)
		before, _ := mtrSourcePos(t.Context(), rig.sdb)
		checks := 0
		run := runner.run(t.Context(), rel, func(string) bool { checks++; return true })
		after, _ := mtrSourcePos(t.Context(), rig.sdb)
		if run.exit == 0 {
			kept++
		}
		if err := rig.sdb.PingContext(t.Context()); err != nil {
			run.message += " (the source went away)"
			run.exit = -3
		}
		line(run.exit, run.took, checks, mtrLogged(before, after), run.message)
	}
	t.Logf("discovery: %d of %d candidates ran to the end", kept, len(cands))
	if path := os.Getenv("PARAPLY_MTR_DISCOVER_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// mtrLogged is how many transactions the source logged between two of its
// positions (@@gtid_binlog_pos), over all domains.
func mtrLogged(before, after string) uint64 {
	was := map[uint64]uint64{}
	for _, g := range strings.Split(before, ",") {
		if d, n, ok := mtrGTID(g); ok {
			was[d] = n
		}
	}
	var sum uint64
	for _, g := range strings.Split(after, ",") {
		if d, n, ok := mtrGTID(g); ok && n > was[d] {
			sum += n - was[d]
		}
	}
	return sum
}
