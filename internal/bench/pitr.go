package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// Point-in-time recovery: the backlog's binlog files, as the source wrote
// them, replayed onto the target's snapshot (the state the backlog starts
// from, as a restored backup is), once the standard way and once with
// paraply apply. Both read the files from this machine's disk, and both
// times run from exec to exit.

// runMariadbBinlog times `mariadb-binlog FILES | mariadb`: the files
// decoded into BINLOG statements and run by one client session, one
// commit per source transaction.
func (c *cluster) runMariadbBinlog(ctx context.Context, b *Backlog, run *Measurement) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	decode := exec.CommandContext(ctx, "mariadb-binlog", append([]string{"--no-defaults"}, b.files...)...)
	var decodeErr, out bytes.Buffer
	decode.Stdout, decode.Stderr = w, &decodeErr
	decode.WaitDelay = waitDelay
	client := c.target.Client(ctx)
	client.Stdin, client.Stdout, client.Stderr = r, &out, &out
	client.WaitDelay = waitDelay
	cpu0 := serverCPU(c.target)
	sp := startSampler(ctx, c.target)
	began := time.Now()
	err = decode.Start()
	if err == nil {
		if err = client.Start(); err != nil {
			_ = decode.Process.Kill()
		}
	}
	// The children hold the pipe's ends now: a client that dies makes
	// mariadb-binlog fail on its next write instead of blocking.
	r.Close()
	w.Close()
	if err == nil {
		err = errors.Join(client.Wait(), decode.Wait())
	}
	run.Seconds = time.Since(began).Seconds()
	for _, p := range []*exec.Cmd{decode, client} {
		if ps := p.ProcessState; ps != nil {
			run.ClientCPU += (ps.UserTime() + ps.SystemTime()).Seconds()
		}
	}
	run.ClientCPU = round(run.ClientCPU, 2)
	run.Sessions, run.LockWaits = sp.stop()
	run.ServerCPU = round(serverCPU(c.target)-cpu0, 2)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("mariadb-binlog | mariadb: %w\n%s%s", err, tail(decodeErr.String(), 10), tail(out.String(), 10))
	}
	run.Transactions = b.Transactions
	return nil
}

// runApply times `paraply apply --start-gtid <before> FILES` with a's
// workers and paraply's defaults otherwise.
func (c *cluster) runApply(ctx context.Context, a Apply, b *Backlog, run *Measurement) error {
	args := append([]string{
		"apply",
		"--target", c.target.URL(),
		"--workers", a.workers(),
		"--start-gtid", b.Before,
		"--spool-dir", c.work,
		"--log-level", "warn",
		"--http", "",
		"--progress", "0",
	}, b.files...)
	return c.timeParaply(ctx, args, b, run)
}
