package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// TestMariaDBSuite is a differential fidelity test over MariaDB's own test
// suite (issue 34): each selected mysql-test file runs on a source while
// MariaDB's own replica (the oracle) and paraply replicate it onto two
// targets, and the targets are compared with the source at checkpoints
// (before each statement that drops or truncates, and at the end of the
// file: see mtrCheckpoints). A file where paraply does worse than the
// native replica (it stops where the native replica goes on, or its target
// differs where the native replica's equals the source) fails the test,
// unless PARAPLY_MTR_REPORT_ONLY=1.
//
// The environment selects what runs:
//
//	PARAPLY_MTR_LIST=full            testdata/mtr/files.txt (default: testdata/mtr/quick.txt)
//	PARAPLY_MTR_FILES=a.test,b.test  these files instead (paths under mysql-test/, main/ names or absolute paths)
//	PARAPLY_MTR_BINLOG_FORMAT=MIXED  the source's binlog_format (default ROW)
//	PARAPLY_MTR_REPORT=path.md       also write the verdicts as a Markdown table
//	PARAPLY_MTR_REPORT_ONLY=1        report, do not fail
//	PARAPLY_MTR_DISCOVER=1           discovery mode instead (see mtrDiscover)
//
// It needs Debian's package mariadb-test (the mariadb-test client and the
// files); without it the test fails rather than skips, so that a machine
// that lacks it is noticed (make deps installs it).
func TestMariaDBSuite(t *testing.T) {
	mtrRequireSuite(t)
	set := mtrSettingsFromEnv(t)
	if set.discover {
		mtrDiscover(t, set)
		return
	}
	begin := time.Now()
	rig := newMTRRig(t, set.format, true)
	runner := newMTRRunner(t, rig, set.fileTimeout)
	var results []mtrResult
	for _, rel := range set.files {
		res := mtrRunFile(t, rig, runner, rel)
		t.Logf("%-45s %-24s %3d checks %5.1fs  %s", res.file, res.verdict, res.checks, res.took.Seconds(), res.detail)
		results = append(results, res)
	}
	summary := mtrSummary(results)
	t.Logf("%s (%s binlog, %d files in %s)", summary, set.format, len(results), time.Since(begin).Round(time.Second))
	if set.report != "" {
		if err := mtrWriteReport(set, results, summary, time.Since(begin)); err != nil {
			t.Error(err)
		}
	}
	if set.reportOnly {
		return
	}
	for _, res := range results {
		if res.verdict == verdictParaplyWorse {
			t.Errorf("%s: paraply does worse than MariaDB's replica: %s", res.file, res.detail)
		}
	}
}

// mtrSettings are a run's settings, from the environment.
type mtrSettings struct {
	format      string
	list        string // which list the files come from, for the report
	files       []string
	report      string
	reportOnly  bool
	discover    bool
	fileTimeout time.Duration
}

func mtrSettingsFromEnv(t *testing.T) mtrSettings {
	t.Helper()
	set := mtrSettings{
		format:      strings.ToUpper(os.Getenv("PARAPLY_MTR_BINLOG_FORMAT")),
		list:        os.Getenv("PARAPLY_MTR_LIST"),
		report:      os.Getenv("PARAPLY_MTR_REPORT"),
		reportOnly:  os.Getenv("PARAPLY_MTR_REPORT_ONLY") == "1",
		discover:    os.Getenv("PARAPLY_MTR_DISCOVER") == "1",
		fileTimeout: 5 * time.Minute,
	}
	switch set.format {
	case "":
		set.format = "ROW"
	case "ROW", "MIXED", "STATEMENT":
	default:
		t.Fatalf("PARAPLY_MTR_BINLOG_FORMAT=%s: want ROW, MIXED or STATEMENT", set.format)
	}
	switch set.list {
	case "", "quick":
		set.list = "quick"
	case "full":
	default:
		t.Fatalf("PARAPLY_MTR_LIST=%s: want quick or full", set.list)
	}
	if files := os.Getenv("PARAPLY_MTR_FILES"); files != "" {
		set.list = "PARAPLY_MTR_FILES"
		for _, f := range strings.Split(files, ",") {
			f = strings.TrimSpace(f)
			if !strings.Contains(f, "/") {
				f = "main/" + f
			}
			set.files = append(set.files, f)
		}
		return set
	}
	if set.discover {
		return set
	}
	name := map[string]string{"quick": "quick.txt", "full": "files.txt"}[set.list]
	set.files = mtrReadList(t, filepath.Join("testdata", "mtr", name))
	return set
}

// mtrReadList reads a list of test files: one path relative to mtrDir a
// line, '#' starting a comment.
func mtrReadList(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var files []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			files = append(files, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return files
}

// mtrRequireSuite fails the test when the suite or its client is missing.
func mtrRequireSuite(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("mariadb-test")
	if err == nil {
		_, err = os.Stat(filepath.Join(mtrDir, "main", "insert.test"))
	}
	if err != nil {
		t.Fatalf("MariaDB's test suite is missing (%v): install Debian's package mariadb-test "+
			"(apt-get install mariadb-test, or make deps)", err)
	}
}

// mtrResult is a file's verdict.
type mtrResult struct {
	file    string
	verdict string
	checks  int
	detail  string // paraply's first error or first difference; why it was skipped
	took    time.Duration
	crashes []mtrCrash // replicas' servers that died while the file ran
}

// mtrFile is the state of the file being run.
type mtrFile struct {
	checks         []mtrCheck
	lastPos        string // the source's position at the last comparison
	nativeStopped  string
	paraplyStopped string
	// A replica's server that died: what it left (mtrCrash.summary);
	// crashes keeps the whole of each.
	nativeCrashed, paraplyCrashed string
	crashes                       []mtrCrash
	broken                        string // the harness could not compare (a server went away)
	artifacts                     int    // tables whose CHECKSUM TABLE differed on equal rows
}

// mtrRunFile resets the rig, runs one file with its checkpoints, and
// judges it.
func mtrRunFile(t *testing.T, rig *mtrRig, runner *mtrRunner, rel string) mtrResult {
	t.Helper()
	ctx := t.Context()
	res := mtrResult{file: rel}
	rig.reset(t)
	st := &mtrFile{}
	run := runner.run(ctx, rel, func(at string) bool {
		rig.check(ctx, st, at)
		return st.broken == ""
	})
	res.took = run.took
	if run.sourceGone {
		c := mtrCrashReport("the source", rig.src.LogPath)
		st.broken = "the source's server exited (the file shuts it down, or crashed it): " + c.summary
	}
	if !run.started || run.exit == 62 {
		res.verdict, res.detail = verdictSkipped, "mariadb-test: "+run.message
		return res
	}
	if !run.sawEnd && st.broken == "" {
		rig.check(ctx, st, "after exit")
	}
	res.checks = len(st.checks)
	res.verdict, res.detail = mtrJudge(st.checks)
	res.crashes = st.crashes
	for _, c := range st.crashes {
		t.Logf("%s: %s's server died: %s\n%s", rel, c.server, c.summary, c.excerpt)
	}
	if st.artifacts > 0 {
		t.Logf("%s: CHECKSUM TABLE differed on equal rows %d times", rel, st.artifacts)
	}
	switch {
	case st.broken != "":
		res.verdict, res.detail = verdictSkipped, st.broken
		t.Logf("%s: the end of the source's error log:\n%s", rel, mtrTail(rig.src.LogPath, 15))
	case run.exit != 0:
		res.detail = strings.TrimSpace(res.detail + " (mariadb-test exit " + fmt.Sprint(run.exit) + ": " + abbrev(run.message, 120) + ")")
	}
	return res
}

// check compares both targets with the source once both replicas applied
// what the source has logged, or stopped trying. Nothing new logged since
// the last comparison means nothing new to compare.
func (r *mtrRig) check(ctx context.Context, st *mtrFile, at string) {
	if st.broken != "" {
		return
	}
	pos, err := mtrSourcePos(ctx, r.sdb)
	if err != nil {
		st.broken = "the source went away: " + err.Error()
		return
	}
	if pos == st.lastPos {
		return
	}
	st.lastPos = pos
	const limit = 60 * time.Second
	nativeRan, paraplyRan := st.nativeStopped == "", st.paraplyStopped == ""
	if nativeRan {
		st.nativeStopped = r.waitNative(ctx, pos, limit)
	}
	if paraplyRan {
		st.paraplyStopped = r.waitParaply(ctx, pos, limit)
	}
	src, err := mtrTakeSnapshot(ctx, r.sdb)
	if err != nil {
		st.broken = "reading the source: " + err.Error()
		return
	}
	c := mtrCheck{at: at}
	c.native = r.compare(ctx, st, src, mtrReplica{"MariaDB's replica", r.native, r.ndb, &st.nativeStopped, &st.nativeCrashed,
		nativeRan && st.nativeStopped != ""})
	c.paraply = r.compare(ctx, st, src, mtrReplica{"paraply's target", r.tgt, r.tdb, &st.paraplyStopped, &st.paraplyCrashed,
		paraplyRan && st.paraplyStopped != ""})
	st.checks = append(st.checks, c)
}

// mtrReplica is one replica as a checkpoint sees it: its server, the
// harness's pool on it, and where the file's state records that it
// stopped or that its server died.
type mtrReplica struct {
	name             string
	srv              *sandbox.Server
	db               *sql.DB
	stopped, crashed *string
	// justStopped: it stopped at this checkpoint, perhaps because its
	// server is dying (writing its stack before it exits).
	justStopped bool
}

// died records the crash of the replica's server, if it is gone, and
// reports whether it is. Where the server may be dying (a failed read, a
// replica that stopped just now: wait) it gives the server a moment to be
// seen exited; at the later checkpoints of a replica that stopped
// applying it asks without waiting, 5 s a checkpoint otherwise.
func (rep mtrReplica) died(st *mtrFile, wait bool) bool {
	if *rep.crashed != "" {
		return true
	}
	if gone := !rep.srv.Running() || wait && mtrGone(rep.srv); !gone {
		return false
	}
	c := mtrCrashReport(rep.name, rep.srv.LogPath)
	st.crashes = append(st.crashes, c)
	*rep.crashed = c.summary
	return true
}

// compare compares one replica's target with the source's snapshot.
func (r *mtrRig) compare(ctx context.Context, st *mtrFile, src mtrSnapshot, rep mtrReplica) mtrSide {
	if *rep.stopped != "" {
		if rep.died(st, rep.justStopped) {
			return mtrSide{crashed: *rep.crashed}
		}
		return mtrSide{stopped: *rep.stopped}
	}
	snap, err := mtrTakeSnapshot(ctx, rep.db)
	if err != nil {
		if rep.died(st, true) {
			*rep.stopped = "its server died"
			return mtrSide{crashed: *rep.crashed}
		}
		return mtrSide{stopped: "reading its target: " + err.Error()}
	}
	db := rep.db
	diffs := mtrDiff(src, snap, func(o mtrObject) string {
		want, err := mtrDump(ctx, r.sdb, o)
		if err != nil {
			return "cannot read the source's rows: " + err.Error()
		}
		got, err := mtrDump(ctx, db, o)
		if err != nil {
			return "cannot read the rows: " + err.Error()
		}
		d := mtrFirstRowDiff(want, got)
		if d == "" {
			st.artifacts++ // CHECKSUM TABLE differed on equal rows
		}
		return d
	})
	return mtrSide{diffs: diffs}
}

// mtrTail returns the last n lines of a file.
func mtrTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
