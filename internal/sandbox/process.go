package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// process is one mariadbd child. Signals go through os.Process, which uses a
// pidfd on Linux, so they reach exactly this process even if the PID is later
// reused.
type process struct {
	cmd  *exec.Cmd
	pid  int
	done chan struct{} // closed once cmd.Wait has returned
	err  error         // cmd.Wait's result; read only after done is closed
}

// startProcess starts mariadbd with args, records its PID in l.ownerPID and
// reaps it in a goroutine that ends when mariadbd exits.
func startProcess(l layout, args []string) (*process, error) {
	logFile, err := os.OpenFile(l.errorLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(binary("mariadbd"), args...)
	cmd.Dir = l.dir
	// Messages printed before mariadbd opens --log-error (bad options,
	// ulimit warnings) land in the same file.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group: a terminal's Ctrl-C goes to the owner only, and
		// the owner stops its servers in order.
		Setpgid: true,
		// The kernel kills mariadbd when its parent dies; see forkThread.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := startOnForkThread(cmd); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	pids := fmt.Sprintf("%d %d\n", p.pid, os.Getpid())
	if err := os.WriteFile(l.ownerPID, []byte(pids), 0o644); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		_ = os.Remove(l.ownerPID)
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// terminate sends SIGTERM and waits up to timeout for a clean exit, then
// sends SIGKILL. It returns an error unless the process exited with status
// 0.
func (p *process) terminate(timeout time.Duration) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		_ = p.kill()
		return fmt.Errorf("no exit within %v of SIGTERM; sent SIGKILL", timeout)
	}
	if p.err != nil {
		return fmt.Errorf("mariadbd exited uncleanly: %w", p.err)
	}
	return nil
}

// kill sends SIGKILL and waits for the exit.
func (p *process) kill() error {
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-p.done
	return nil
}

// forkThread is a goroutine locked to one OS thread for the life of the
// process, and every mariadbd is forked on that thread.
//
// The reason is Pdeathsig: the kernel sends it when the thread that forked the
// child exits, not when the process exits (golang/go#27505). The Go runtime
// ends a thread when a goroutine exits while locked to it with
// runtime.LockOSThread. If cmd.Start ran on an ordinary runtime thread, a later
// goroutine that did that on the same thread would kill our servers. This
// thread never runs anything else, and it never exits before the process does.
// It is the only goroutine in the package that is meant to outlive everything.
var forkThread struct {
	once sync.Once
	reqs chan forkRequest
}

type forkRequest struct {
	cmd  *exec.Cmd
	errc chan<- error
}

func startOnForkThread(cmd *exec.Cmd) error {
	forkThread.once.Do(func() {
		forkThread.reqs = make(chan forkRequest)
		go forkLoop(forkThread.reqs)
	})
	errc := make(chan error, 1)
	forkThread.reqs <- forkRequest{cmd: cmd, errc: errc}
	return <-errc
}

// forkLoop is the fork thread's goroutine. It is a named function so that
// goroutine leak checks can tell it from a leak (sandboxtest.IgnoreForkThread).
func forkLoop(reqs <-chan forkRequest) {
	runtime.LockOSThread() // never unlocked, see forkThread
	for r := range reqs {
		r.errc <- r.cmd.Start()
	}
}

// binary returns the path of a MariaDB program: from $PATH, else from
// /usr/sbin or /usr/bin (a non-root $PATH often lacks /usr/sbin, where
// mariadbd lives), else the bare name, so that exec reports it missing.
func binary(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return name
}
