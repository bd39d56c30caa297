package clone

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/verify"
)

// finisher gives a table what it gets once its rows are in: its deferred
// indexes, then its triggers (created after the rows, so that the copy
// does not fire them; a replica does not fire them for rows events either).
type finisher struct {
	src, tgt *sql.DB // their usual sessions (utf8mb4), not the copy's
	store    *checkpoint.CloneStore
	rules    *filter.Rules
	triggers map[verify.TableName][]object
	log      func(msg string, args ...any)
}

// finish finishes tr's table and records it done.
func (f *finisher) finish(ctx context.Context, tr *tableRun) error {
	t := tr.t
	if err := f.store.SetState(ctx, t.src.Schema, t.src.Name, checkpoint.CloneRows); err != nil {
		return err
	}
	if len(tr.def.indexes) > 0 {
		began := time.Now()
		if err := f.addIndexes(ctx, t, tr.def.indexes); err != nil {
			return err
		}
		f.log("secondary indexes added", "table", t.String(), "indexes", len(tr.def.indexes), "seconds", time.Since(began).Seconds())
	}
	if err := f.createTriggers(ctx, t); err != nil {
		return err
	}
	if err := f.store.SetState(ctx, t.src.Schema, t.src.Name, checkpoint.CloneDone); err != nil {
		return err
	}
	tr.finish()
	return nil
}

// indexName reads an index's name from its definition (splitIndexes').
var indexName = regexp.MustCompile("KEY `((?:[^`]|``)*)`")

// addIndexes adds the indexes t lacks of those deferred: a run killed
// during the ALTER may have added them already.
func (f *finisher) addIndexes(ctx context.Context, t *table, indexes []string) error {
	have := map[string]bool{}
	err := schema.EachRow(ctx, f.tgt, "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
		[]any{t.dst.Schema, t.dst.Name}, func(r *sql.Rows) error {
			var n string
			err := r.Scan(&n)
			have[n] = true
			return err
		})
	if err != nil {
		return fmt.Errorf("table %s: reading its indexes on the target: %w", t, err)
	}
	var missing []string
	for _, ix := range indexes {
		if m := indexName.FindStringSubmatch(ix); m == nil || !have[strings.ReplaceAll(m[1], "``", "`")] {
			missing = append(missing, ix)
		}
	}
	for _, q := range addIndexes(t.dst.Schema, t.dst.Name, missing) {
		if _, err := f.tgt.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("table %s: adding its secondary indexes on the target: %s: %w", t, q, err)
		}
	}
	return nil
}

// createTriggers creates t's triggers on the target, in their order.
func (f *finisher) createTriggers(ctx context.Context, t *table) error {
	trigs := f.triggers[t.src]
	if len(trigs) == 0 {
		return nil
	}
	return withConns(ctx, f.src, f.tgt, func(src, tgt *sql.Conn) error {
		for _, o := range trigs {
			d, err := objectDefinition(ctx, src, o, f.rules)
			if err != nil {
				return err
			}
			if err := d.run(ctx, tgt); err != nil {
				return err
			}
		}
		return nil
	})
}

// withConns runs fn with a session of each pool, closed after: a session
// whose settings fn changes (ddl.run) goes back to no pool.
func withConns(ctx context.Context, a, b *sql.DB, fn func(a, b *sql.Conn) error) error {
	ca, err := a.Conn(ctx)
	if err != nil {
		return err
	}
	defer discard(ca)
	cb, err := b.Conn(ctx)
	if err != nil {
		return err
	}
	defer discard(cb)
	return fn(ca, cb)
}

// discard closes c for good: its session settings must not be reused.
func discard(c *sql.Conn) { endSession(c) }
