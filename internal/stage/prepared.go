package stage

import "github.com/paraply/paraply/internal/deptrack"

// Prepared is a transaction read from the relay log, decoded, with its
// dependencies computed, on its way to the coordinator.
type Prepared struct {
	Txn  *Txn
	Deps deptrack.Deps
	// Resume is the source position after this transaction.
	Resume string
	// Skip is set when the target already has it (a restart after a crash).
	Skip bool
	// Hold is set for an XA PREPARE: nothing to apply at its place in the
	// stream (its rows are applied with its XA COMMIT, Txn.Also), but the
	// checkpoint must not pass it until then.
	Hold bool
	// Releases is the Seq of the XA PREPARE whose hold this transaction
	// (its XA COMMIT or ROLLBACK) ends once committed; 0 if none.
	Releases uint64
	// Conflicts are the keys an earlier transaction wrote, with their
	// table and writer (writeset modes): the coordinator counts those
	// whose writer is still running as hot.
	Conflicts []Conflict
}

// Conflict is one key of a transaction that an earlier transaction wrote:
// the key's table, and that writer.
type Conflict struct {
	Table  string
	Writer uint64
}
