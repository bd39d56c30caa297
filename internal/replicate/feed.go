package replicate

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/lag"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/source"
)

// feed is where a pipeline's transactions come from: a live source,
// through the receiver (replicate), or binlog files (apply). A feed only
// fills the relay log; from there on both run the same code (Replica.run):
// preparer, coordinator, workers and checkpoint.
type feed interface {
	// validate reports the first problem with cfg for this feed.
	validate(cfg Config) error
	// String names the source in logs and the status.
	String() string
	// inspect says what the source is: its flavor, and its position now
	// ("" when it has none, as binlog files).
	inspect(ctx context.Context) (source.Info, error)
	// catalog reads the tables' keys; tgt is the target. Its errors say
	// where it read them.
	catalog(ctx context.Context, tgt *sql.DB) (*schema.Catalog, error)
	// origin is the checkpoint this feed's pipeline keeps on the target.
	origin() checkpoint.Origin
	// producer returns what appends the source's transactions to relay.
	producer(info source.Info, relay *relaylog.Log) (producer, error)
	// checkPosition reports why the source cannot stream from pos, the
	// checkpoint's position or a first start's (first), before anything
	// is written (nil: it can).
	checkPosition(ctx context.Context, info source.Info, pos string, first bool) error
	// probe measures what dates the lag (see package lag), and follows
	// the source's position, until ctx is done; it cannot fail the
	// pipeline. info is what inspect said.
	probe(ctx context.Context, info source.Info)
}

// producer fills the relay log from position start. Run returns nil when
// ctx is done, or, for a producer whose input ends (binlog files), once it
// has appended its last transaction; the pipeline then stops when the
// target has everything in the relay log.
type producer interface {
	Run(ctx context.Context, start string) error
	Status() source.Status
}

// network is replicate's feed: a live source, as a replica. It dates
// what it receives in lag, and reads the source's position into pos,
// which the Replica reads for its status.
type network struct {
	cfg Config
	log *slog.Logger
	lag *lag.Tracker
	pos *livePosition
}

func (n network) validate(cfg Config) error { return cfg.Validate() }

func (n network) String() string { return n.cfg.Source.String() }

func (n network) origin() checkpoint.Origin { return checkpoint.Replicate }

func (n network) inspect(ctx context.Context) (source.Info, error) {
	srcDB, err := n.cfg.Source.WithTLS(n.cfg.SourceTLS).Open(nil)
	if err != nil {
		return source.Info{}, err
	}
	defer srcDB.Close()
	var info source.Info
	if err := untilReachable(ctx, n.cfg.ConnectWait, n.log, "source", n.cfg.Source.String(), func() (err error) {
		info, err = source.Inspect(ctx, srcDB)
		return err
	}); err != nil {
		return info, fmt.Errorf("source %s: %w", n.cfg.Source, n.cfg.Source.WithTLS(n.cfg.SourceTLS).ExplainDenied("source", err))
	}
	return info, nil
}

// catalog reads the keys from the target, not the source: the target's
// tables are as of the position being applied (the source's may have
// changed since), and its constraints are the ones the workers must not
// violate. DDL in the stream is followed from there.
func (n network) catalog(ctx context.Context, tgt *sql.DB) (*schema.Catalog, error) {
	return targetCatalog(ctx, tgt, n.cfg.Target.String())
}

func targetCatalog(ctx context.Context, tgt *sql.DB, name string) (*schema.Catalog, error) {
	cat, err := schema.Load(ctx, tgt)
	if err != nil {
		return nil, fmt.Errorf("reading the schema from the target %s: %w", name, err)
	}
	return cat, nil
}

func (n network) producer(info source.Info, relay *relaylog.Log) (producer, error) {
	return source.NewReceiver(n.sourceConfig(info), relay)
}

func (n network) checkPosition(ctx context.Context, info source.Info, pos string, first bool) error {
	return source.Check(ctx, n.sourceConfig(info), pos, first)
}

// sourceConfig is the receiver's configuration for a source of info.
func (n network) sourceConfig(info source.Info) source.Config {
	return source.Config{
		Source: n.cfg.Source, ServerID: n.cfg.ServerID, Flavor: info.Flavor,
		Heartbeat: n.cfg.Heartbeat, TLS: n.cfg.SourceTLS, PartBytes: n.cfg.PieceBytes, Logger: n.log.With("component", "receiver"),
		Arrivals: n.lag,
	}
}

// probe measures the source's clock offset, writes --heartbeat-table and
// follows the source's position.
func (n network) probe(ctx context.Context, info source.Info) {
	srcDB, err := n.cfg.Source.WithTLS(n.cfg.SourceTLS).Open(nil)
	if err != nil {
		n.log.Warn("cannot open the source to date the lag", "err", err)
		return
	}
	defer srcDB.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.followPosition(ctx, srcDB, info.Flavor)
	}()
	n.probeSource(ctx, srcDB)
	<-done
}
