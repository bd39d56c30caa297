package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
)

// TestStartPositionsChecked: a --start-gtid that is not a GTID position,
// or that is ahead of the source, is refused before anything is written:
// paraply exits non-zero, names the source's position for the one ahead,
// and the target keeps no checkpoint, so that the right position started
// next works (it did not: the first wrong start's position stayed in
// paraply.progress and every later start resumed from it).
func TestStartPositionsChecked(t *testing.T) {
	p := newReplPair(t, "startpos")
	execAll(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1), (2)")
	at := p.sourcePos(t)
	base := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", filepath.Join(t.TempDir(), "relay"),
		"--until-caught-up", "--log-level", "warn", "--http", ""}
	for _, c := range []struct{ start, says string }{
		{"garbage", "not a GTID position"},
		{at + "x", "not a GTID position"},
		{"0-1-99999999", "ahead of the source"},
		{"0-7-3", "no transaction of server 7"},
	} {
		code, out := runParaply(t, nil, append(slices.Clone(base), "--start-gtid", c.start)...)
		msg := lastLine(out)
		if code == 0 {
			t.Fatalf("--start-gtid %s: exit 0\n%s", c.start, out)
		}
		if !strings.Contains(msg, c.says) {
			t.Errorf("--start-gtid %s: the error does not say %q: %s", c.start, c.says, msg)
		}
		if c.says != "not a GTID position" && !strings.Contains(msg, "the source is at "+at) {
			t.Errorf("--start-gtid %s: the error does not name the source's position %s: %s", c.start, at, msg)
		}
		if n := checkpointRows(t, p); n != 0 {
			t.Errorf("--start-gtid %s left %d checkpoint rows on the target", c.start, n)
		}
	}
	execAll(t, p.tdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1), (2)")
	execAll(t, p.sdb, "INSERT INTO app.t VALUES (3)")
	if code, out := runParaply(t, nil, append(slices.Clone(base), "--start-gtid", at)...); code != 0 {
		t.Fatalf("the right --start-gtid after the wrong ones: exit %d\n%s", code, out)
	}
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM app.t").Scan(&n); err != nil || n != 3 {
		t.Errorf("the target has %d rows (%v), want 3", n, err)
	}
}

// checkpointRows counts the rows of paraply.progress on p's target (0
// when it has no such table).
func checkpointRows(t *testing.T, p *replPair) int {
	t.Helper()
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'paraply' AND TABLE_NAME = 'progress'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return 0
	}
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM paraply.progress").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStartAtDomainBeginning: --start-gtid D-S-0 starts at the beginning
// of domain D, as MariaDB's replica does with that gtid_slave_pos (README
// step 10 starts a second source's stream so). The source's binlog starts
// at 2-12-1; asked for 2-12-0 in strict mode it refused ("missing the GTID
// 2-12-0").
func TestStartAtDomainBeginning(t *testing.T) {
	// gtid_strict_mode off on the source, as MariaDB's default.
	p := startReplPair(t, sandbox.Options{Name: "domainsrc", Binlog: true, ServerID: 12, GTIDDomain: 2, ExtraArgs: []string{"--gtid-strict-mode=OFF"}},
		sandbox.Options{Name: "domaintgt", ServerID: 2})
	execAll(t, p.sdb, "CREATE TABLE warmup.t (id INT PRIMARY KEY)", "INSERT INTO warmup.t VALUES (1), (2), (3)")
	code, out := runParaply(t, nil, "replicate", "--source", p.src.URL(), "--target", p.tgt.URL(),
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", "2-12-0", "--until-caught-up", "--log-level", "warn", "--http", "")
	if code != 0 {
		t.Fatalf("--start-gtid 2-12-0: exit %d\n%s", code, out)
	}
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM warmup.t").Scan(&n); err != nil || n != 3 {
		t.Errorf("the target has %d rows of warmup.t (%v), want 3: the domain from its first transaction", n, err)
	}
}

// TestReseedSetsRelayAside: a target seeded again (its data reloaded from
// the source, the paraply database dropped, as the docs say to after a
// purged position) while the old relay directory stays: the new
// checkpoint does not take the old relay log for its own. The old log is
// set aside, named in the log, and nothing of it is applied; the counter
// that would reveal a transaction applied twice ends equal to the source's.
func TestReseedSetsRelayAside(t *testing.T) {
	// MIXED: the increments are statements, which applied twice count twice.
	p := startReplPair(t, sandbox.Options{Name: "reseedsrc", Binlog: true, ExtraArgs: []string{"--binlog-format=MIXED"}}, sandbox.Options{Name: "reseedtgt", ServerID: 2})
	execAll(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.c (id INT PRIMARY KEY, n INT NOT NULL)", "INSERT INTO app.c VALUES (1, 0)")
	relay := filepath.Join(t.TempDir(), "relay")
	args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", relay,
		"--until-caught-up", "--log-level", "warn", "--http", ""}
	var until string
	for i := range 20 {
		execAll(t, p.sdb, "UPDATE app.c SET n = n + 1 WHERE id = 1")
		if i == 9 {
			until = p.sourcePos(t)
		}
	}
	// The first run stops half way: its relay log holds the rest, received
	// and not applied.
	first := slices.Clone(args)
	first[slices.Index(first, "--until-caught-up")] = "--until-gtid=" + until
	if code, out := runParaply(t, nil, append(first, "--start-gtid", p.start)...); code != 0 {
		t.Fatalf("first start: exit %d\n%s", code, out)
	}
	// Seeded again: the source's data at its position now.
	for range 5 {
		execAll(t, p.sdb, "UPDATE app.c SET n = n + 1 WHERE id = 1")
	}
	seed := p.sourcePos(t)
	execAll(t, p.tdb, "DROP DATABASE paraply", "UPDATE app.c SET n = 25 WHERE id = 1")
	for range 3 {
		execAll(t, p.sdb, "UPDATE app.c SET n = n + 1 WHERE id = 1")
	}
	second := slices.Clone(args)
	second[slices.Index(second, "warn")] = "info"
	code, out := runParaply(t, nil, append(second, "--start-gtid", seed)...)
	if code != 0 {
		t.Fatalf("start after the seed: exit %d\n%s", code, out)
	}
	// It starts receiving at the seed's position, not where the old relay
	// log left off (that log went on from index 1, before the seed).
	if !strings.Contains(out, "from="+seed+" ") {
		t.Errorf("the run does not start from the seed's position %s:\n%s", seed, out)
	}
	var n int
	if err := p.tdb.QueryRow("SELECT n FROM app.c WHERE id = 1").Scan(&n); err != nil || n != 28 {
		t.Errorf("the counter is %d on the target (%v), want the source's 28", n, err)
	}
	if !strings.Contains(out, "set aside") {
		t.Errorf("the log does not say the old relay log was set aside:\n%s", out)
	}
	ents, err := os.ReadDir(relay)
	if err != nil {
		t.Fatal(err)
	}
	aside := slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.IsDir() && strings.HasPrefix(e.Name(), "set-aside-") })
	if !aside {
		t.Errorf("no set-aside directory in %s: %v", relay, ents)
	}
}

// TestErrantTransactionsNamed: the target has transactions the source
// lacks (here the source's binlog was reset under a running stream, as a
// failover to a server that missed the last transactions looks to a
// replica): the error says so, with the GTIDs the target has and the
// source lacks, and not that the source purged its binlogs.
func TestErrantTransactionsNamed(t *testing.T) {
	p := newReplPair(t, "errant")
	execAll(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)")
	for i := range 6 {
		execAll(t, p.sdb, fmt.Sprintf("INSERT INTO app.t VALUES (%d)", i))
	}
	args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", filepath.Join(t.TempDir(), "relay"),
		"--until-caught-up", "--log-level", "warn", "--http", ""}
	if code, out := runParaply(t, nil, append(slices.Clone(args), "--start-gtid", p.start)...); code != 0 {
		t.Fatalf("first start: exit %d\n%s", code, out)
	}
	had := lastGTID(p.sourcePos(t))
	execAll(t, p.sdb, "RESET MASTER", "INSERT INTO app.t VALUES (100)", "INSERT INTO app.t VALUES (101)")
	code, out := runParaply(t, nil, args...)
	if code == 0 {
		t.Fatalf("exit 0 with a source that lacks the target's transactions\n%s", out)
	}
	msg := lastLine(out)
	for _, s := range []string{"errant", "0-1-3 to " + had, "the source's newest in domain 0 is 0-1-2"} {
		if !strings.Contains(msg, s) {
			t.Errorf("the error does not say %q: %s", s, msg)
		}
	}
	if strings.Contains(msg, "purged") {
		t.Errorf("the error says purged: %s", msg)
	}
}
