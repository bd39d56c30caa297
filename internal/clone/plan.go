package clone

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/verify"
)

// copyAll runs the copy: opens the snapshot, creates what a first run
// creates or settles what a killed run left, and copies the rows.
func (c *Cloner) copyAll(ctx context.Context, st *started, state *checkpoint.CloneState) (Result, error) {
	c.setPhase("opening the snapshot")
	snap, err := openSnapshot(ctx, st.src, c.cfg.Readers)
	if err != nil {
		return Result{}, err
	}
	defer snap.close()
	c.mu.Lock()
	c.position, c.blocked = snap.Position, snap.Blocked
	c.mu.Unlock()
	c.log.Info("source snapshot opened", "position", snap.Position, "readers", len(snap.sessions),
		"commits_blocked_ms", float64(snap.Blocked.Microseconds())/1000)
	cat, err := loadCatalog(ctx, st.src, &c.cfg.Stream.Filter)
	if err != nil {
		return Result{}, err
	}
	if err := c.checkSource(ctx, st.src, cat); err != nil {
		return Result{}, err
	}
	res := Result{Position: snap.Position, Runs: 1}
	var runs []*tableRun
	if state.Run == nil {
		runs, err = c.first(ctx, st, snap, cat)
	} else {
		res.Runs = state.Run.Runs + 1
		c.log.Info("resuming the clone", "run", res.Runs, "last_position", state.Run.Position)
		runs, err = c.resume(ctx, st, snap, cat, state)
	}
	if err != nil {
		return res, err
	}
	if err := c.createObjects(ctx, st, cat); err != nil {
		return res, err
	}
	c.mu.Lock()
	c.runs = runs
	c.mu.Unlock()
	return res, c.copyRows(ctx, st, snap, cat, runs)
}

// first checks the target and creates the databases and the tables.
func (c *Cloner) first(ctx context.Context, st *started, snap *snapshot, cat *catalog) ([]*tableRun, error) {
	if err := c.checkTarget(ctx, st, cat); err != nil {
		return nil, err
	}
	if err := st.clones.BeginRun(ctx, snap.Position); err != nil {
		return nil, err
	}
	if err := c.createDatabases(ctx, st, cat); err != nil {
		return nil, err
	}
	var runs []*tableRun
	for _, t := range cat.tables {
		tr, err := c.create(ctx, st, snap, t)
		if err != nil {
			return nil, err
		}
		if tr != nil {
			tr.holes = []span{{}}
			runs = append(runs, tr)
		}
	}
	return runs, nil
}

// checkTarget refuses a target that holds a table the clone would copy,
// or drops it with Config.Overwrite.
func (c *Cloner) checkTarget(ctx context.Context, st *started, cat *catalog) error {
	there, err := targetTables(ctx, st.tgt)
	if err != nil {
		return err
	}
	var found []string
	for _, t := range cat.tables {
		if there[t.dst] {
			found = append(found, t.dst.String())
		}
	}
	if len(found) == 0 {
		return nil
	}
	if !c.cfg.Overwrite {
		shown := found
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("%d more", len(found)-5))
		}
		return fmt.Errorf("%w (target %s): %s; drop them, or give --overwrite-tables to have clone drop and copy them",
			ErrTablesExist, st.target, strings.Join(shown, ", "))
	}
	for _, t := range cat.tables {
		if there[t.dst] {
			c.log.Warn("--overwrite-tables: dropping the target's table, to copy it", "table", t.dst.String())
			if _, err := st.tgt.ExecContext(ctx, "DROP TABLE "+quoteTable(t.dst.Schema, t.dst.Name)); err != nil {
				return fmt.Errorf("target %s: dropping %s: %w", st.target, t.dst, err)
			}
		}
	}
	return nil
}

// targetTables lists the target's tables and views.
func targetTables(ctx context.Context, tgt *sql.DB) (map[verify.TableName]bool, error) {
	out := map[verify.TableName]bool{}
	err := each(ctx, tgt, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE "+schemaCond("TABLE_SCHEMA"), func(r *sql.Rows) error {
		var n verify.TableName
		err := r.Scan(&n.Schema, &n.Name)
		out[n] = true
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("target: listing its tables: %w", err)
	}
	return out, nil
}

// createDatabases creates the databases the clone copies on the target,
// with their character set, unless they are there.
func (c *Cloner) createDatabases(ctx context.Context, st *started, cat *catalog) error {
	return withConns(ctx, st.src, st.tgt, func(src, tgt *sql.Conn) error {
		for _, db := range cat.databases {
			row, err := show(ctx, src, "SHOW CREATE DATABASE "+quote(db))
			if err != nil {
				return fmt.Errorf("database %s: SHOW CREATE DATABASE: %w", db, err)
			}
			q := row["Create Database"]
			if rest, ok := strings.CutPrefix(q, "CREATE DATABASE "); ok {
				q = "CREATE DATABASE IF NOT EXISTS " + rest
			}
			d, err := renamed(ddl{what: "database " + db, schema: "", query: q}, &c.cfg.Stream.Filter)
			if err != nil {
				return err
			}
			if _, err := tgt.ExecContext(ctx, d.query); err != nil {
				return fmt.Errorf("creating database %s on the target: %w; the stream copies every database its filters let through: "+
					"grant the target account CREATE there, or leave it out (include = DB.%% for each database granted, or exclude = %s.%%)", db, err, db)
			}
		}
		return nil
	})
}

// create creates table t on the target as the source shows it now,
// recording it first (state creating: a run killed before the table is
// recorded as copying drops it and creates it again). A sequence is
// created with its next value and is done; other tables return their
// tableRun, to copy.
func (c *Cloner) create(ctx context.Context, st *started, snap *snapshot, t *table) (*tableRun, error) {
	tr, err := c.prepare(ctx, st, t)
	if err != nil {
		return nil, err
	}
	if err := st.clones.SaveTable(ctx, checkpoint.CloneTable{Schema: t.src.Schema, Name: t.src.Name, State: checkpoint.CloneCreating, Definition: tr.def.shown}); err != nil {
		return nil, err
	}
	err = withConns(ctx, st.tgt, st.tgt, func(tgt, _ *sql.Conn) error {
		if _, err := tgt.ExecContext(ctx, "DROP TABLE IF EXISTS "+quoteTable(t.dst.Schema, t.dst.Name)); err != nil {
			return fmt.Errorf("table %s: dropping what a run killed while it created it left: %w", t, err)
		}
		return tr.def.create.run(ctx, tgt)
	})
	if err != nil {
		return nil, err
	}
	if t.typ == sequence {
		if err := c.setSequence(ctx, st, snap, t); err != nil {
			return nil, err
		}
		return nil, st.clones.SetState(ctx, t.src.Schema, t.src.Name, checkpoint.CloneDone)
	}
	return tr, st.clones.SetState(ctx, t.src.Schema, t.src.Name, checkpoint.CloneCopying)
}

// prepare reads t's definition and makes its tableRun.
func (c *Cloner) prepare(ctx context.Context, st *started, t *table) (*tableRun, error) {
	keep := ""
	var keys *verify.Keys
	if t.info != nil {
		var err error
		if keys, err = verify.NewKeys(t.info); err != nil {
			return nil, fmt.Errorf("table %s: %w", t, err)
		}
		if keys.Keyed() {
			keep = keys.Name()
		}
	}
	conn, err := st.src.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	def, err := readDefinition(ctx, conn, t, keep, c.cfg.DeferIndexes, &c.cfg.Stream.Filter)
	if err != nil {
		return nil, err
	}
	if t.typ == sequence {
		return &tableRun{t: t, def: def}, nil
	}
	tr, err := newTableRun(t, def, keys)
	if err == nil && c.loads {
		tr.loadData()
	}
	return tr, err
}

// setSequence gives sequence t on the target the next value it has in the
// snapshot, as mariadb-dump does with SETVAL.
func (c *Cloner) setSequence(ctx context.Context, st *started, snap *snapshot, t *table) error {
	var next, round int64
	if err := snap.sessions[0].QueryRowContext(ctx, "SELECT next_not_cached_value, cycle_count FROM "+quoteTable(t.src.Schema, t.src.Name)).Scan(&next, &round); err != nil {
		return fmt.Errorf("sequence %s: reading it on the source: %w", t, err)
	}
	if _, err := st.tgt.ExecContext(ctx, fmt.Sprintf("SELECT SETVAL(%s, %d, 0, %d)", quoteTable(t.dst.Schema, t.dst.Name), next, round)); err != nil {
		return fmt.Errorf("sequence %s: setting its next value on the target: %w", t, err)
	}
	return nil
}

// createObjects creates the routines, views and events on the target,
// each CREATE OR REPLACE (a run again creates them again). A view that
// needs a view created after it is tried again once the others are.
func (c *Cloner) createObjects(ctx context.Context, st *started, cat *catalog) error {
	c.setPhase("creating routines, views and events")
	return withConns(ctx, st.src, st.tgt, func(src, tgt *sql.Conn) error {
		var defs []ddl
		for _, o := range cat.objects {
			d, err := objectDefinition(ctx, src, o, &c.cfg.Stream.Filter)
			if err != nil {
				return err
			}
			defs = append(defs, d)
		}
		for len(defs) > 0 {
			var failed []ddl
			var last error
			for _, d := range defs {
				if err := d.run(ctx, tgt); err != nil {
					failed, last = append(failed, d), err
				}
			}
			if len(failed) == len(defs) {
				return last
			}
			defs = failed
		}
		return nil
	})
}

// biggestFirst orders tables by their estimated size, largest first, so
// that the longest copies start first.
func biggestFirst(runs []*tableRun) {
	slices.SortStableFunc(runs, func(a, b *tableRun) int {
		switch {
		case a.t.estBytes > b.t.estBytes:
			return -1
		case a.t.estBytes < b.t.estBytes:
			return 1
		}
		return 0
	})
}
