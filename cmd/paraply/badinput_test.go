package main

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/verify"
)

// replPair is a source and a target for the end-to-end tests of this file,
// with direct connections to both.
type replPair struct {
	src, tgt *sandbox.Server
	sdb, tdb *sql.DB
	start    string // the source's position before the test's setup
}

func newReplPair(t *testing.T, name string) *replPair {
	t.Helper()
	return startReplPair(t, sandbox.Options{Name: name + "src", Binlog: true}, sandbox.Options{Name: name + "tgt", ServerID: 2})
}

// startReplPair starts a source and a target with the options given.
func startReplPair(t *testing.T, srcOpts, tgtOpts sandbox.Options) *replPair {
	t.Helper()
	p := &replPair{src: sandboxtest.ForTest(t, srcOpts), tgt: sandboxtest.ForTest(t, tgtOpts)}
	if err := p.src.Exec(context.Background(), "CREATE DATABASE warmup"); err != nil {
		t.Fatal(err)
	}
	var err error
	if p.sdb, err = p.src.DB(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.sdb.Close() })
	if p.tdb, err = p.tgt.DB(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.tdb.Close() })
	if err := p.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&p.start); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs paraply to completion (at most 2 minutes) and returns its exit
// status and output.
func runParaply(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := paraply(args...)
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := runWithin(cmd, 2*time.Minute)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("paraply %s: %v\n%s", strings.Join(args, " "), err, out.String())
	return -1, ""
}

// exec runs statements on db, failing the test on an error.
func execAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// commitGTID runs stmts as one transaction on its own session of db and
// returns the GTID the source gave it. A statement starting with SET runs
// before the transaction.
func commitGTID(t *testing.T, db *sql.DB, stmts ...string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Discard the session rather than give it back to the pool with the
	// settings the SET statements made.
	defer conn.Raw(func(any) error { return driver.ErrBadConn })
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var gtid string
	if err := conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&gtid); err != nil {
		t.Fatal(err)
	}
	return gtid
}

func (p *replPair) equal(t *testing.T, schemas ...string) {
	t.Helper()
	equalDBs(t, p.sdb, p.tdb, "target", schemas...)
}

// equalDBs fails the test unless verify finds the schemas (all when none
// are named) equal on src and on dst, which name calls dst.
func equalDBs(t *testing.T, src, dst *sql.DB, name string, schemas ...string) {
	t.Helper()
	rep, err := verify.Run(context.Background(), verify.Options{Source: src, Target: dst, Schemas: schemas})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equal() {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Fatalf("%s differs from the source:\n%s", name, b.String())
	}
}

// applied reports whether the target's checkpoint records gtid: in
// paraply.applied (a row's key, or in its list of others), or below the
// low-water mark.
func (p *replPair) applied(t *testing.T, gtid string) bool {
	t.Helper()
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM paraply.applied WHERE gtid = ? OR FIND_IN_SET(?, others)", gtid, gtid).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var pos string
	if err := p.tdb.QueryRow("SELECT position FROM paraply.progress WHERE id = 1").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return n > 0 || gtidIn(gtid, pos)
}

// gtidIn reports whether the MariaDB GTID d-s-n is within position (a
// list of d-s-n, one per domain).
func gtidIn(gtid, position string) bool {
	var d, s, n uint64
	if _, err := fmt.Sscanf(gtid, "%d-%d-%d", &d, &s, &n); err != nil {
		return false
	}
	for _, p := range strings.Split(position, ",") {
		var pd, ps, pn uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(p), "%d-%d-%d", &pd, &ps, &pn); err == nil && pd == d && pn >= n {
			return true
		}
	}
	return false
}

// TestConflictsStopAndResume makes the target differ from the source in
// each way the binlog cannot be applied to (table missing, different
// columns, row missing for an update or a delete, duplicate key, and a
// statement-format statement meeting a duplicate), and checks that replicate exits with
// status 1 and an error naming the GTID, the table and the key; that the
// transaction and everything after it are not applied and the checkpoint
// does not claim them; and that once the target is fixed by hand a restart
// resumes and ends equal to the source.
//
// Every apply path is tried. The binlog path stops where MariaDB's own
// replica stops: it takes a target table with an extra column at the end,
// as the native replica does, so that case applies there, and with auto,
// which sends such a table to it.
func TestConflictsStopAndResume(t *testing.T) {
	for _, path := range []string{"auto", "binlog", "sql"} {
		t.Run(path, func(t *testing.T) { testConflictsStopAndResume(t, path) })
	}
}

func testConflictsStopAndResume(t *testing.T, path string) {
	p := newReplPair(t, "bad")
	args := []string{"replicate", "--apply", path, "--source", p.src.URL(), "--target", p.tgt.URL(), "--workers", "4",
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", p.start, "--until-caught-up",
		"--heartbeat", "200ms", "--log-level", "warn", "--http", ""}
	setup := []string{"CREATE DATABASE bad", "CREATE TABLE bad.log (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(40))"}
	for _, name := range []string{"missing", "wide", "upd", "del", "dup", "stmt"} {
		setup = append(setup, "CREATE TABLE bad."+name+" (id INT PRIMARY KEY, v VARCHAR(20))",
			"INSERT INTO bad."+name+" VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d'),(5,'e')")
	}
	execAll(t, p.sdb, setup...)
	if code, out := runParaply(t, nil, args...); code != 0 {
		t.Fatalf("initial catch-up: exit %d\n%s", code, out)
	}

	cases := []struct {
		name  string
		burst int // independent transactions just before the conflicting one
		// stmtBurst: the burst is logged as statements, so that the
		// conflict is met inside a packet of statements.
		stmtBurst bool
		damage    []string // on the target
		change    []string // the conflicting transaction, on the source
		want      []string // in the error, besides the GTID
		fix       []string // on the target
		// binlogApplies: the target's own row applier applies the change
		// (as a native replica would), so the binlog path does not stop.
		binlogApplies bool
	}{
		{
			name:   "table missing",
			damage: []string{"DROP TABLE bad.missing"},
			change: []string{"INSERT INTO bad.missing VALUES (6, 'f')"},
			want:   []string{"`bad`.`missing`", "table missing on the target"},
			fix: []string{"CREATE TABLE bad.missing (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO bad.missing VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d'),(5,'e')"},
		},
		{
			name:   "different column count",
			damage: []string{"ALTER TABLE bad.wide ADD COLUMN extra INT"},
			change: []string{"UPDATE bad.wide SET v = 'B' WHERE id = 2"},
			want:   []string{"`bad`.`wide`", "3 columns", "2"},
			fix:    []string{"ALTER TABLE bad.wide DROP COLUMN extra"},
			// MariaDB's replica takes extra columns at the end of a table.
			binlogApplies: true,
		},
		{
			name:   "row missing for an update",
			damage: []string{"DELETE FROM bad.upd WHERE id = 3"},
			change: []string{"UPDATE bad.upd SET v = 'C' WHERE id = 3"},
			want:   []string{"`bad`.`upd`", "id=3", "not found on the target"},
			fix:    []string{"INSERT INTO bad.upd VALUES (3, 'c')"},
		},
		{
			name:   "row missing for a delete",
			damage: []string{"DELETE FROM bad.del WHERE id = 4"},
			change: []string{"DELETE FROM bad.del WHERE id = 4"},
			want:   []string{"`bad`.`del`", "id=4", "not found on the target"},
			fix:    []string{"INSERT INTO bad.del VALUES (4, 'd')"},
		},
		{
			name:   "duplicate key",
			damage: []string{"INSERT INTO bad.dup VALUES (7, 'target')"},
			change: []string{"INSERT INTO bad.dup VALUES (7, 'source')"},
			want:   []string{"`bad`.`dup`", "duplicate key", "'7'"},
			fix:    []string{"DELETE FROM bad.dup WHERE id = 7"},
		},
		{
			// Many small transactions ahead of it, so that it is applied in
			// a batch with others.
			name:   "duplicate key in a batch",
			burst:  60,
			damage: []string{"INSERT INTO bad.dup VALUES (9, 'target')"},
			change: []string{"INSERT INTO bad.dup VALUES (9, 'source')"},
			want:   []string{"`bad`.`dup`", "duplicate key", "'9'"},
			fix:    []string{"DELETE FROM bad.dup WHERE id = 9"},
		},
		{
			name:   "statement format",
			damage: []string{"INSERT INTO bad.stmt VALUES (8, 'target')"},
			change: []string{"SET SESSION binlog_format = 'STATEMENT'", "INSERT INTO bad.stmt VALUES (8, 'h')"},
			want:   []string{"statement failed on the target", "INSERT INTO bad.stmt VALUES (8, 'h')", "Duplicate entry '8'"},
			fix:    []string{"DELETE FROM bad.stmt WHERE id = 8"},
		},
		{
			// Statements ahead of it in the same work: the packet that
			// stops at it does not say which statement failed, and the
			// work applied again one statement at a time names it.
			name:      "statement format in a batch",
			burst:     40,
			stmtBurst: true,
			damage:    []string{"INSERT INTO bad.stmt VALUES (9, 'target')"},
			change:    []string{"SET SESSION binlog_format = 'STATEMENT'", "INSERT INTO bad.stmt VALUES (9, 'i')"},
			want:      []string{"statement failed on the target", "INSERT INTO bad.stmt VALUES (9, 'i')", "Duplicate entry '9'"},
			fix:       []string{"DELETE FROM bad.stmt WHERE id = 9"},
		},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			execAll(t, p.tdb, c.damage...)
			for i := range c.burst {
				burst := fmt.Sprintf("INSERT INTO bad.log (note) VALUES ('burst %d')", i)
				if c.stmtBurst {
					commitGTID(t, p.sdb, "SET SESSION binlog_format = 'STATEMENT'", burst)
					continue
				}
				execAll(t, p.sdb, burst)
			}
			gtid := commitGTID(t, p.sdb, c.change...)
			after := commitGTID(t, p.sdb, "INSERT INTO bad.log (note) VALUES ('after "+c.name+"')")

			code, out := runParaply(t, nil, args...)
			if c.binlogApplies && path != "sql" {
				if code != 0 {
					t.Fatalf("exit status %d, want 0 (the native replica applies this)\n%s", code, out)
				}
				if !p.applied(t, after) {
					t.Errorf("the checkpoint does not have %s", after)
				}
				execAll(t, p.tdb, c.fix...)
				p.equal(t, "bad")
				return
			}
			if code != 1 {
				t.Fatalf("exit status %d, want 1\n%s", code, out)
			}
			msg := lastLine(out)
			want := append([]string{"GTID " + gtid}, c.want...)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("the error does not say %q:\n%s", w, msg)
				}
			}
			t.Logf("%s: %s", c.name, msg)
			// Nothing from the conflict on is applied. (What comes before
			// it may be applied or not: a conflict found while preparing
			// stops the pipeline before the workers commit what they hold.)
			if p.applied(t, gtid) || p.applied(t, after) {
				t.Errorf("the checkpoint claims the conflicting transaction %s or the one after it %s", gtid, after)
			}
			var n int
			if err := p.tdb.QueryRow("SELECT COUNT(*) FROM bad.log WHERE note = ?", "after "+c.name).Scan(&n); err != nil || n != 0 {
				t.Errorf("the transaction after the conflict reached the target (%d rows, %v)", n, err)
			}

			execAll(t, p.tdb, c.fix...)
			code, out = runParaply(t, nil, args...)
			if code != 0 {
				t.Fatalf("after fixing the target: exit status %d\n%s", code, out)
			}
			p.equal(t, "bad")
		})
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
