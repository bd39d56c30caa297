package clone

import (
	"context"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/verify"
)

// forward brings the tables a killed run copied whole from position from,
// where they stand, to position to, this run's snapshot, by replicating
// from the source's binlog what it wrote in between: replicate itself,
// its exactly-once checkpoint in the stream's database, stopping at to
// (--until-gtid), with the tables not copied whole left out (excluded
// by name; their rows are compared and mended in place, see mend).
// The stream's lock is replicate's while it runs.
func (c *Cloner) forward(ctx context.Context, st *started, from, to string, partial []verify.TableName) error {
	cp, err := st.store.Load(ctx)
	if err != nil {
		return fmt.Errorf("target %s: %w", c.cfg.Stream.Target, err)
	}
	if cp.Position == "" {
		if err := st.store.SaveProgress(ctx, from, 0, nil); err != nil {
			return fmt.Errorf("target %s: %w", c.cfg.Stream.Target, err)
		}
	} else {
		from = cp.Position
	}
	if sameGTIDs(from, to) {
		return nil
	}
	cfg := c.cfg.Stream
	cfg.CloneCatchUp, cfg.StartGTID, cfg.UntilGTID, cfg.UntilCaughtUp = true, "", to, false
	cfg.Filter.Exclude = append(append([]filter.Pattern(nil), cfg.Filter.Exclude...), exact(partial)...)
	cfg.Logger = c.cfg.Stream.Logger
	if cfg.Logger != nil {
		cfg.Logger = cfg.Logger.With("component", "clone-catch-up")
	}
	c.log.Info("bringing the tables copied whole forward to this run's snapshot, from the source's binlog",
		"from", from, "to", to, "left_out", len(partial))
	c.setPhase("catching up the tables copied whole")
	st.lock.Release()
	st.lock = nil
	ferr := replicate.New(cfg).Run(ctx)
	if err := st.relock(ctx); err != nil {
		return err
	}
	if ferr == nil {
		// Stopped (a signal), replicate returns nil short of to.
		ferr = ctx.Err()
	}
	if ferr != nil {
		return fmt.Errorf("bringing the tables copied whole forward from %s to %s: %w", from, to, ferr)
	}
	return nil
}

// exact returns patterns that match exactly the target tables names.
func exact(names []verify.TableName) []filter.Pattern {
	out := make([]filter.Pattern, 0, len(names))
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`, `*`, `\*`, `.`, `\.`)
	for _, n := range names {
		p, err := filter.ParsePattern(esc.Replace(n.Schema) + "." + esc.Replace(n.Name))
		if err != nil {
			continue // an escaped name always parses
		}
		out = append(out, p)
	}
	return out
}

// sameGTIDs reports whether two MariaDB GTID positions name the same
// transactions.
func sameGTIDs(a, b string) bool {
	x, err1 := binlog.ParseGTIDSet(binlog.FlavorMariaDB, a)
	y, err2 := binlog.ParseGTIDSet(binlog.FlavorMariaDB, b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

// handOver leaves the stream's checkpoint at position, where the copy
// stands, for replicate to start from: unless a catch-up left it there,
// it is written, and the relay log it names forgotten (whatever relay log
// the directory holds is then set aside by replicate, never applied).
func handOver(ctx context.Context, store *checkpoint.Store, position string) error {
	cp, err := store.Load(ctx)
	if err != nil {
		return err
	}
	if cp.Position != "" && sameGTIDs(cp.Position, position) {
		return nil
	}
	if err := store.SaveProgress(ctx, position, 0, nil); err != nil {
		return err
	}
	if err := store.SaveRelayLog(ctx, ""); err != nil {
		return err
	}
	return store.SaveStart(ctx, position)
}
