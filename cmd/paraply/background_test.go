package main

import (
	"bytes"
	"os/exec"
	"testing"
	"time"
)

// bgParaply is a paraply process a test runs in the background, its
// output (stdout and stderr) collected in Logs.
type bgParaply struct {
	Cmd  *exec.Cmd
	Logs *bytes.Buffer
	// Exited receives the process's exit (its error) once, and is closed
	// after it, so that every later receive returns at once: waitApplied
	// and a test's own checks may both read it.
	Exited chan error
}

// startParaply starts paraply with args in the background; the test's
// cleanup kills it if it still runs.
func startParaply(t *testing.T, args ...string) *bgParaply {
	t.Helper()
	p := &bgParaply{Cmd: paraply(args...), Logs: &bytes.Buffer{}, Exited: make(chan error, 1)}
	// One writer for both: exec then writes from one goroutine at a time.
	p.Cmd.Stdout, p.Cmd.Stderr = p.Logs, p.Logs
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.Exited <- p.Cmd.Wait()
		close(p.Exited)
	}()
	t.Cleanup(p.Kill)
	return p
}

// Kill sends SIGKILL, as a crash would, and waits (up to 10 s) for the
// process to end.
func (p *bgParaply) Kill() {
	_ = p.Cmd.Process.Kill()
	select {
	case <-p.Exited:
	case <-time.After(10 * time.Second):
	}
}
