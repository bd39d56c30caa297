package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

const (
	// startTimeout bounds how long Start and Restart wait for a new mariadbd to
	// accept queries, crash recovery included. A shorter ctx deadline wins.
	startTimeout = 60 * time.Second
	// stopTimeout is how long Stop waits after SIGTERM before it sends SIGKILL.
	stopTimeout = 60 * time.Second
	// readyPoll is the interval between readiness probes, and probeTimeout
	// bounds one probe.
	readyPoll    = 25 * time.Millisecond
	probeTimeout = 2 * time.Second
	// portAttempts is how many ports Start tries when it picks the port
	// itself and another process takes it first.
	portAttempts = 5
	// logTail is how many lines of error.log go into an error message.
	logTail = 20
)

// errPortInUse marks a start that failed because the TCP port was taken.
var errPortInUse = errors.New("port already in use")

// Server is one sandboxed mariadbd. The exported fields describe it and must
// not be changed. The methods are safe for concurrent use.
type Server struct {
	Name      string // Options.Name
	Dir       string // the sandbox directory; see the package doc for its layout
	DataDir   string // Dir/data
	BinlogDir string // Dir/binlog; empty unless Options.Binlog
	Host      string // always "127.0.0.1"
	Port      int    // TCP port, kept across Restart
	User      string // always "root"
	Password  string // always empty; never logged
	Socket    string // unix socket path
	LogPath   string // error log, which also gets mariadbd's stdout and stderr

	opts   Options
	layout layout
	log    *slog.Logger

	mu      sync.Mutex // guards proc and removed; held for the whole of Stop, Kill, Restart and Remove
	proc    *process   // nil when no mariadbd was started since the last Stop or Kill
	removed bool
}

// Start creates a sandbox directory from the template datadir and starts
// mariadbd in it. It returns when the server answers SELECT 1. ctx bounds only
// the start (the default limit is 60s); the server keeps running until Stop,
// Kill, Remove or StopAll, or until this process dies.
//
// If mariadbd does not come up, the directory is kept for inspection, and the
// error names it and quotes the end of error.log.
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	begin := time.Now()
	templateData, err := templateDataDir(ctx)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		s, err := newServer(opts, templateData)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		err = s.launch(ctx)
		s.mu.Unlock()
		if err == nil {
			s.log.Info("started", "pid", s.PID(), "port", s.Port, "dir", s.Dir, "took", time.Since(begin).Round(time.Millisecond))
			return s, nil
		}
		unregister(s)
		if opts.Port == 0 && errors.Is(err, errPortInUse) && attempt < portAttempts {
			s.log.Debug("port taken, trying another", "port", s.Port)
			_ = os.RemoveAll(s.Dir)
			continue
		}
		return nil, err
	}
}

// newServer makes the sandbox directory, copies the template datadir into
// it and reserves a port.
func newServer(o Options, templateData string) (s *Server, err error) {
	if err := os.MkdirAll(o.BaseDir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", o.Name, err)
	}
	dir, err := os.MkdirTemp(o.BaseDir, dirPrefix+o.Name+"-")
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", o.Name, err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	l := newLayout(dir)
	if err := copyTree(templateData, l.data, false); err != nil {
		return nil, fmt.Errorf("sandbox %s: copy template datadir to %s: %w", o.Name, l.data, err)
	}
	for _, d := range []string{l.binlog, l.relaylog, l.tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox %s: %w", o.Name, err)
		}
	}
	s = &Server{
		Name:    o.Name,
		Dir:     dir,
		DataDir: l.data,
		Host:    "127.0.0.1",
		User:    "root",
		Socket:  l.socket,
		LogPath: l.errorLog,
		opts:    o,
		layout:  l,
		log:     o.Logger.With("component", "sandbox", "server", o.Name),
	}
	if o.Binlog {
		s.BinlogDir = l.binlog
	}
	if err := register(s, o.Port); err != nil {
		return nil, err
	}
	return s, nil
}

// Stop shuts mariadbd down cleanly: SIGTERM to its PID, then up to 60s for
// it to exit, then SIGKILL. It returns an error if the server had to be killed
// or did not exit cleanly (e.g. it had crashed before). Stop on a stopped
// server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

func (s *Server) stopLocked() error {
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	begin := time.Now()
	if err := p.terminate(stopTimeout); err != nil {
		return s.errorf("stop mariadbd (pid %d): %w\n%s", p.pid, err, tailFile(s.LogPath, logTail))
	}
	s.log.Info("stopped", "pid", p.pid, "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// Kill sends SIGKILL to mariadbd and waits for it to exit, as a crash would.
// Kill on a stopped server does nothing.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	if err := p.kill(); err != nil {
		return s.errorf("kill mariadbd (pid %d): %w", p.pid, err)
	}
	s.log.Info("killed", "pid", p.pid)
	return nil
}

// Restart starts mariadbd again on the same directory and port. A running
// server is stopped first, as by Stop. After Kill or a crash, InnoDB recovers
// before the server answers, and Restart waits for that.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return s.errorf("restart: the server was removed")
	}
	if s.proc != nil && s.proc.exited() {
		s.proc = nil // it crashed (or ran SHUTDOWN); start it again anyway
	}
	if err := s.stopLocked(); err != nil {
		return err
	}
	begin := time.Now()
	if err := s.launch(ctx); err != nil {
		return err
	}
	s.log.Info("restarted", "pid", s.proc.pid, "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// Remove stops the server and deletes its directory. If Stop fails, the
// directory is kept for inspection. Remove on a removed server does nothing.
func (s *Server) Remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return nil
	}
	if err := s.stopLocked(); err != nil {
		return fmt.Errorf("%w\nkeeping %s", err, s.Dir)
	}
	s.removed = true
	unregister(s)
	if err := os.RemoveAll(s.Dir); err != nil {
		return s.errorf("remove: %w", err)
	}
	return nil
}

// PID returns the process ID of the current mariadbd, or 0 after Stop or
// Kill. It changes on Restart.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// Running reports whether mariadbd was started and has not exited.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.exited()
}

// launch starts mariadbd and waits until it answers. s.mu must be held (or s
// not yet shared) and s.proc must be nil.
func (s *Server) launch(ctx context.Context) error {
	p, err := startProcess(s.layout, serverArgs(s.opts, s.layout, s.Port, os.Geteuid() == 0))
	if err != nil {
		return s.errorf("start mariadbd: %w", err)
	}
	s.proc = p
	if err := s.waitReady(ctx, p); err != nil {
		s.proc = nil
		_ = p.kill()
		return err
	}
	return nil
}

// waitReady polls with SELECT 1 until mariadbd answers, exits, or the
// deadline passes. Polling is the only option: mariadbd has no readiness
// notification apart from systemd's sd_notify.
func (s *Server) waitReady(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	// Cut a probe short when mariadbd exits. A probe can otherwise hang until
	// the deadline: if another process holds the port, it may accept the
	// connection and never send a MySQL greeting.
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	db, err := s.open("", true)
	if err != nil {
		return err
	}
	defer db.Close()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		probeCtx, cancelProbe := context.WithTimeout(ctx, probeTimeout)
		var one int
		err := db.QueryRowContext(probeCtx, "SELECT 1").Scan(&one)
		cancelProbe()
		if err == nil {
			return nil
		}
		select {
		case <-tick.C:
			continue
		case <-ctx.Done():
		}
		if p.exited() {
			return s.exitError(p)
		}
		return s.errorf("mariadbd (pid %d) not ready: %w (last error: %v)\n%s", p.pid, ctx.Err(), err, tailFile(s.LogPath, logTail))
	}
}

// exitError describes a mariadbd that exited during startup.
func (s *Server) exitError(p *process) error {
	tail := tailFile(s.LogPath, logTail)
	err := s.errorf("mariadbd (pid %d) exited during startup: %v\n%s", p.pid, p.err, tail)
	if strings.Contains(tail, "Bind on TCP/IP port") {
		return fmt.Errorf("%w: %w", errPortInUse, err)
	}
	return err
}

// errorf formats an error that names the server, its port and its directory.
func (s *Server) errorf(format string, args ...any) error {
	return fmt.Errorf("sandbox %s (port %d, dir %s): "+format, append([]any{s.Name, s.Port, s.Dir}, args...)...)
}

// lastLines returns at most the last n lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// tailFile returns the last n lines of the file at path, reading at most its
// last 16 KiB.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer f.Close()
	const maxTail = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > maxTail {
		if _, err := f.Seek(-maxTail, io.SeekEnd); err != nil {
			return fmt.Sprintf("(cannot read %s: %v)", path, err)
		}
	}
	b, err := io.ReadAll(f)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	return lastLines(string(b), n)
}

// firstLines returns the first n lines of s: mariadb-install-db says what
// went wrong first and then prints a page of generic advice.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
