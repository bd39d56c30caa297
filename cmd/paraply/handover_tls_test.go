package main

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestChangeMasterTLS checks the TLS options of the CHANGE MASTER that
// handover prints for each --source-tls setting: none in clear text; the
// CA paraply verifies with and MASTER_SSL_VERIFY_SERVER_CERT=1 with "on";
// encryption alone, said so, with "skip-verify".
func TestChangeMasterTLS(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flags     tlsFlags
		ssl, note string
	}{
		{"off", tlsFlags{mode: "off"}, "", ""},
		{"on, a CA", tlsFlags{mode: "on", ca: "/etc/paraply/ca.pem"},
			", MASTER_SSL=1, MASTER_SSL_CA='/etc/paraply/ca.pem', MASTER_SSL_VERIFY_SERVER_CERT=1", "the target's server reads"},
		{"on, the system's roots", tlsFlags{mode: "on"}, ", MASTER_SSL=1, MASTER_SSL_VERIFY_SERVER_CERT=1", ""},
		{"on, a quote in the path", tlsFlags{mode: "on", ca: `/etc/o'brien\ca.pem`},
			`, MASTER_SSL=1, MASTER_SSL_CA='/etc/o\'brien\\ca.pem', MASTER_SSL_VERIFY_SERVER_CERT=1`, "the target's server reads"},
		{"on, a client certificate", tlsFlags{mode: "on", ca: "/ca.pem", cert: "/c.pem", key: "/k.pem"},
			", MASTER_SSL=1, MASTER_SSL_CA='/ca.pem', MASTER_SSL_VERIFY_SERVER_CERT=1", "MASTER_SSL_CERT and MASTER_SSL_KEY"},
		{"skip-verify", tlsFlags{mode: "skip-verify"}, ", MASTER_SSL=1, MASTER_SSL_VERIFY_SERVER_CERT=0", "does not check whom it talks to"},
	} {
		ssl, note, err := changeMasterTLS(tc.flags)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if ssl != tc.ssl {
			t.Errorf("%s: %q, want %q", tc.name, ssl, tc.ssl)
		}
		if (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("%s: the note is %q, want one saying %q", tc.name, note, tc.note)
		}
	}
	if _, _, err := changeMasterTLS(tlsFlags{mode: "maybe"}); err == nil {
		t.Error("a TLS mode that is none: no error")
	}
}

// changeMasterLine is the CHANGE MASTER statement handover prints.
var changeMasterLine = regexp.MustCompile(`(?m)^\s+(CHANGE MASTER .*);$`)

// nativeOverTLS hands the target of p over to MariaDB's replica as
// handover's output says, with args (handover and its flags: source and
// target over TLS, verified against ca) and env: the statement it prints
// carries the CA and the verification, and pasted as printed (repl's
// password filled in) the replica connects over TLS and applies a row
// written after; the same statement with another CA (otherCA) the
// replica refuses: it checks whom it talks to. The target's replica is
// reset after. It returns handover's output.
func nativeOverTLS(t *testing.T, sdb, tdb *sql.DB, args, env []string, ca, otherCA string) string {
	t.Helper()
	replPW := secret("repl-")
	runDocSQL(t, sdb, runbookBlock(t, securityFile, "source-repl"), replPW)
	code, out := runParaply(t, env, args...)
	m := changeMasterLine.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("handover: exit %d, no CHANGE MASTER\n%s", code, out)
	}
	for _, want := range []string{"MASTER_SSL=1", "MASTER_SSL_CA='" + ca + "'", "MASTER_SSL_VERIFY_SERVER_CERT=1"} {
		if !strings.Contains(m[1], want) {
			t.Errorf("handover's CHANGE MASTER lacks %s: %s", want, m[1])
		}
	}
	stmt := strings.Replace(m[1], "MASTER_PASSWORD='...'", "MASTER_PASSWORD='"+replPW+"'", 1)
	ctx := context.Background()
	replica := func(stmt string) map[string]string {
		t.Helper()
		execAll(t, tdb, stmt, "START SLAVE")
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := mtrRowMap(ctx, tdb, "SHOW SLAVE STATUS")
			if err != nil {
				t.Fatal(err)
			}
			if st["Slave_IO_Running"] == "Yes" || st["Last_IO_Error"] != "" || time.Now().After(deadline) {
				return st
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	st := replica(stmt)
	if st["Slave_IO_Running"] != "Yes" {
		t.Errorf("MariaDB's replica with handover's statement does not connect: %s", st["Last_IO_Error"])
	} else {
		execAll(t, sdb, "CREATE TABLE app.native_tls (id INT PRIMARY KEY)", "INSERT INTO app.native_tls VALUES (1)")
		deadline := time.Now().Add(30 * time.Second)
		var n int
		for tdb.QueryRow("SELECT COUNT(*) FROM app.native_tls").Scan(&n) != nil || n != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("MariaDB's replica did not apply a row written after the hand-over")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	execAll(t, tdb, "STOP SLAVE", "RESET SLAVE ALL")

	// Another CA: the replica must refuse the source's certificate.
	st = replica(strings.Replace(stmt, "MASTER_SSL_CA='"+ca+"'", "MASTER_SSL_CA='"+otherCA+"'", 1))
	// (MariaDB 10.11 says "SSL connection error: error:00000000:lib(0)::reason(0)".)
	if st["Slave_IO_Running"] == "Yes" || !strings.Contains(st["Last_IO_Error"], "SSL connection error") {
		t.Errorf("MariaDB's replica with another CA: I/O thread %s, error %q; want the TLS connection refused",
			st["Slave_IO_Running"], st["Last_IO_Error"])
	} else {
		t.Logf("the replica with another CA: %s", st["Last_IO_Error"])
	}
	execAll(t, tdb, "STOP SLAVE", "RESET SLAVE ALL")
	return out
}
