package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/paraply/paraply/internal/clone"
	"github.com/paraply/paraply/internal/replicate"
)

func cloneCmd() *cobra.Command {
	cfg := clone.Default()
	var (
		src  sourceFlags
		pipe pipelineFlags
	)
	cmd := &cobra.Command{
		Use:   "clone --source mysql://USER@HOST:PORT --target mysql://USER@HOST:PORT",
		Short: "Copy a live source into an empty target in parallel, at one position, then replicate from there",
		Long: `clone seeds a stream's target: it copies the source's tables that the
stream replicates (its --include, --exclude and --rewrite-db), with their
triggers, views, routines and events, into the target, with --copy-workers
sessions, chunk by chunk in key order, all as of one position of the
source's binlog, which it reads without a lock (MariaDB names the position
of a consistent snapshot). Each chunk commits with its progress row in the
stream's database: a clone killed resumes where it stopped, copying no
chunk twice. Then it leaves the stream's checkpoint at that position and
runs as replicate (or exits 0 once caught up, with --until-caught-up).
A first run refuses a target that holds a table it would copy, unless
--overwrite-tables. docs/clone.md says how.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := src.resolve(&cfg.Stream); err != nil {
				return err
			}
			if err := pipe.resolve(&cfg.Stream); err != nil {
				return err
			}
			return runClone(cmd.Context(), cfg, &pipe)
		},
	}
	f := cmd.Flags()
	src.add(f, &cfg.Stream)
	pipe.add(f, &cfg.Stream, "127.0.0.1:9104")
	f.BoolVar(&cfg.Stream.UntilCaughtUp, "until-caught-up", false, "once copied, replicate until the target has everything the source had then, and exit 0")
	f.IntVar(&cfg.Workers, "copy-workers", cfg.Workers, "target sessions writing chunks at once")
	f.IntVar(&cfg.Readers, "copy-readers", cfg.Readers, "source sessions reading chunks: 1 reads without any lock; more open their snapshots while the source's commits are blocked for a moment (BACKUP STAGE BLOCK_COMMIT, needs RELOAD)")
	f.IntVar(&cfg.ChunkRows, "chunk-rows", cfg.ChunkRows, "rows in one chunk (one target transaction) at most")
	f.IntVar(&cfg.ChunkBytes, "chunk-bytes", cfg.ChunkBytes, "bytes of rows in one chunk at most (a larger row goes alone)")
	f.IntVar(&cfg.Rate, "copy-rate", 0, "rows read from the source per second at most, to spare a busy source (0: no limit)")
	f.BoolVar(&cfg.Overwrite, "overwrite-tables", false, "drop the target's tables that the clone copies, rather than refuse to start")
	f.BoolVar(&cfg.DeferIndexes, "defer-indexes", cfg.DeferIndexes, "create tables without their secondary indexes and add them once the rows are in")
	f.DurationVar(&cfg.ProgressEvery, "progress-every", cfg.ProgressEvery, "how often the progress is shown on stderr (0: never)")
	return cmd
}

// runClone runs the clone, its status page on --http while it copies,
// then replicate on the same settings.
func runClone(ctx context.Context, cfg clone.Config, pipe *pipelineFlags) error {
	tuneGC()
	cctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg.Progress, cfg.Terminal = os.Stderr, term.IsTerminal(int(os.Stderr.Fd()))
	if !cfg.Terminal && cfg.ProgressEvery < 10*time.Second && cfg.ProgressEvery > 0 {
		// A journal gets a line, not a redraw: not more often than that.
		cfg.ProgressEvery = 10 * time.Second
	}
	c := clone.New(cfg)
	stopServing := func() {}
	if pipe.http.addr != "" {
		l, err := listenStatus(pipe.http.addr, pipe.http.allowRemote)
		if err != nil {
			return err
		}
		sctx, cancel := context.WithCancel(cctx)
		served := make(chan struct{})
		go func() {
			defer close(served)
			if err := c.Serve(sctx, l); err != nil {
				cfg.Stream.Logger.Error("the clone's status and metrics server stopped", "err", err)
			}
		}()
		// The address is replicate's next: it is closed before that.
		stopServing = func() { cancel(); <-served }
		cfg.Stream.Logger.Info("clone status and metrics", "url", "http://"+l.Addr().String()+"/")
	}
	_, err := c.Run(cctx)
	stopServing()
	if cctx.Err() != nil {
		cfg.Stream.Logger.Info("clone stopped on a signal: run it again with the same settings to resume")
		return nil
	}
	if err != nil {
		return err
	}
	stop()
	return pipe.run(ctx, cfg.Stream, replicate.New, nil)
}
