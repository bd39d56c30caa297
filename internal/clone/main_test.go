package clone

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestMain fails the run if a goroutine a test started is still running
// when the tests end (sandbox's fork thread aside).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, sandboxtest.IgnoreForkThread())
}
