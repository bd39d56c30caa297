package clone

import (
	"context"
	"fmt"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/verify"
)

// resume settles what killed runs left and plans this run's copy.
//
// A table a killed run copied whole stands at the position of the run
// that copied it, or, if a run brought it forward since, at the stream's
// checkpoint. It is brought forward to this run's snapshot from the
// source's binlog (forward): replicate, with the tables not copied whole
// left out. A table copied in part keeps its chunks: each is compared
// with the snapshot and the rows that differ are written again (mend),
// and the holes are read. A table whose definition changed since the run
// that created it is copied again from the start, as is one a run was
// creating; a table the source no longer has is dropped from the
// target, and one the catch-up created (the source created it since) is
// taken as copied.
func (c *Cloner) resume(ctx context.Context, st *started, snap *snapshot, cat *catalog, state *checkpoint.CloneState) ([]*tableRun, error) {
	recorded := map[verify.TableName]checkpoint.CloneTable{}
	for _, t := range state.Tables {
		recorded[verify.TableName{Schema: t.Schema, Name: t.Name}] = t
	}
	// The tables whose rows are in but not their indexes or triggers are
	// finished first: the catch-up applies to them.
	if err := c.finishPending(ctx, st, cat, recorded); err != nil {
		return nil, err
	}
	var partial []verify.TableName
	whole := 0
	for _, t := range recorded {
		if t.State == checkpoint.CloneDone {
			whole++
			continue
		}
		partial = append(partial, targetName(t, &c.cfg))
	}
	if whole > 0 {
		if err := c.forward(ctx, st, state.Run.Position, snap.Position, partial); err != nil {
			return nil, err
		}
	}
	if err := st.clones.BeginRun(ctx, snap.Position); err != nil {
		return nil, err
	}
	if err := c.createDatabases(ctx, st, cat); err != nil {
		return nil, err
	}
	there, err := targetTables(ctx, st.tgt)
	if err != nil {
		return nil, err
	}
	onSource := map[verify.TableName]bool{}
	var runs []*tableRun
	for _, t := range cat.tables {
		onSource[t.src] = true
		rec, ok := recorded[t.src]
		tr, err := c.settle(ctx, st, snap, t, rec, ok, there[t.dst], state)
		if err != nil {
			return nil, err
		}
		if tr != nil {
			runs = append(runs, tr)
		}
	}
	for _, rec := range state.Tables {
		n := verify.TableName{Schema: rec.Schema, Name: rec.Name}
		if onSource[n] {
			continue
		}
		if err := c.dropGone(ctx, st, rec); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// targetName is a recorded table's name on the target.
func targetName(t checkpoint.CloneTable, cfg *Config) verify.TableName {
	db, _ := cfg.Stream.Filter.Database(t.Schema)
	return verify.TableName{Schema: db, Name: t.Name}
}

// settle decides what this run does with table t: nothing (copied
// whole), copy its holes, or copy it from the start.
func (c *Cloner) settle(ctx context.Context, st *started, snap *snapshot, t *table, rec checkpoint.CloneTable, recorded, there bool, state *checkpoint.CloneState) (*tableRun, error) {
	switch {
	case recorded && rec.State == checkpoint.CloneDone:
		return nil, nil
	case !recorded && there:
		// Created by the catch-up: the source created it after the run
		// that recorded the others, and its binlog held all of it.
		c.log.Info("a table the source created since the last run came with the catch-up: copied", "table", t.String())
		return nil, st.clones.SaveTable(ctx, checkpoint.CloneTable{Schema: t.src.Schema, Name: t.src.Name, State: checkpoint.CloneDone, Definition: "(created by the catch-up)"})
	case !recorded || rec.State == checkpoint.CloneCreating:
		tr, err := c.create(ctx, st, snap, t)
		if tr != nil {
			tr.holes, tr.clear = []span{{}}, true
		}
		return tr, err
	}
	tr, err := c.prepare(ctx, st, t)
	if err != nil {
		return nil, err
	}
	if tr.def.shown != rec.Definition {
		c.log.Warn("the table's definition changed on the source since the last run (DDL during the clone): copying it again from the start", "table", t.String())
		if err := st.clones.Forget(ctx, t.src.Schema, t.src.Name); err != nil {
			return nil, err
		}
		tr, err := c.create(ctx, st, snap, t)
		if tr != nil {
			tr.holes, tr.clear = []span{{}}, true
		}
		return tr, err
	}
	var segs []checkpoint.CloneSegment
	var chunks []checkpoint.CloneChunk
	for _, s := range state.Segments {
		if s.Schema == t.src.Schema && s.Name == t.src.Name {
			segs = append(segs, s)
			tr.nextSegment = max(tr.nextSegment, s.Segment+1)
		}
	}
	for _, ch := range state.Chunks {
		if ch.Schema == t.src.Schema && ch.Name == t.src.Name {
			chunks = append(chunks, ch)
			tr.rows, tr.bytes, tr.chunks = tr.rows+ch.Rows, tr.bytes+ch.Bytes, tr.chunks+1
		}
	}
	tr.holes, tr.clear = holes(segs, chunks), true
	if len(chunks) > 0 && tr.keys != nil {
		c.setPhase("comparing the chunks of tables copied in part")
		fixed, err := c.mend(ctx, snap.sessions[0], c.mender(st), tr, chunks)
		if err != nil {
			return nil, err
		}
		c.log.Info("a table copied in part: its chunks compared with this run's snapshot, the rows changed since written again",
			"table", t.String(), "chunks", len(chunks), "rows_written", fixed, "holes", len(tr.holes))
	}
	return tr, nil
}

// mender is a writer for mend's transactions.
func (c *Cloner) mender(st *started) *writer {
	return &writer{tgt: st.wdb, maxStatement: maxStatement, maxPacket: 1 << 30}
}

// finishPending finishes the tables whose rows a killed run copied but
// whose indexes or triggers it had not added: from the definition it
// created them with.
func (c *Cloner) finishPending(ctx context.Context, st *started, cat *catalog, recorded map[verify.TableName]checkpoint.CloneTable) error {
	f := c.finisher(st, cat)
	for _, t := range cat.tables {
		rec, ok := recorded[t.src]
		if !ok || rec.State != checkpoint.CloneRows {
			continue
		}
		tr, err := c.prepare(ctx, st, t)
		if err != nil {
			return err
		}
		if keep := tr.keepName(); keep != "" && c.cfg.DeferIndexes {
			_, tr.def.indexes = splitIndexes(rec.Definition, keep)
		}
		if err := f.finish(ctx, tr); err != nil {
			return err
		}
		rec.State = checkpoint.CloneDone
		recorded[t.src] = rec
	}
	return nil
}

// dropGone drops from the target a table the source no longer has, which
// a killed run had not copied whole (the catch-up applied the DROP to
// those it had), and forgets it.
func (c *Cloner) dropGone(ctx context.Context, st *started, rec checkpoint.CloneTable) error {
	n := targetName(rec, &c.cfg)
	if rec.State != checkpoint.CloneDone {
		c.log.Warn("the source no longer has a table the clone was copying: dropping it from the target", "table", n.String())
		if _, err := st.tgt.ExecContext(ctx, "DROP TABLE IF EXISTS "+quoteTable(n.Schema, n.Name)); err != nil {
			return fmt.Errorf("target %s: dropping %s: %w", st.target, n, err)
		}
	}
	return st.clones.Forget(ctx, rec.Schema, rec.Name)
}
