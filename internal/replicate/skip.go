package replicate

import (
	"context"
	"fmt"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
)

// Skip records each of gtids in the target's checkpoint as applied without
// applying it, as MariaDB's sql_slave_skip_counter steps over the event
// group that stops its replica: the next run steps over it. It returns the
// GTIDs it recorded, and those the target already has (left alone). It
// refuses while a paraply process works on the target.
func Skip(ctx context.Context, cfg Config, gtids []string) (skipped, had []string, err error) {
	parsed := make([]binlog.GTID, len(gtids))
	for i, s := range gtids {
		if parsed[i], err = binlog.ParseGTID(s); err != nil {
			return nil, nil, fmt.Errorf("%q: %w", s, err)
		}
	}
	tgt, err := cfg.Target.WithTLS(cfg.TargetTLS).Open(nil)
	if err != nil {
		return nil, nil, err
	}
	defer tgt.Close()
	lock, err := checkpoint.LockStream(ctx, tgt, cfg.Name)
	if err != nil {
		return nil, nil, fmt.Errorf("target %s: %w", cfg.Target, cfg.Target.WithTLS(cfg.TargetTLS).ExplainDenied("target", err))
	}
	defer lock.Release()
	store := checkpoint.NewStreamStore(tgt, checkpoint.Replicate, cfg.Name)
	state, _, err := loadCheckpoint(ctx, store, cfg.logger())
	if err != nil {
		return nil, nil, fmt.Errorf("target %s: %w", cfg.Target, err)
	}
	for _, g := range parsed {
		s := g.String()
		one, err := binlog.ParseGTIDSet(g.Flavor, s)
		if err != nil {
			return nil, nil, fmt.Errorf("%q: %w", s, err)
		}
		if state.Applied[s] || state.Position != "" && binlog.Covers(g.Flavor, state.Position, one) {
			had = append(had, s)
			continue
		}
		skipped = append(skipped, s)
	}
	if err := store.Skip(ctx, skipped); err != nil {
		return nil, nil, fmt.Errorf("target %s: %w", cfg.Target, err)
	}
	return skipped, had, nil
}
