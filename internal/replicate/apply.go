package replicate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/source"
)

// Files is what `paraply apply` reads instead of a live source: binlog
// files, where in them to start and stop, and optionally the schema.
type Files struct {
	source.FilesConfig
	// Schema, if set, reads the tables' keys as they are at the start
	// point (--schema, --schema-file) instead of from the target. It is
	// used only while apply has not started on the target: from then on
	// the target's tables are as of its checkpoint, which a catalog of
	// the start point would not be once DDL has been applied.
	Schema func(context.Context) (*schema.Catalog, error)
}

// NewApply returns a pipeline that applies binlog files (point-in-time
// recovery) with the same preparer, coordinator, workers and checkpoint as
// replicate; cfg's source settings are not used, nor UntilCaughtUp: Run
// returns nil once every transaction of the files up to the stop point is
// applied.
//
// Positions are GTID sets, as replicate's: the files' transactions that
// cfg.StartGTID (the backup's position) holds are skipped, and the
// checkpoint, which apply keeps in its own row (checkpoint.Apply), is the
// GTID set after the last transaction applied, so that a second run with
// the same arguments skips everything the first applied. The relay log in
// cfg.RelayDir is only a bounded spool between the files and the
// preparer: the files are the durable input, so it must start empty on
// every run (a relay log left by another run could hold transactions past
// this run's stop point), and it is never synced.
func NewApply(cfg Config, in Files) *Replica {
	cfg.UntilCaughtUp = false
	cfg.RelaySync = relaylog.SyncNever
	r := New(cfg)
	r.feed = &fileFeed{cfg: r.cfg, log: r.log, in: in}
	return r
}

// fileFeed is apply's feed: binlog files.
type fileFeed struct {
	cfg Config
	log *slog.Logger
	in  Files
}

func (f *fileFeed) validate(cfg Config) error {
	// Config.Validate also checks what only a live source needs
	// (--source, --server-id); binlog files need neither.
	cfg.Source.Host, cfg.ServerID = "files", 1
	if err := cfg.Validate(); err != nil {
		return err
	}
	if len(f.in.Paths) == 0 {
		return errors.New("no binlog files given")
	}
	if f.in.Schema != nil && len(cfg.Filter.Rewrites) > 0 {
		// The keys would be looked up under the source's database names.
		return errors.New("--rewrite-db cannot be used with --schema or --schema-file, whose tables have the source's database names: let apply read the keys from the target")
	}
	if ents, err := os.ReadDir(cfg.RelayDir); err == nil && len(ents) > 0 {
		return fmt.Errorf("the spool directory %s is not empty: apply spools every run afresh", cfg.RelayDir)
	}
	return nil
}

func (f *fileFeed) String() string {
	switch n := len(f.in.Paths); n {
	case 0:
		return "no binlog files"
	case 1:
		return "binlog file " + filepath.Base(f.in.Paths[0])
	default:
		return fmt.Sprintf("%d binlog files, %s to %s", n, filepath.Base(f.in.Paths[0]), filepath.Base(f.in.Paths[n-1]))
	}
}

func (f *fileFeed) origin() checkpoint.Origin { return checkpoint.Apply }

// inspect reads the flavor from the files' format description: it, not a
// server, decides the apply path (applier.CanReplay) and how DDL is read.
func (f *fileFeed) inspect(context.Context) (source.Info, error) {
	return source.InspectFiles(f.in.FilesConfig)
}

func (f *fileFeed) catalog(ctx context.Context, tgt *sql.DB) (*schema.Catalog, error) {
	if f.in.Schema != nil {
		fresh, err := f.fresh(ctx, tgt)
		if err != nil {
			return nil, err
		}
		if fresh {
			cat, err := f.in.Schema(ctx)
			if err != nil {
				return nil, fmt.Errorf("reading the schema: %w", err)
			}
			return cat, nil
		}
		f.log.Info("the target holds apply's checkpoint: reading the schema from the target, as of the checkpoint, not from --schema/--schema-file")
	}
	return targetCatalog(ctx, tgt, f.cfg.Target.String())
}

// fresh reports whether apply has not started on the target: no
// checkpoint of it, nothing recorded as applied, no DDL half done.
func (f *fileFeed) fresh(ctx context.Context, tgt *sql.DB) (bool, error) {
	store := checkpoint.NewStreamStore(tgt, checkpoint.Apply, f.cfg.Name)
	if err := store.Init(ctx); err != nil {
		return false, fmt.Errorf("target %s: %w", f.cfg.Target, err)
	}
	st, err := store.Load(ctx)
	var foreign *checkpoint.ForeignCheckpointError
	switch {
	case errors.As(err, &foreign):
		return false, nil // run() reads the checkpoint next and says so
	case err != nil:
		return false, fmt.Errorf("target %s: %w", f.cfg.Target, err)
	}
	return st.Position == "" && len(st.Applied) == 0 && st.PendingDDL == nil, nil
}

func (f *fileFeed) producer(info source.Info, relay *relaylog.Log) (producer, error) {
	cfg := f.in.FilesConfig
	cfg.Logger = f.log.With("component", "files")
	cfg.PartBytes = f.cfg.PieceBytes
	return source.NewFiles(cfg, info.Flavor, relay)
}

// checkPosition has nothing to check: the files say where they start,
// and apply's own checks of --start-gtid come with reading them.
func (f *fileFeed) checkPosition(context.Context, source.Info, string, bool) error { return nil }

// probe does nothing: binlog files have no clock to measure, and their
// transactions are dated by their source timestamps.
func (f *fileFeed) probe(context.Context, source.Info) {}
