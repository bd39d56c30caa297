// Package sandboxtest starts sandboxed MariaDB servers for tests. It is
// apart from package sandbox so that the paraply binary, which links sandbox
// for paraply demo, does not link the testing package.
package sandboxtest

import (
	"database/sql"
	"testing"

	"go.uber.org/goleak"

	"github.com/paraply/paraply/internal/sandbox"
)

// ForTest starts a server for the test t and fails the test if it cannot.
// When the test ends, the server is removed. If the test failed, the server is
// only stopped: its directory is kept, and its path and the end of error.log
// are logged.
func ForTest(t testing.TB, opts sandbox.Options) *sandbox.Server {
	t.Helper()
	s, err := sandbox.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Release(t.Failed(), t.Logf); err != nil {
			t.Error(err)
		}
	})
	return s
}

// DB opens a pool on s (no default database) for the test t, closed when
// the test ends, and fails the test if it cannot.
func DB(t testing.TB, s *sandbox.Server) *sql.DB {
	t.Helper()
	db, err := s.DB("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// IgnoreForkThread is the goleak option for a package whose tests start
// servers: sandbox forks every mariadbd from one goroutine locked to its
// thread, which lives as long as the process (see sandbox's forkThread).
func IgnoreForkThread() goleak.Option {
	return goleak.IgnoreAnyFunction("github.com/paraply/paraply/internal/sandbox.forkLoop")
}
