package verify

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/checkpoint"
)

// A target that follows several sources (replicate --name) holds each
// source's tables beside the others'. Verifying one stream compares what
// that stream writes: its source's tables under its rules, as always, and
// of the target's tables that no source table goes to (which would
// otherwise be "missing on source") only those that are not another
// stream's. A target table is another stream's when the target holds other
// streams' bookkeeping and either its database is none of this source's
// databases (as --rewrite-db names them on the target), or another stream
// has applied rows to it (checkpoint.Writers) and this one has not. A
// target with no other stream's bookkeeping keeps every table: a database
// only the target has is then missing on the source, as before streams.

// streamScope tells which of the target's tables are other streams'.
type streamScope struct {
	self string
	// others are the target's other streams, sorted; without them every
	// table is this stream's.
	others []string
	// sourceDBs are the target names of the source's databases.
	sourceDBs map[string]bool
	// writers are the streams that applied rows to each target table.
	writers map[checkpoint.Object][]string
}

// loadStreamScope reads the target's streams and, if it holds others than
// opts.Stream, the source's databases and what each stream wrote. A named
// stream the target does not hold is an error: --name is mistyped, or
// the account cannot see the stream's bookkeeping.
func loadStreamScope(ctx context.Context, opts *Options, m mapping) (streamScope, error) {
	sc := streamScope{self: opts.Stream}
	names, err := checkpoint.StreamNames(ctx, opts.Target)
	if err != nil {
		return sc, fmt.Errorf("verify: %s: %w", opts.TargetName, err)
	}
	found := false
	for _, n := range names {
		if n == sc.self {
			found = true
		} else {
			sc.others = append(sc.others, n)
		}
	}
	if !found && sc.self != checkpoint.DefaultStream {
		return sc, fmt.Errorf("verify: %s holds no stream %s (database %s; it holds: %s): give --name as replicate was given it, "+
			"and SELECT on %s to the account", opts.TargetName, sc.self, checkpoint.SchemaOf(sc.self), orNone(strings.Join(names, ", ")), checkpoint.SchemaOf(sc.self))
	}
	if len(sc.others) == 0 {
		return sc, nil
	}
	dbs, err := sourceDatabases(ctx, opts.Source)
	if err != nil {
		return sc, fmt.Errorf("verify: %s: %w", opts.SourceName, err)
	}
	sc.sourceDBs = map[string]bool{}
	for _, db := range m.targetSchemas(dbs) {
		sc.sourceDBs[db] = true
	}
	if sc.writers, err = checkpoint.Writers(ctx, opts.Target); err != nil {
		return sc, fmt.Errorf("verify: %s: %w", opts.TargetName, err)
	}
	return sc, nil
}

// sourceDatabases lists the source's databases but the server's own and
// paraply's bookkeeping.
func sourceDatabases(ctx context.Context, db *sql.DB) ([]string, error) {
	var out []string
	err := query(ctx, db, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA", nil, func(r *sql.Rows) error {
		var name string
		if err := r.Scan(&name); err != nil {
			return err
		}
		if !slices.Contains(excludedSchemas, name) && !checkpoint.IsBookkeeping(name) {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	return out, nil
}

// othersTable reports whether target table n is another stream's.
func (sc streamScope) othersTable(n TableName) bool {
	if len(sc.others) == 0 {
		return false
	}
	if !sc.sourceDBs[n.Schema] {
		return true
	}
	ws := sc.writers[checkpoint.Object{Schema: n.Schema, Table: n.Name}]
	return len(ws) > 0 && !slices.Contains(ws, sc.self)
}

// leaveOut removes from tgt the tables that no source table m includes
// goes to and that are another stream's, and returns them, sorted.
func (sc streamScope) leaveOut(m mapping, src, tgt catalog) []TableName {
	if len(sc.others) == 0 {
		return nil
	}
	written := map[TableName]bool{}
	for n := range src {
		if m.included(n) {
			written[m.target(n)] = true
		}
	}
	var out []TableName
	for n := range tgt {
		if !written[n] && sc.othersTable(n) {
			out = append(out, n)
			delete(tgt, n)
		}
	}
	slices.SortFunc(out, TableName.compare)
	return out
}
