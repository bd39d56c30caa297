// Package replicate wires paraply's pipeline together: receiver -> relay
// log -> preparer (decode, dependencies) -> coordinator -> workers ->
// target, with the checkpoint on the target. Each stage gets only its own
// configuration and the interfaces it uses.
package replicate

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/lag"
	"github.com/paraply/paraply/internal/relaylog"
)

// Config is everything `paraply replicate` needs.
type Config struct {
	// Source and Target are the servers read from and applied to; their
	// TLS settings, if any, are SourceTLS and TargetTLS.
	Source, Target config.Endpoint
	SourceTLS      *tls.Config
	TargetTLS      *tls.Config
	// Workers applying in parallel; 0 is --workers auto: a pool of
	// AutoWorkersPool, of which the coordinator finds, while it runs, how
	// many have work at once.
	Workers int
	// Mode is the dependency mode (--dependency).
	Mode deptrack.Mode
	// PreserveOrder commits in source order.
	PreserveOrder bool
	// RelayDir holds the relay log, bounded to RelayMaxBytes, synced as
	// RelaySync says.
	RelayDir      string
	RelayMaxBytes int64
	RelaySync     relaylog.SyncPolicy
	// ServerID is the replica server_id presented to the source.
	ServerID uint32
	// StartGTID is where to start when the target has no checkpoint:
	// StartCurrent for the source's position now; "" for the same on a
	// target without tables, else refused (see Replica.checkStart). Given
	// with a checkpoint, it must name the checkpoint's position.
	StartGTID string
	// UntilCaughtUp stops once the target has applied everything the
	// source had when replication started.
	UntilCaughtUp bool
	// UntilGTID stops after the transaction at this GTID position is
	// applied, and applies nothing after it (as START SLAVE UNTIL
	// master_gtid_pos).
	UntilGTID string
	// Delay applies a transaction no earlier than its source commit time
	// plus Delay (as MASTER_DELAY).
	Delay time.Duration
	// BatchTxns bounds the source transactions per target transaction
	// (1 with PreserveGTIDs). With a backlog, batches fill to it; with a
	// trickle each transaction goes alone (see scheduler.Config). Larger
	// batches mean fewer commits, checkpoint rows and round trips, and
	// fuller compaction; docs/benchmark.md ("The measurements behind the
	// defaults") has what 256 gained over 64.
	BatchTxns int
	// PreserveGTIDs commits each source transaction on the target under
	// its own source GTID, as a native replica with log_slave_updates
	// does (MariaDB source and target; see checkPreserveGTIDs).
	PreserveGTIDs bool
	// BatchDelay is how long a transaction may wait for a batch to fill.
	BatchDelay time.Duration
	// Apply chooses how rows are applied: "binlog" (the target's own row
	// applier, exact), "sql" (SQL statements, faster; refuses tables it
	// cannot apply exactly), or "auto": SQL, and the target's row applier
	// for the work that needs it, when the source and the target are
	// MariaDB and the target account may run BINLOG statements (else sql).
	Apply applier.Path
	// NoCompact turns off row compaction in target transactions (see
	// applier.Config.NoCompact).
	NoCompact bool
	// PieceBytes bounds the memory one transaction takes: a larger one is
	// received, stored, prepared and applied in pieces of about this size
	// (a barrier; its target transaction still commits once).
	PieceBytes int
	// Filter holds --include, --exclude and --rewrite-db (see package
	// filter); its zero value applies everything as it is.
	Filter filter.Rules
	// History is the writeset history size (0 = default).
	History int
	// Window bounds the look-ahead (transactions admitted, not committed).
	Window int
	// Heartbeat is the source heartbeat period.
	Heartbeat time.Duration
	// HeartbeatTable, if set (db.table), is where paraply writes a
	// heartbeat row on the source every HeartbeatInterval (0: 100 ms) to
	// date the lag (see package lag); it needs INSERT and CREATE there.
	HeartbeatTable    string
	HeartbeatInterval time.Duration
	// ConnectWait is how long to wait at start for a source or target that
	// does not answer (once running, paraply waits for them for ever).
	ConnectWait time.Duration
	// Name is the stream on the target (checkpoint.DefaultStream when
	// empty): its checkpoint, lock, metrics label and log field.
	Name   string
	Logger *slog.Logger
	// Observer, if set, is told what the workers do (metrics).
	Observer applier.Observer

	// CloneCatchUp says this run is a clone's own (package clone), which
	// brings the tables it has copied forward on a target whose copy has
	// not finished; any other run refuses such a target.
	CloneCatchUp bool

	// fillTo is set by Handover's gap fill: stop once the checkpoint
	// covers this position. Unlike UntilGTID, transactions past it in a
	// domain may be applied first (in order, so without new gaps): the
	// fill must not stop on another domain before the gaps are filled.
	fillTo string
}

// DefaultPieceBytes is the default Config.PieceBytes: 4 MiB, a few
// percent of the memory paraply keeps to (GOMEMLIMIT 192 MiB), while one
// piece still holds hundreds of rows events.
const DefaultPieceBytes = 4 << 20

// DefaultRelayDir is the default Config.RelayDir; a stream other than the
// default one gets DefaultRelayDir-NAME, so that streams started side by
// side from one directory do not share a relay log (its lock would stop
// the second).
const DefaultRelayDir = "paraply-relay"

// relayDir is the relay log's directory for c's stream.
func (c Config) relayDir() string {
	if c.RelayDir == DefaultRelayDir && c.Name != "" && c.Name != checkpoint.DefaultStream {
		return DefaultRelayDir + "-" + c.Name
	}
	return c.RelayDir
}

// AutoWorkersPool is the pool --workers auto chooses from.
const AutoWorkersPool = 16

// Default returns the defaults: safe (commit order preserved, writeset
// dependencies), and sized for a small machine.
func Default() Config {
	return Config{
		Mode:          deptrack.WritesetMode,
		PreserveOrder: true,
		RelayDir:      DefaultRelayDir,
		RelayMaxBytes: relaylog.DefaultMaxBytes,
		ServerID:      4141,
		BatchTxns:     512,
		Apply:         applier.AutoPath,
		PieceBytes:    DefaultPieceBytes,
		Window:        4096,
		Heartbeat:     time.Second,
		ConnectWait:   30 * time.Second,
		Name:          checkpoint.DefaultStream,
	}
}

// Validate reports the first problem with c.
func (c Config) Validate() error {
	switch {
	case c.Source.Host == "":
		return errors.New("--source is required")
	case c.Target.Host == "":
		return errors.New("--target is required")
	case c.Workers < 0 || c.Workers > 256:
		return errors.New("--workers must be auto or between 1 and 256")
	case c.RelayDir == "":
		return errors.New("--relay-dir is required")
	case c.ServerID == 0:
		return errors.New("--server-id must not be 0")
	case c.BatchTxns < 1:
		return errors.New("--batch-max-txns must be at least 1")
	case c.PieceBytes < 64<<10:
		return errors.New("--large-txn-piece must be at least 64KiB")
	case c.Delay < 0:
		return errors.New("--delay must not be negative")
	case c.PreserveGTIDs && !c.PreserveOrder:
		return errors.New("--preserve-gtids needs --preserve-commit-order: the target's binlog must have the source's GTIDs in the source's order")
	case c.HeartbeatInterval < 0:
		return errors.New("--heartbeat-interval must not be negative")
	}
	if c.StartGTID != StartCurrent {
		if err := binlog.CheckPosition(c.StartGTID); err != nil {
			return fmt.Errorf("--start-gtid: %w", err)
		}
	}
	if err := binlog.CheckPosition(c.UntilGTID); err != nil {
		return fmt.Errorf("--until-gtid: %w", err)
	}
	if c.HeartbeatTable != "" {
		return lag.Heartbeat{Table: c.HeartbeatTable}.Validate()
	}
	return nil
}

// Auto reports --workers auto.
// logger is Logger, or one that discards, with the stream's name on
// every line but the default stream's.
func (c Config) logger() *slog.Logger {
	l := c.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	if c.Name != "" && c.Name != checkpoint.DefaultStream {
		l = l.With("stream", c.Name)
	}
	return l
}

// Auto says the worker count is found at run time (--workers auto).
func (c Config) Auto() bool { return c.Workers == 0 }

// Pool is the number of worker sessions.
func (c Config) Pool() int {
	if c.Auto() {
		return AutoWorkersPool
	}
	return c.Workers
}

// batchTxns is how many source transactions a target transaction holds
// at most: one per GTID when the target keeps the source's GTIDs, since a
// target transaction is logged under one GTID.
func (c Config) batchTxns() int {
	if c.PreserveGTIDs {
		return 1
	}
	return c.BatchTxns
}

// heartbeatInterval is the heartbeat writer's interval, 0 when there is
// none.
func (c Config) heartbeatInterval() time.Duration {
	switch {
	case c.HeartbeatTable == "":
		return 0
	case c.HeartbeatInterval > 0:
		return c.HeartbeatInterval
	}
	return 100 * time.Millisecond
}
