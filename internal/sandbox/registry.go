package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// registry holds every Server of this process from Start until Remove. It
// lets StopAll find them and keeps two servers from getting the same port.
var registry = struct {
	mu      sync.Mutex
	servers map[*Server]struct{}
}{servers: make(map[*Server]struct{})}

// register adds s and sets s.Port: port, or a free loopback port if port is 0.
func register(s *Server, port int) error {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	taken := make(map[int]bool, len(registry.servers))
	for other := range registry.servers {
		taken[other.Port] = true
	}
	if port == 0 {
		var err error
		if port, err = freePort(taken); err != nil {
			return fmt.Errorf("sandbox %s: %w", s.Name, err)
		}
	} else if taken[port] {
		return fmt.Errorf("sandbox %s: port %d is used by another sandbox server", s.Name, port)
	}
	s.Port = port
	registry.servers[s] = struct{}{}
	return nil
}

func unregister(s *Server) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	delete(registry.servers, s)
}

// freePort asks the kernel for a free port on 127.0.0.1 and skips ports in
// taken. Another process can take the port before mariadbd binds it, so Start
// retries when that happens.
func freePort(taken map[int]bool) (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("pick a port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if err := l.Close(); err != nil {
			return 0, fmt.Errorf("pick a port: %w", err)
		}
		if !taken[port] {
			return port, nil
		}
	}
	return 0, errors.New("pick a port: the kernel kept returning ports in use by sandbox servers")
}

// StopAll stops every server of this process that has not been removed, in
// parallel. Their directories stay. It returns the errors of all the Stops
// joined.
func StopAll() error {
	registry.mu.Lock()
	servers := make([]*Server, 0, len(registry.servers))
	for s := range registry.servers {
		servers = append(servers, s)
	}
	registry.mu.Unlock()

	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { errs[i] = s.Stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// HandleSignals makes SIGINT and SIGTERM stop every sandbox server (StopAll)
// before the signal takes effect. It is meant for main functions and TestMain:
//
//	func TestMain(m *testing.M) {
//		uninstall := sandbox.HandleSignals()
//		code := m.Run()
//		uninstall()
//		_ = sandbox.StopAll() // servers whose tests did not Remove them
//		os.Exit(code)
//	}
//
// After StopAll it stops listening and sends the signal to its own process
// again. If nothing else in the process listens for it, the process then dies
// of the signal as usual. If something does (e.g. signal.NotifyContext in a
// main function), that listener gets it. The returned function uninstalls
// the handler and waits for it to finish. Signals that the process ignores
// when HandleSignals is called are left alone.
func HandleSignals() (uninstall func()) {
	sigs := make(chan os.Signal, 1)
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		// A signal that the process ignores stays ignored: Notify would undo
		// that, and re-raising the signal would then not end the process.
		// For example, a non-interactive shell's background jobs ignore SIGINT.
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-sigs:
			_ = StopAll() // nowhere to report errors; the signal ends the process
			signal.Stop(sigs)
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		case <-quit:
			signal.Stop(sigs)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

// ReapStale kills mariadbd processes left behind in sandbox directories under
// baseDir ("" means os.TempDir()) by processes that no longer exist, and returns
// those directories. Pdeathsig normally makes this unnecessary.
//
// A directory's mariadbd is killed only if all of these hold: its sandbox.pid
// names a PID, /proc/PID/cmdline is mariadbd's with that directory's datadir,
// and the process's parent is no longer the owner recorded in sandbox.pid.
// Servers of live test processes, including other packages' tests running
// at the same time, keep their owner as parent, so they are left alone. So are
// servers that this package did not start. The directories are not deleted.
func ReapStale(baseDir string) ([]string, error) {
	if baseDir == "" {
		baseDir = os.TempDir()
	}
	pidFiles, err := filepath.Glob(filepath.Join(baseDir, dirPrefix+"*", "sandbox.pid"))
	if err != nil {
		return nil, err
	}
	var reaped []string
	var errs []error
	for _, f := range pidFiles {
		dir := filepath.Dir(f)
		pid, ok := staleServerPID(newLayout(dir))
		if !ok {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("sandbox: reap pid %d in %s: %w", pid, dir, err))
			continue
		}
		if !waitGone(pid, 10*time.Second) {
			errs = append(errs, fmt.Errorf("sandbox: reap pid %d in %s: still alive 10s after SIGKILL", pid, dir))
			continue
		}
		reaped = append(reaped, dir)
	}
	return reaped, errors.Join(errs...)
}

// staleServerPID returns the PID of the orphaned mariadbd of the sandbox l,
// if there is one (see ReapStale).
func staleServerPID(l layout) (int, bool) {
	b, err := os.ReadFile(l.ownerPID)
	if err != nil {
		return 0, false
	}
	var pid, owner int
	if _, err := fmt.Sscan(string(b), &pid, &owner); err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return 0, false // gone
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if !slices.Contains(args, "--datadir="+l.data) {
		return 0, false // the PID was reused by another process
	}
	state, ppid, ok := procStat(pid)
	if !ok || state == 'Z' || ppid == owner {
		return 0, false
	}
	return pid, true
}

// procStat returns the state and parent PID from /proc/PID/stat.
func procStat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid ...": comm may contain spaces and parentheses,
	// so parse from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], ppid, true
}

// waitGone polls until pid no longer exists or is a zombie. The process is
// not our child, so it cannot be waited for. A zombie counts as gone: its
// memory and its port are free, and reaping it is its parent's job. PID 1 in
// some containers and VMs does that job slowly.
func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		state, _, ok := procStat(pid)
		if !ok || state == 'Z' {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
