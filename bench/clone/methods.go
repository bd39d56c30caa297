package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// measurement is one way's run.
type measurement struct {
	Method string `json:"method"`
	// Seconds from the start to a target caught up with the source;
	// SeedSeconds of them seeding (the copy, the dump and load), the rest
	// catching up.
	Seconds     float64 `json:"seconds"`
	SeedSeconds float64 `json:"seed_seconds"`
	// LongestWriteMs is the longest a probe write waited on the source.
	LongestWriteMs float64 `json:"longest_source_write_ms"`
	// ParaplyMaxRSSMB is the peak RSS of the paraply processes.
	ParaplyMaxRSSMB float64 `json:"paraply_max_rss_mb"`
	// CPU seconds the source's and the target's mariadbd and the tools
	// (paraply, mariadb-dump and mariadb, mydumper and myloader) used.
	SourceCPU   float64 `json:"source_cpu_seconds"`
	TargetCPU   float64 `json:"target_cpu_seconds"`
	ToolsCPU    float64 `json:"tools_cpu_seconds"`
	LoadAverage string  `json:"load_average_before"`
	Verified    bool    `json:"verified"`
	Note        string  `json:"note,omitempty"`
}

func (m measurement) summary() string {
	return fmt.Sprintf("%.1f s to caught up (seeding %.1f s), longest source write %.0f ms, paraply peak RSS %.0f MiB, CPU s source %.1f target %.1f tools %.1f, load before %s, verified %v %s",
		m.Seconds, m.SeedSeconds, m.LongestWriteMs, m.ParaplyMaxRSSMB, m.SourceCPU, m.TargetCPU, m.ToolsCPU, m.LoadAverage, m.Verified, m.Note)
}

// measure runs one way from an empty target to caught up, then verifies.
func (e *env) measure(ctx context.Context, method string) (measurement, error) {
	m := measurement{Method: method, LoadAverage: loadAverage()}
	if err := e.reset(ctx); err != nil {
		return m, err
	}
	logf("%s: starting (load average %s)", method, m.LoadAverage)
	e.probe.take()
	e.toolsCPU = 0
	src0, tgt0 := processCPU(e.src.PID()), processCPU(e.tgt.PID())
	began := time.Now()
	var err error
	switch method {
	case "clone":
		err = e.clone(ctx, &m)
	case "clone-2readers":
		err = e.clone(ctx, &m, "--copy-readers", "2")
	case "dump":
		err = e.dumpAndLoad(ctx, &m)
	case "mydumper":
		err = e.mydumper(ctx, &m)
	default:
		err = fmt.Errorf("no such way %q (clone, clone-2readers, dump, mydumper)", method)
	}
	m.Seconds = round(time.Since(began).Seconds())
	m.LongestWriteMs = round(float64(e.probe.take().Microseconds()) / 1000)
	m.SourceCPU, m.TargetCPU, m.ToolsCPU = round(processCPU(e.src.PID())-src0), round(processCPU(e.tgt.PID())-tgt0), round(e.toolsCPU)
	if err != nil {
		return m, err
	}
	// Verified with the source quiet: what it wrote since, applied first.
	e.stopLoad()
	defer func() { _ = e.startLoad(ctx) }()
	if _, err := e.paraplyRun(ctx, "replicate", e.stream(), "--until-caught-up"); err != nil {
		return m, err
	}
	out, err := e.paraplyRun(ctx, "verify", "--source", e.src.URL(), "--target", e.tgt.URL(), "--schemas", "sbtest")
	if err != nil {
		return m, fmt.Errorf("verify: %w\n%s", err, out)
	}
	m.Verified = true
	return m, nil
}

// stream are the settings of the stream every way hands over to.
func (e *env) stream() string {
	return strings.Join([]string{"--source", e.src.URL(), "--target", e.tgt.URL(), "--relay-dir", filepath.Join(e.work, "relay"),
		"--include", "sbtest.%", "--http", "", "--log-level", "info"}, "\x00")
}

// clone runs paraply clone to caught up, with more arguments.
func (e *env) clone(ctx context.Context, m *measurement, more ...string) error {
	args := append([]string{"clone", e.stream(), "--copy-workers", strconv.Itoa(e.cfg.threads), "--until-caught-up", "--progress-every", "60s"}, e.cfg.cloneArgs...)
	args = append(args, more...)
	out, err := e.paraplyRun(ctx, args...)
	m.ParaplyMaxRSSMB = max(m.ParaplyMaxRSSMB, e.lastRSS)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, tail(out, 30))
	}
	if s := regexp.MustCompile(`msg="clone finished[^"]*".* seconds=([0-9.]+)`).FindStringSubmatch(out); s != nil {
		m.SeedSeconds, _ = strconv.ParseFloat(s[1], 64)
		m.SeedSeconds = round(m.SeedSeconds)
	}
	if b := regexp.MustCompile(`commits_blocked_ms=([0-9.]+)`).FindStringSubmatch(out); b != nil {
		m.Note = "source commits blocked by clone: " + b[1] + " ms"
	}
	return nil
}

// gtidInDump finds the position mariadb-dump --master-data=2 writes.
var gtidInDump = regexp.MustCompile(`gtid_slave_pos='([0-9,-]*)'`)

// dumpAndLoad runs mariadb-dump | mariadb, then replicate from the dump's
// position.
func (e *env) dumpAndLoad(ctx context.Context, m *measurement) error {
	began := time.Now()
	dump := exec.CommandContext(ctx, "mariadb-dump", "--no-defaults", "-h", e.src.Host, "-P", strconv.Itoa(e.src.Port), "-u", e.src.User,
		"--single-transaction", "--gtid", "--master-data=2", "--databases", "sbtest")
	load := e.tgt.Client(ctx)
	out, err := dump.StdoutPipe()
	if err != nil {
		return err
	}
	in, err := load.StdinPipe()
	if err != nil {
		return err
	}
	var dumpErr, loadErr bytes.Buffer
	dump.Stderr, load.Stderr = &dumpErr, &loadErr
	if err := load.Start(); err != nil {
		return err
	}
	if err := dump.Start(); err != nil {
		return err
	}
	// The position is in the dump's last lines (MariaDB 10.11 prints it
	// at the end).
	last := &tailKeeper{keep: 64 << 10}
	_, cerr := io.Copy(io.MultiWriter(in, last), out)
	in.Close()
	derr, lerr := dump.Wait(), load.Wait()
	e.account(dump)
	e.account(load)
	if err := derr; err != nil {
		return fmt.Errorf("mariadb-dump: %w\n%s", err, dumpErr.String())
	}
	if err := lerr; err != nil || cerr != nil {
		return fmt.Errorf("mariadb: %w\n%s", errors.Join(err, cerr), loadErr.String())
	}
	all := gtidInDump.FindAllSubmatch(last.b, -1)
	if all == nil {
		return fmt.Errorf("no gtid_slave_pos at the end of the dump")
	}
	pos := all[len(all)-1]
	m.SeedSeconds = round(time.Since(began).Seconds())
	return e.catchUp(ctx, m, string(pos[1]))
}

// mydumper runs mydumper, then myloader, then replicate from mydumper's
// position.
func (e *env) mydumper(ctx context.Context, m *measurement) error {
	began := time.Now()
	dir := filepath.Join(e.work, "mydumper")
	_ = os.RemoveAll(dir)
	threads := strconv.Itoa(e.cfg.threads)
	dump := exec.CommandContext(ctx, "mydumper", "-h", e.src.Host, "-P", strconv.Itoa(e.src.Port), "-u", e.src.User,
		"-t", threads, "-B", "sbtest", "-o", dir, "--trx-consistency-only", "-r", "100000")
	out, err := dump.CombinedOutput()
	e.account(dump)
	if err != nil {
		return fmt.Errorf("mydumper: %w\n%s", err, out)
	}
	meta, err := os.ReadFile(filepath.Join(dir, "metadata"))
	if err != nil {
		return err
	}
	pos := regexp.MustCompile(`GTID:\s*([0-9,-]+)`).FindSubmatch(meta)
	if pos == nil {
		return fmt.Errorf("no GTID in mydumper's metadata:\n%s", meta)
	}
	load := exec.CommandContext(ctx, "myloader", "-h", e.tgt.Host, "-P", strconv.Itoa(e.tgt.Port), "-u", e.tgt.User,
		"-t", threads, "-d", dir, "-e", "-o")
	out, err = load.CombinedOutput()
	e.account(load)
	if err != nil {
		return fmt.Errorf("myloader: %w\n%s", err, out)
	}
	_ = os.RemoveAll(dir)
	m.SeedSeconds = round(time.Since(began).Seconds())
	return e.catchUp(ctx, m, string(pos[1]))
}

// catchUp replicates from position to caught up.
func (e *env) catchUp(ctx context.Context, m *measurement, position string) error {
	out, err := e.paraplyRun(ctx, "replicate", e.stream(), "--start-gtid", position, "--until-caught-up")
	m.ParaplyMaxRSSMB = max(m.ParaplyMaxRSSMB, e.lastRSS)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, tail(out, 30))
	}
	return nil
}

// paraplyRun runs paraply with args (a NUL in one splits it into
// several) and returns its output; lastRSS is its peak RSS.
func (e *env) paraplyRun(ctx context.Context, args ...string) (string, error) {
	var all []string
	for _, a := range args {
		all = append(all, strings.Split(a, "\x00")...)
	}
	cmd := exec.CommandContext(ctx, e.cfg.paraply, all...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	e.lastRSS = 0
	e.account(cmd)
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			e.lastRSS = round(float64(ru.Maxrss) / 1024) // Linux reports KiB
		}
	}
	return out.String(), err
}

// account adds the CPU time of cmd, which has ended, to the tools'.
func (e *env) account(cmd *exec.Cmd) {
	if ps := cmd.ProcessState; ps != nil {
		e.toolsCPU += (ps.UserTime() + ps.SystemTime()).Seconds()
	}
}

// processCPU reads a process's CPU time (user and system), in seconds,
// from /proc/PID/stat; 0 if it cannot.
func processCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// tailKeeper keeps the last keep bytes written to it.
type tailKeeper struct {
	b    []byte
	keep int
}

func (t *tailKeeper) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.keep; over > t.keep {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func round(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
