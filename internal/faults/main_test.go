package faults

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a goroutine a test started is still running
// when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
