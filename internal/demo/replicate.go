package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/verify"
	"github.com/paraply/paraply/internal/workload"
)

// Replicate is the main demo: a sandboxed source and target, sysbench
// oltp_read_write on the source while paraply replicates it, live
// throughput and lag, and a verify at the end.
func Replicate(ctx context.Context, o Options) (err error) {
	src, err := sandbox.Start(ctx, sandbox.Options{Name: "demo-source", Binlog: true, Durable: true, BufferPoolMB: 128})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, src.Remove()) }() // a server left behind is an error
	tgt, err := sandbox.Start(ctx, sandbox.Options{Name: "demo-target", ServerID: 2, Durable: true, BufferPoolMB: 128})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, tgt.Remove()) }()
	fmt.Fprintf(o.Out, "source: %s (MariaDB, binlog ROW)\ntarget: %s (MariaDB)\n", src.URL(), tgt.URL())
	if err := src.Exec(ctx, "CREATE DATABASE warmup"); err != nil {
		return err
	}
	start, err := gtidPos(ctx, src)
	if err != nil {
		return err
	}
	if err := src.CreateDatabase(ctx, "sbtest"); err != nil {
		return err
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_read_write", o.Tables, o.TableSize, 1, 0); err != nil {
		return err
	}
	cfg := replicate.Default()
	if cfg.Source, err = config.ParseEndpoint(src.URL()); err != nil {
		return err
	}
	if cfg.Target, err = config.ParseEndpoint(tgt.URL()); err != nil {
		return err
	}
	cfg.Mode, cfg.StartGTID = deptrack.WritesetMode, start
	cfg.RelayDir = filepath.Join(tgt.Dir, "paraply-relay")
	rep := replicate.New(cfg)
	fmt.Fprintf(o.Out, "paraply replicate --dependency writeset --workers auto (the target starts empty: it receives the schema and the %d sysbench rows too)\n\n", o.Tables*o.TableSize)

	rctx, stopReplica := context.WithCancel(ctx)
	defer stopReplica()
	repDone := make(chan error, 1)
	go func() { repDone <- rep.Run(rctx) }()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	loadDone := make(chan error, 1)
	go func() {
		loadDone <- workload.Sysbench(loadCtx, src, "run", "oltp_read_write", o.Tables, o.TableSize, 8, o.Events)
	}()
	fmt.Fprintf(o.Out, "sysbench oltp_read_write, 8 client threads, %d transactions on the source:\n", o.Events)
	err = follow(ctx, o.Out, src, rep, loadDone, repDone)
	stopLoad()
	stopReplica()
	if err != nil {
		return err
	}
	if err := <-repDone; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return verifyPair(ctx, o.Out, src, tgt)
}

// follow prints throughput and lag every second until the load is done and
// the target has caught up with the source.
func follow(ctx context.Context, out io.Writer, src *sandbox.Server, rep *replicate.Replica, loadDone, repDone <-chan error) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	began := time.Now()
	var lastApplied int64
	loadFinished := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-repDone:
			if err == nil {
				err = errors.New("replication stopped")
			}
			return fmt.Errorf("paraply replicate: %w", err)
		case err := <-loadDone:
			if err != nil {
				return err
			}
			loadFinished = true
			fmt.Fprintln(out, "the source's load has finished; waiting for the target to catch up")
			continue
		case <-tick.C:
		}
		st := rep.Status()
		pos, err := gtidPos(ctx, src)
		if err != nil {
			return err
		}
		applied := st.Scheduler.Committed
		fmt.Fprintf(out, "%4.0fs  source at %-10s received %6d  applied %6d (%5d/s)  pending %5d  lag %5.1fs\n",
			time.Since(began).Seconds(), pos, st.Receiver.Transactions, applied, applied-lastApplied,
			st.Scheduler.Pending, st.Lag.Seconds())
		lastApplied = applied
		if loadFinished && st.Checkpoint.Position == pos && st.Scheduler.Pending == 0 {
			fmt.Fprintf(out, "caught up: the target has applied everything up to %s\n\n", pos)
			return nil
		}
	}
}

func gtidPos(ctx context.Context, s *sandbox.Server) (string, error) {
	db, err := s.DB("")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var pos string
	err = db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&pos)
	return strings.TrimSpace(pos), err
}

func verifyPair(ctx context.Context, out io.Writer, src, tgt *sandbox.Server) error {
	sdb, err := src.DB("")
	if err != nil {
		return err
	}
	defer sdb.Close()
	tdb, err := tgt.DB("")
	if err != nil {
		return err
	}
	defer tdb.Close()
	fmt.Fprintln(out, "paraply verify:")
	rep, err := verify.Run(ctx, verify.Options{Source: sdb, Target: tdb, SourceName: src.URL(), TargetName: tgt.URL()})
	if err != nil {
		return err
	}
	if err := rep.WriteText(out); err != nil {
		return err
	}
	if !rep.Equal() {
		return errors.New("the target differs from the source")
	}
	return nil
}
