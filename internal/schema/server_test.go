package schema

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
)

// testServer is the package's shared sandboxed MariaDB. Its default
// character set is latin1 so that the tests see charset inheritance.
type testServer struct {
	srv *sandbox.Server
	db  *sql.DB
}

var (
	serverOnce sync.Once
	server     *testServer
	serverErr  error
)

// sharedServer returns the package's test server, starting it on first
// use; TestMain stops it.
func sharedServer(t *testing.T) *testServer {
	t.Helper()
	serverOnce.Do(func() {
		var srv *sandbox.Server
		srv, serverErr = sandbox.Start(context.Background(), sandbox.Options{
			Name:      "schema",
			ExtraArgs: []string{"--character-set-server=latin1", "--collation-server=latin1_swedish_ci"},
		})
		if serverErr != nil {
			return
		}
		server = &testServer{srv: srv}
		server.db, serverErr = srv.DB("")
	})
	if serverErr != nil {
		t.Fatalf("start MariaDB: %v", serverErr)
	}
	return server
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server != nil {
		server.db.Close()
		if err := server.srv.Remove(); err != nil {
			os.Stderr.WriteString("stop MariaDB: " + err.Error() + "\n")
		}
	}
	os.Exit(code)
}

// DB returns a connection pool to the server, as root, with no default database.
func (s *testServer) DB() *sql.DB { return s.db }

// Exec runs a SQL script through the mariadb client, which understands
// DELIMITER.
func (s *testServer) Exec(t *testing.T, script string) {
	t.Helper()
	cmd := s.srv.Client(context.Background())
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mariadb: %v\n%s", err, out)
	}
}

// Dump runs mariadb-dump with args (after the connection options) and
// returns its output.
func (s *testServer) Dump(t *testing.T, args ...string) []byte {
	t.Helper()
	base := []string{"--no-defaults", "-h", s.srv.Host, "-P", strconv.Itoa(s.srv.Port), "-u", s.srv.User}
	cmd := exec.Command("mariadb-dump", append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mariadb-dump: %v\n%s", err, stderr.Bytes())
	}
	return out
}
