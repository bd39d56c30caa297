package main

import (
	"os"
	"os/exec"
	"testing"
)

// TestMain lets the test binary act as paraply itself when
// PARAPLY_RUN_MAIN is set, so that tests can start, kill and restart real
// paraply processes without building the binary separately; and as
// TestMariaDBSuite's checkpoint command when mariadb-test runs it with
// PARAPLY_MTR_CHECK set (see mtrCheckpoint).
func TestMain(m *testing.M) {
	if os.Getenv("PARAPLY_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	if url := os.Getenv(mtrCheckEnv); url != "" {
		os.Exit(mtrCheckpoint(url, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// paraply returns a command running paraply with args.
func paraply(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PARAPLY_RUN_MAIN=1")
	return cmd
}
