// Package sandboxtest starts sandboxed MariaDB servers for tests. It is
// apart from package sandbox so that the paraply binary, which links sandbox
// for paraply demo, does not link the testing package.
package sandboxtest

import (
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

// IgnoreForkThread is the goleak option for a package whose tests start
// servers: sandbox forks every mariadbd from one goroutine locked to its
// thread, which lives as long as the process (see sandbox's forkThread).
func IgnoreForkThread() goleak.Option {
	return goleak.IgnoreAnyFunction("github.com/paraply/paraply/internal/sandbox.forkLoop")
}
