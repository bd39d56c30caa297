package replicate

import (
	"context"
	"maps"

	"github.com/paraply/paraply/internal/checkpoint"
)

// noteWritten records, in the stream's bookkeeping, the tables it has
// started to write since the last save, and warns about those another
// stream on the target writes too: allowed, as on MariaDB's multi-source
// replica, but the operator's to decide. It runs in the saver, so that a
// target that does not answer is retried with the checkpoint.
func (r *Replica) noteWritten(ctx context.Context, store *checkpoint.Store) error {
	r.mu.Lock()
	prep := r.prep
	r.mu.Unlock()
	if prep == nil {
		return nil
	}
	for _, t := range prep.TakeWritten() {
		r.unrecorded = append(r.unrecorded, checkpoint.Object{Schema: t.Schema, Table: t.Name})
	}
	if len(r.unrecorded) == 0 {
		return nil
	}
	if err := store.RecordWritten(ctx, r.unrecorded); err != nil {
		return err
	}
	shared, err := store.SharedWith(ctx, r.unrecorded)
	if err != nil {
		return err
	}
	r.unrecorded = r.unrecorded[:0]
	for t, others := range shared {
		attrs := []any{"table", t.Schema + "." + t.Table, "other_streams", others}
		if store.Stream() == checkpoint.DefaultStream {
			// The logger names every stream but the default one.
			attrs = append(attrs, "stream", store.Stream())
		}
		r.log.Warn("another stream on the target writes this table too: the two sources' changes mix there (allowed, as on MariaDB's multi-source replica; make sure it is meant)", attrs...)
	}
	if len(shared) > 0 {
		r.mu.Lock()
		if r.shared == nil {
			r.shared = map[checkpoint.Object][]string{}
		}
		maps.Copy(r.shared, shared)
		r.mu.Unlock()
	}
	return nil
}
