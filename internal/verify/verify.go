package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	m := newMapping(opts.Filter)
	srcScope := scope{schemas: opts.Schemas}
	for _, t := range opts.Tables {
		if !slices.Contains(srcScope.schemas, t.Schema) {
			srcScope.schemas = append(srcScope.schemas, t.Schema)
		}
	}
	// The source's schemas hold their tables on the target under the
	// names --rewrite-db gives them.
	tgtScope := scope{schemas: m.targetSchemas(srcScope.schemas)}
	var srcCat, tgtCat catalog
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if srcCat, err = loadCatalog(gctx, opts.Source, srcScope, true); err != nil {
			err = fmt.Errorf("verify: %s: %w", opts.SourceName, err)
		}
		return err
	})
	g.Go(func() (err error) {
		if tgtCat, err = loadCatalog(gctx, opts.Target, tgtScope, false); err != nil {
			err = fmt.Errorf("verify: %s: %w", opts.TargetName, err)
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	streams, err := loadStreamScope(ctx, &opts, m)
	if err != nil {
		return nil, err
	}

	var leftOut []TableName
	if len(opts.Tables) == 0 { // tables asked for by name are compared whoever writes them
		leftOut = streams.leaveOut(m, srcCat, tgtCat)
	}
	ps := pairs(opts.Tables, m, srcCat, tgtCat)
	shared := merged(ps)
	rep := &Report{Source: opts.SourceName, Target: opts.TargetName, ChunkSize: opts.ChunkSize, Filters: m.flags(),
		Stream: opts.Stream, OtherStreams: streams.others, OtherStreamsTables: leftOut, Tables: make([]TableReport, len(ps))}
	// A failing table is a result, not a reason to stop the others, so
	// the pool is a plain Group used for its limit: its functions return
	// nil, and only ctx cancels them.
	var pool errgroup.Group
	pool.SetLimit(opts.Parallel)
	for i, p := range ps {
		tr := &rep.Tables[i]
		tr.TableName = p.src
		if p.tgt != p.src {
			tr.TargetTable = &p.tgt
		}
		src, tgt := srcCat[p.src], tgtCat[p.tgt]
		switch {
		case shared[p.tgt] != nil:
			// The target table holds the rows of all of them: compared with
			// one, the others' rows would show as extra.
			tr.Status, tr.Error = StatusError, fmt.Sprintf("source tables %s all go to %s", nameList(shared[p.tgt]), p.tgt)
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
				checkTable(ctx, &opts, src, p.tgt, tr)
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

// nameList writes names as a, b and c.
func nameList(names []TableName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = n.String()
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
