package faults

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a paraply process that tests kill and start again. The
// command comes from a function (the test binary acting as paraply, or
// bin/paraply), called anew for each start. Its stderr, across starts, is
// kept in a bounded buffer. Methods are safe for concurrent use.
type Process struct {
	command func() *exec.Cmd

	mu     sync.Mutex // guards everything below
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd has exited
	err    error         // cmd's exit error, once done
	starts int
	logs   tailBuffer
}

// NewProcess runs the commands that command returns.
func NewProcess(command func() *exec.Cmd) *Process {
	return &Process{command: command, logs: tailBuffer{max: 1 << 20}}
}

// Start starts the process. A running one is an error.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !isDone(p.done) {
		return errors.New("faults: paraply is already running")
	}
	cmd := p.command()
	p.starts++
	fmt.Fprintf(&p.logs, "----- start %d -----\n", p.starts)
	cmd.Stdout = &p.logs
	cmd.Stderr = &p.logs
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("faults: starting paraply: %w", err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err = cmd, done, nil
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		if p.cmd == cmd {
			p.err = err
		}
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// PID is the running process's id, or 0.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || isDone(p.done) {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited reports whether the process has exited on its own (not through
// Kill or Stop), with its exit error.
func (p *Process) Exited() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || !isDone(p.done) {
		return false, nil
	}
	return true, p.err
}

// Kill sends SIGKILL and waits for the process to exit.
func (p *Process) Kill() error { return p.signal(syscall.SIGKILL, 0) }

// Stop sends SIGTERM and waits up to timeout for the process to exit; then
// it sends SIGKILL and reports that.
func (p *Process) Stop(timeout time.Duration) error { return p.signal(syscall.SIGTERM, timeout) }

func (p *Process) signal(sig syscall.Signal, timeout time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if isDone(done) {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("faults: signal %v to paraply (pid %d): %w", sig, cmd.Process.Pid, err)
	}
	if timeout <= 0 {
		<-done
		return nil
	}
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("faults: paraply (pid %d) did not stop within %v of %v; killed", cmd.Process.Pid, timeout, sig)
	}
}

// Wait waits up to timeout for the process to exit on its own and returns
// its exit error; it is an error if it is still running then.
func (p *Process) Wait(timeout time.Duration) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return errors.New("faults: paraply was never started")
	}
	select {
	case <-done:
	case <-time.After(timeout):
		return fmt.Errorf("faults: paraply still running after %v", timeout)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Logs returns what the process wrote (the last MiB), all starts together.
func (p *Process) Logs() string { return p.logs.String() }

// Since returns what was written after mark (a value of Mark).
func (p *Process) Since(mark int64) string { return p.logs.since(mark) }

// Mark is the number of bytes written so far.
func (p *Process) Mark() int64 { return p.logs.written() }

// WaitLog waits up to timeout until the output written after mark contains
// s.
func (p *Process) WaitLog(mark int64, s string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if strings.Contains(p.Since(mark), s) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// tailBuffer is an io.Writer keeping the last max bytes written.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   bytes.Buffer
	total int64 // bytes ever written
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	b.total += int64(len(p))
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *tailBuffer) written() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

func (b *tailBuffer) since(mark int64) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.total - mark // bytes written since mark
	if n <= 0 {
		return ""
	}
	s := b.buf.Bytes()
	if int64(len(s)) > n {
		s = s[int64(len(s))-n:]
	}
	return string(s)
}
