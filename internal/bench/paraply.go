package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// waitDelay is how long a timed-out child gets between SIGKILL and
// giving up on its output pipes.
const waitDelay = 5 * time.Second

// runParaply times `paraply replicate --until-caught-up` applying backlog b
// on the target, from the position before the backlog, with a fresh relay
// log. The time is the whole process: it connects, receives the backlog
// from the source, applies it and exits once the target holds everything
// the source had when it started. Receiving is included, unlike for the
// native replica.
func (c *cluster) runParaply(ctx context.Context, a Apply, b *Backlog, run *Measurement) error {
	c.runs++
	relay := filepath.Join(c.work, fmt.Sprintf("relay-%d", c.runs))
	defer os.RemoveAll(relay)
	args := []string{
		"replicate",
		"--source", c.source.URL(),
		"--target", c.target.URL(),
		"--workers", a.workers(),
		"--dependency", a.Mode,
		"--preserve-commit-order=" + strconv.FormatBool(!a.Unordered),
		"--batch-max-txns", strconv.Itoa(a.Batch),
		"--relay-dir", relay,
		"--start-gtid", b.Before,
		"--until-caught-up",
		"--log-level", "warn",
	}
	if a.Binlog {
		args = append(args, "--apply", "binlog")
	}
	if a.GTIDs {
		args = append(args, "--preserve-gtids")
	}
	run.IncludesReceive = true
	return c.timeParaply(ctx, args, b, run)
}

// timeParaply times the paraply process args start, from exec to exit,
// with the target's CPU and lock waits, and paraply's own CPU and peak
// memory; it has applied backlog b.
func (c *cluster) timeParaply(ctx context.Context, args []string, b *Backlog, run *Measurement) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, c.cfg.binary(run.Apply), args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = waitDelay
	if c.cfg.Profile {
		run.Profile = profileName(b, run)
		cmd.Env = append(os.Environ(), "PARAPLY_CPU_PROFILE="+filepath.Join(c.cfg.OutDir, run.Profile),
			"PARAPLY_HEAP_PROFILE="+filepath.Join(c.cfg.OutDir, "heap-"+strings.TrimPrefix(run.Profile, "cpu-")))
	}
	cpu0 := serverCPU(c.target)
	sp := startSampler(ctx, c.target)
	began := time.Now()
	err := cmd.Run()
	run.Seconds = time.Since(began).Seconds()
	run.Sessions, run.LockWaits = sp.stop()
	run.ServerCPU = round(serverCPU(c.target)-cpu0, 2)
	if ps := cmd.ProcessState; ps != nil {
		run.ParaplyCPU = round((ps.UserTime() + ps.SystemTime()).Seconds(), 2)
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			run.ParaplyMaxRSSMB = round(float64(ru.Maxrss)/1024, 1) // Linux reports KiB
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("paraply %s: %w\n%s", args[0], err, tail(out.String(), 20))
	}
	run.Transactions = b.Transactions
	return nil
}

// binary is the paraply binary that runs a.
func (c Config) binary(a Apply) string {
	if a.B {
		return c.ParaplyB
	}
	return c.Paraply
}

// profileName is the file name of the CPU profile of run applying
// backlog b; its heap profile at the peak has "heap-" in place of "cpu-".
func profileName(b *Backlog, run *Measurement) string {
	config := strings.ReplaceAll(run.Config, bSuffix, "-b")
	if run.Round > 1 {
		config += fmt.Sprintf("-round%d", run.Round)
	}
	return fmt.Sprintf("cpu-%s-T%d-%s-%s.pprof", b.Workload, b.Clients, durabilityName(b.Durable), config)
}

// errDiffer is returned by verifyAgainstSource when `paraply verify`
// reports a difference.
var errDiffer = errors.New("the tables differ from the source's")

// verifyAgainstSource runs `paraply verify` between the source and s and
// returns errDiffer, with its report, if they differ.
func (c *cluster) verifyAgainstSource(ctx context.Context, s *sandbox.Server) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RunTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, c.cfg.Paraply, "verify", "--source", c.source.URL(), "--target", s.URL(), "--schemas", "sbtest")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "", nil
	case ctx.Err() != nil:
		return out.String(), fmt.Errorf("paraply verify: %w", ctx.Err())
	case errors.As(err, &exit) && exit.ExitCode() == 1 && !bytes.HasPrefix(out.Bytes(), []byte("paraply: ")):
		return tail(out.String(), 40), errDiffer
	}
	return out.String(), fmt.Errorf("paraply verify: %w\n%s", err, tail(out.String(), 10))
}
