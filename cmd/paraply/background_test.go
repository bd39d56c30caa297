package main

import (
	"bytes"
	"os/exec"
	"syscall"
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
	return startBackground(t, paraply(args...))
}

// startBackground starts cmd, a command that runs paraply (as its own
// process: a shell must exec it), in the background; the test's cleanup
// kills it if it still runs.
func startBackground(t *testing.T, cmd *exec.Cmd) *bgParaply {
	t.Helper()
	p := &bgParaply{Cmd: cmd, Logs: &bytes.Buffer{}, Exited: make(chan error, 1)}
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

// Stop sends SIGTERM, as systemctl stop does, and returns the process's
// exit, failing the test if it has not ended within 30 s.
func (p *bgParaply) Stop(t *testing.T) error {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.Exited:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("paraply did not stop on SIGTERM\n%s", p.Logs)
		return nil
	}
}
