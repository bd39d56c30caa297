package main

import (
	"slices"
	"strings"
	"testing"
)

// grantsWorkload is what the source runs inside the replicated database
// app before the statements the narrow grants do not cover.
var grantsWorkload = []string{
	"CREATE DATABASE app",
	"CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20))",
	"INSERT INTO app.t VALUES (1, 'a'), (2, 'b')",
}

// startGrantsPair starts a source and a target over TLS with the accounts
// of docs/security.md: the source's, and the target's under the grants
// of the block marked target (run as documented, the password excepted).
// It returns the pair, the environment with both passwords, and the
// flags that connect paraply with them.
func startGrantsPair(t *testing.T, name, target string) (*tlsPair, []string, []string) {
	t.Helper()
	p := newTLSPair(t, name)
	srcPW, tgtPW := secret("src-"), secret("tgt-")
	runDocSQL(t, p.sdb, runbookBlock(t, securityFile, "source-grants"), srcPW)
	runDocSQL(t, p.tdb, runbookBlock(t, securityFile, target), tgtPW)
	env := []string{"PARAPLY_SOURCE_PASSWORD=" + srcPW, "PARAPLY_TARGET_PASSWORD=" + tgtPW}
	args := append([]string{"replicate", "--relay-dir", t.TempDir(), "--start-gtid", p.start, "--until-caught-up",
		"--log-level", "info", "--http", ""}, p.paraplyArgs()...)
	return p, env, args
}

// TestNarrowGrants: under the narrow target grants docs/security.md
// documents, a CREATE DATABASE on the source and, in a later run, a CREATE
// USER stop replicate with an error that names the transaction's GTID, the
// statement, the missing privilege and the GRANT that gives it; each
// remedy the page gives then works: include = app.% leaves the new
// database out, and the GRANT the error names lets the account statement
// replicate.
func TestNarrowGrants(t *testing.T) {
	p, env, args := startGrantsPair(t, "narrow", "target-grants-narrow")
	execAll(t, p.sdb, grantsWorkload...)
	legacy := commitGTID(t, p.sdb, "CREATE DATABASE legacy")
	after := commitGTID(t, p.sdb, "INSERT INTO app.t VALUES (3, 'c')")

	code, out := runParaply(t, env, args...)
	if code != 1 {
		t.Fatalf("CREATE DATABASE under narrow grants: exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(out, "narrow grants") {
		t.Errorf("the start does not say that the grants are narrow:\n%s", out)
	}
	msg := lastLine(out)
	t.Logf("CREATE DATABASE: %s", msg)
	for what, s := range map[string]string{
		"the GTID":              "GTID " + legacy + ":",
		"the statement":         "CREATE DATABASE legacy",
		"the missing privilege": "CREATE for a CREATE DATABASE",
		"where":                 "lacks a privilege on `legacy`.*",
		"the remedy":            "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX ON `legacy`.* TO 'paraply'@",
		"the restart":           "then restart paraply",
		"the broad grants":      "docs/security.md",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("the error does not name %s (%q): %s", what, s, msg)
		}
	}
	if p.applied(t, legacy) || p.applied(t, after) {
		t.Errorf("the checkpoint claims %s or %s, which did not apply", legacy, after)
	}
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM app.t").Scan(&n); err != nil || n != 2 {
		t.Errorf("the target has %d rows of app.t (%v), want the 2 before the CREATE DATABASE", n, err)
	}

	// The page's remedy for a database not to be replicated: include the
	// granted ones only. The CREATE DATABASE is recorded, not run.
	include := append(slices.Clone(args), "--include", "app.%")
	if code, out := runParaply(t, env, include...); code != 0 {
		t.Fatalf("with --include app.%%: exit %d\n%s", code, out)
	}
	if !p.applied(t, legacy) || !p.applied(t, after) {
		t.Errorf("with --include app.%%, the checkpoint lacks %s or %s", legacy, after)
	}
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'legacy'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the database left out is on the target (%d, %v)", n, err)
	}

	// An account statement names no table: the include does not leave it
	// out, and it stops replication.
	pw := secret("appPw-")
	user := commitGTID(t, p.sdb, "CREATE USER 'app_user'@'%' IDENTIFIED BY '"+pw+"'")
	code, out = runParaply(t, env, include...)
	if code != 1 {
		t.Fatalf("CREATE USER under narrow grants: exit %d, want 1\n%s", code, out)
	}
	msg = lastLine(out)
	t.Logf("CREATE USER: %s", msg)
	for what, s := range map[string]string{
		"the GTID":              "GTID " + user + ":",
		"the statement":         "CREATE USER 'app_user'@'%'",
		"the missing privilege": "lacks CREATE USER on *.*",
		"the remedy":            "GRANT CREATE USER ON *.* TO ",
		"the restart":           "then restart paraply",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("the error does not name %s (%q): %s", what, s, msg)
		}
	}
	if strings.Contains(out, pw) {
		t.Errorf("the replicated CREATE USER's password is in paraply's output")
	}
	if p.applied(t, user) {
		t.Errorf("the checkpoint claims %s, which did not apply", user)
	}

	// The GRANT the error names, and the restart.
	execAll(t, p.tdb, "GRANT CREATE USER ON *.* TO 'paraply'@'%'")
	if code, out := runParaply(t, env, include...); code != 0 {
		t.Fatalf("after GRANT CREATE USER: exit %d\n%s", code, out)
	}
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User = 'app_user' AND Host = '%'").Scan(&n); err != nil || n != 1 {
		t.Errorf("app_user is not on the target after the GRANT (%d, %v)", n, err)
	}
	p.equal(t, "app")
}

// TestBroadGrants: under the grants of a general-purpose replica that
// docs/security.md documents, what the narrow grants stop on replicates:
// a new database and its tables, an account and a GRANT to it.
func TestBroadGrants(t *testing.T) {
	p, env, args := startGrantsPair(t, "broad", "target-grants-broad")
	execAll(t, p.sdb, grantsWorkload...)
	execAll(t, p.sdb, "CREATE DATABASE legacy",
		"CREATE TABLE legacy.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO legacy.t VALUES (1, 'old')",
		"CREATE USER 'app_user'@'%' IDENTIFIED BY '"+secret("appPw-")+"'",
		"GRANT SELECT, INSERT ON legacy.* TO 'app_user'@'%'",
		"INSERT INTO app.t VALUES (3, 'c')")
	code, out := runParaply(t, env, args...)
	if code != 0 {
		t.Fatalf("under the broad grants: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "narrow grants") {
		t.Errorf("the start calls the broad grants narrow:\n%s", out)
	}
	p.equal(t, "app", "legacy")
	rows, err := p.tdb.Query("SHOW GRANTS FOR 'app_user'@'%'")
	if err != nil {
		t.Fatalf("app_user on the target: %v", err)
	}
	defer rows.Close()
	var grants []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		grants = append(grants, g)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(grants, func(g string) bool {
		return strings.Contains(g, "GRANT SELECT, INSERT ON `legacy`.* TO `app_user`@`%`")
	}) {
		t.Errorf("app_user's GRANT did not replicate: %q", grants)
	}
}
