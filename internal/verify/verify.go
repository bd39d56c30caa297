package verify

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// Run compares the tables of opts.Source and opts.Target and reports how
// they differ. A table that could not be compared (a query failed) is
// reported with StatusError and does not stop the others; Run itself fails
// only if the tables cannot be listed or ctx ends.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	began := time.Now()
	sc := scope{schemas: opts.Schemas}
	for _, t := range opts.Tables {
		if !slices.Contains(sc.schemas, t.Schema) {
			sc.schemas = append(sc.schemas, t.Schema)
		}
	}
	var srcCat, tgtCat catalog
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if srcCat, err = loadCatalog(gctx, opts.Source, sc, true); err != nil {
			err = fmt.Errorf("verify: %s: %w", opts.SourceName, err)
		}
		return err
	})
	g.Go(func() (err error) {
		if tgtCat, err = loadCatalog(gctx, opts.Target, sc, false); err != nil {
			err = fmt.Errorf("verify: %s: %w", opts.TargetName, err)
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}

	names := tableNames(opts.Tables, srcCat, tgtCat)
	rep := &Report{Source: opts.SourceName, Target: opts.TargetName, ChunkSize: opts.ChunkSize, Tables: make([]TableReport, len(names))}
	// A failing table is a result, not a reason to stop the others, so
	// the pool is a plain Group used for its limit: its functions return
	// nil, and only ctx cancels them.
	var pool errgroup.Group
	pool.SetLimit(opts.Parallel)
	for i, n := range names {
		tr := &rep.Tables[i]
		tr.TableName = n
		src, tgt := srcCat[n], tgtCat[n]
		switch {
		case src == nil && tgt == nil:
			tr.Status, tr.Error = StatusError, "no such base table on source or target"
		case src == nil:
			tr.Status, tr.Problem = StatusDifferent, ProblemMissingOnSource
		case tgt == nil:
			tr.Status, tr.Problem = StatusDifferent, ProblemMissingOnTarget
		default:
			if diffs := compareColumns(src, tgt); diffs != nil {
				tr.Status, tr.Problem, tr.ColumnDiffs = StatusDifferent, ProblemColumns, diffs
				continue
			}
			pool.Go(func() error {
				checkTable(ctx, &opts, src, tr)
				return nil
			})
		}
	}
	_ = pool.Wait() // the functions return nil
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Seconds = time.Since(began).Seconds()
	rep.summarize()
	return rep, nil
}

// tableNames returns the tables to report on, sorted: the requested ones,
// or every table of either catalog.
func tableNames(requested []TableName, src, tgt catalog) []TableName {
	var names []TableName
	add := func(n TableName) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(requested) > 0 {
		for _, n := range requested {
			add(n)
		}
	} else {
		for n := range src {
			names = append(names, n)
		}
		for n := range tgt {
			if src[n] == nil {
				names = append(names, n)
			}
		}
	}
	slices.SortFunc(names, TableName.compare)
	return names
}
