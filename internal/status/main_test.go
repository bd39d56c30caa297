package status

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestMain fails the run if a goroutine a test started (the HTTP server's,
// the sampler's) is still running when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, sandboxtest.IgnoreForkThread())
}
