package replicate

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/handover"
)

// Handover hands the target over to MariaDB's own replication: it sets the
// target's gtid_slave_pos to exactly what paraply applied (see
// handover.Position) and returns it. It refuses while a paraply process
// works on the target. When paraply committed out of order and stopped
// with transactions applied beyond a gap, it first applies the missing
// ones from cfg.Source (in order, up to the last one applied), or says
// which are missing when cfg has no source.
func Handover(ctx context.Context, cfg Config) (string, error) {
	log := cfg.logger()
	tgt, err := cfg.Target.WithTLS(cfg.TargetTLS).Open(nil)
	if err != nil {
		return "", err
	}
	defer tgt.Close()
	at, err := appliedPosition(ctx, cfg, tgt)
	if err != nil {
		return "", err
	}
	if missing := at.Missing; len(missing) > 0 {
		if cfg.Source.Host == "" {
			return "", fmt.Errorf("paraply committed out of order and stopped with transactions applied after %s, which is not: "+
				"give --source so that handover applies the missing ones first", strings.Join(missing, ", "))
		}
		log.Info("applying the transactions missing before those applied out of order", "missing", missing, "until", at.Last)
		fill := cfg
		fill.fillTo, fill.UntilGTID, fill.UntilCaughtUp, fill.PreserveOrder = at.Last, "", false, true
		if err := Run(ctx, fill); err != nil {
			return "", fmt.Errorf("applying the missing transactions: %w", err)
		}
		if at, err = appliedPosition(ctx, cfg, tgt); err != nil {
			return "", err
		}
		if len(at.Missing) > 0 {
			return "", fmt.Errorf("transactions %s are still missing", strings.Join(at.Missing, ", "))
		}
	}
	pos := at.Pos
	lock, err := checkpoint.LockStream(ctx, tgt, cfg.Name)
	if err != nil {
		return "", fmt.Errorf("target %s: %w", cfg.Target, err)
	}
	defer lock.Release()
	if cfg.Name != "" && cfg.Name != checkpoint.DefaultStream {
		// The other domains are other connections' (several sources).
		set, paused, err := handover.SetStreamPos(ctx, tgt, pos)
		if len(paused) > 0 {
			log.Info("paused the target's running replication connections while gtid_slave_pos changed (the server allows it only then), and started them again", "connections", paused)
		}
		if err != nil {
			return "", fmt.Errorf("target %s: %w", cfg.Target, err)
		}
		log.Info("the target's gtid_slave_pos holds what the stream applied in its domains", "gtid_slave_pos", set)
		return pos, nil
	}
	if err := handover.SetSlavePos(ctx, tgt, pos); err != nil {
		return "", fmt.Errorf("target %s: %w", cfg.Target, err)
	}
	log.Info("the target's gtid_slave_pos is what paraply applied", "gtid_slave_pos", pos)
	return pos, nil
}

// appliedPosition reads what paraply applied on the target, under the
// target's lock (see handover.Position).
func appliedPosition(ctx context.Context, cfg Config, tgt *sql.DB) (handover.Applied, error) {
	lock, err := checkpoint.LockStream(ctx, tgt, cfg.Name)
	if err != nil {
		return handover.Applied{}, fmt.Errorf("target %s: %w", cfg.Target, err)
	}
	defer lock.Release()
	state, _, err := loadCheckpoint(ctx, checkpoint.NewStreamStore(tgt, checkpoint.Replicate, cfg.Name), cfg.logger())
	if err != nil {
		return handover.Applied{}, fmt.Errorf("target %s: %w", cfg.Target, err)
	}
	native, err := handover.ReadNative(ctx, tgt)
	if err != nil {
		return handover.Applied{}, err
	}
	if native = native.ForStream(cfg.Name, handover.Domains(state.Position)); len(native.Running) > 0 {
		return handover.Applied{}, fmt.Errorf("%w: connection %q", handover.ErrNativeRunning, native.Running[0])
	}
	return handover.Position(state.Position, state.Applied)
}
