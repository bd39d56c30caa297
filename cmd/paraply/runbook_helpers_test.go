package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/testcert"
)

// The documentation the runbook tests follow, from the repository root.
const (
	readmeFile   = "../../README.md"
	securityFile = "../../docs/security.md"
)

// docPassword is the placeholder the documented SQL writes for every
// password; docHost the account host it writes.
const (
	docPassword = "CHANGE-ME"
	docHost     = "'%'"
)

// runbookMarker finds a marked block: the marker line, then a fenced
// block whose text is the group.
var runbookMarker = regexp.MustCompile("(?m)^<!-- runbook: ([a-z0-9-]+) -->\n```[a-z]*\n((?s:.*?))^```$")

// runbookBlock returns the text of the fenced block after the line
// <!-- runbook: name --> in file, failing the test if there is not
// exactly one.
func runbookBlock(t *testing.T, file, name string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, m := range runbookMarker.FindAllStringSubmatch(string(b), -1) {
		if m[1] == name {
			found = append(found, m[2])
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d blocks marked <!-- runbook: %s -->, want 1", file, len(found), name)
	}
	return found[0]
}

// runDocSQL runs a documented SQL block on db as an administrator would
// paste it into a client, with the password placeholder replaced by pw,
// in a session of its own that is discarded after (the block may change
// session settings such as sql_log_bin).
func runDocSQL(t *testing.T, db *sql.DB, block, pw string) {
	t.Helper()
	if !strings.Contains(block, docPassword) || !strings.Contains(block, docHost) {
		t.Fatalf("the block has no %s password or %s host to substitute:\n%s", docPassword, docHost, block)
	}
	runSQLBlock(t, db, strings.ReplaceAll(block, docPassword, pw), block)
}

// runSQLBlock runs query, a documented block of SQL statements (doc, as
// an error shows it: without the password put in), on db as an
// administrator would paste it into a client, in a session of its own
// that is discarded after.
func runSQLBlock(t *testing.T, db *sql.DB, query, doc string) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn })
	if _, err := conn.ExecContext(ctx, query); err != nil {
		t.Fatalf("the documented SQL fails: %v\n%s", err, doc)
	}
}

// tlsPair is a source and a target that offer TLS with test certificates.
type tlsPair struct {
	*replPair
	certs *testcert.Files
}

// newTLSPair starts a source with a binlog and a target, both with TLS.
func newTLSPair(t *testing.T, name string) *tlsPair {
	t.Helper()
	certs, err := testcert.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := &sandbox.TLSFiles{CA: certs.CA, Cert: certs.ServerCert, Key: certs.ServerKey}
	p := startReplPair(t, sandbox.Options{Name: name + "src", Binlog: true, TLS: files},
		sandbox.Options{Name: name + "tgt", ServerID: 2, TLS: files})
	return &tlsPair{replPair: p, certs: certs}
}

// paraplyArgs are the connection flags of the account paraply on both
// servers, over TLS as docs/security.md sets it up (the CA verified, and
// the host name).
func (p *tlsPair) paraplyArgs() []string {
	return []string{
		"--source", "mysql://paraply@127.0.0.1:" + strconv.Itoa(p.src.Port), "--source-tls", "on", "--source-tls-ca", p.certs.CA,
		"--target", "mysql://paraply@127.0.0.1:" + strconv.Itoa(p.tgt.Port), "--target-tls", "on", "--target-tls-ca", p.certs.CA,
	}
}

// writeFile writes text to path, making its directory, failing the test
// on an error.
func writeFile(t *testing.T, path, text string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		t.Fatal(err)
	}
}

// relayPrivate fails the test if a file or directory of the relay log in
// dir may be read by others than its owner.
func relayPrivate(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n++
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("the relay log's %s is %v: others than paraply may read it", path, info.Mode().Perm())
		}
		return nil
	})
	if err != nil || n < 2 {
		t.Errorf("the relay log %s: %d files (%v), want the directory and its files", dir, n, err)
	}
}
