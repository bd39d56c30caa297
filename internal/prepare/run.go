package prepare

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/retry"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// Run reads from src and sends to out until the end of the run, ctx is
// done or an error. The end of a run flows downstream with the data: at
// the end of src (io.EOF: binlog files, all read) or at Until, Run closes
// out and returns nil, and the coordinator, its input closed, finishes
// what it holds. On ctx or an error, out stays open.
func (p *Preparer) Run(ctx context.Context, src EntrySource, out chan<- *stage.Prepared) error {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	p.decoder = binlog.NewDecoder()
	p.decoder.SetPrecision(p.precision)
	p.extractor = deptrack.NewExtractor(p.Catalog)
	p.extractor.Explain = true // names the tables of conflicting keys
	p.tracker = deptrack.NewTracker(p.Mode, p.History)
	p.temps = newTemporaries(p.LostTemporary)
	p.tables = map[tableKey]*sqlgen.Table{}
	p.prepared = map[string]*stage.Txn{}
	passed := p.Start // the source position after the last transaction passed on
	for {
		e, err := src.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			close(out)
			return nil
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		}
		pr, err := p.prepare(e)
		if err != nil {
			return err
		}
		if p.UntilGTID && p.beyond(pr) {
			p.stopBefore(pr, passed)
			close(out)
			return nil
		}
		if !p.hold(ctx, pr) {
			return nil
		}
		select {
		case out <- pr:
			passed = pr.Resume
		case <-ctx.Done():
			return nil
		}
		if p.Until != nil && binlog.Covers(p.Flavor, passed, p.Until) {
			close(out)
			return nil
		}
	}
}

// stopBefore says where --until-gtid stops, before pr: after the last
// transaction passed on. That is Until itself, unless the source
// interleaves several domains and one went past its position before
// another reached its own: MariaDB's replica would go on in the others;
// paraply stops (it commits in one order) and says so.
func (p *Preparer) stopBefore(pr *stage.Prepared, passed string) {
	p.Logger.Info("stopping before a transaction beyond --until-gtid", "gtid", pr.Txn.GTID, "at", passed)
	if !binlog.Covers(p.Flavor, passed, p.Until) {
		p.Logger.Warn("--until-gtid: stopping before a transaction beyond the position in its domain, before another domain reached its own",
			"until", p.Until.String(), "stopped_at", passed)
	}
}

// beyond reports whether pr comes after Until in its domain.
func (p *Preparer) beyond(pr *stage.Prepared) bool {
	if p.Until == nil || pr.Txn.GTID == "" {
		return false
	}
	one, err := binlog.ParseGTIDSet(p.Flavor, pr.Txn.GTID)
	return err == nil && !p.Until.Contain(one)
}

// hold waits until pr's source commit time plus Delay has passed (false
// when ctx ends first). A transaction the target has is not held.
func (p *Preparer) hold(ctx context.Context, pr *stage.Prepared) bool {
	if p.Delay <= 0 || pr.Skip {
		return true
	}
	due := time.UnixMicro(pr.Txn.Txn.Timestamp).Add(p.Delay)
	if p.ClockOffset != nil {
		if off, ok := p.ClockOffset(); ok {
			due = due.Add(off)
		}
	}
	wait := time.Until(due)
	if wait <= 0 {
		return true
	}
	p.mu.Lock()
	p.stats.DelayedUntil = due
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.stats.DelayedUntil = time.Time{}
		p.mu.Unlock()
	}()
	return retry.Sleep(ctx, wait)
}
