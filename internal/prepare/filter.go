package prepare

import (
	"errors"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/stage"
)

// filter applies --include, --exclude and --rewrite-db to a transaction
// just read, before anything else looks at it: the dependency tracker
// sees only the rows and DDL that are applied, the catalog follows only
// the DDL that is, and the SQL path resolves only the tables kept, under
// their new names. What the binlog path sends (it.Raw, and the pieces of
// a large transaction as the worker reads them) is filtered the same way.
// A transaction left out entirely stays, with nothing to apply, so that
// its GTID is recorded as applied and the checkpoint moves past it.
func (p *Preparer) filter(it *stage.Txn) error {
	if p.Filter == nil {
		return nil
	}
	o, err := p.Filter.Txn(it.Txn)
	if err != nil {
		var se *filter.StatementError
		if errors.As(err, &se) {
			// Nothing of it is applied: the operator decides.
			return &stage.ConflictError{GTID: it.GTID, What: se.Error() +
				"; apply on the target what it should do there, if anything, and record its GTID in paraply.applied to step over it"}
		}
		return &stage.ConflictError{GTID: it.GTID, What: "filtering", Err: err}
	}
	p.mu.Lock()
	p.stats.Filtered.Add(o)
	p.mu.Unlock()
	for _, q := range o.Mixed {
		p.Logger.Info("a DDL applied names tables or databases the filters leave out: it runs whole on the target, as on MariaDB's replica",
			"gtid", it.GTID, "statement", binlog.RedactSecrets(q))
	}
	if !o.Changed() && p.SQLOnly {
		// The binlog path goes on: MariaDB writes table maps of tables
		// without rows (a trigger's, a multi-table UPDATE's), which the
		// target's row applier opens, so they must be left out or renamed
		// too.
		return nil
	}
	if it.Large != nil && !it.Txn.Large {
		it.Large = nil // nothing of it is applied: no pieces to read
	}
	if it.Large != nil {
		it.Large.Read = filteredPieces(p.Filter, o, it.Large.Pieces, it.Large.Read)
	}
	// A large transaction's last piece, it.Raw, is read again with the
	// others (Large.Read); the binlog path only takes its format from it.
	// The SQL path never sends it.Raw (nor can Raw read a MySQL source's
	// compressed payload).
	if !p.SQLOnly && (it.Large == nil || o.Whole) {
		raw, err := p.Filter.Raw(o).Piece(it.Raw, true)
		if err != nil {
			return &stage.ConflictError{GTID: it.GTID, What: "filtering its row events", Err: err}
		}
		if it.Large == nil {
			it.Bytes = raw.Bytes()
		}
		it.Raw = raw
	}
	return nil
}

// filteredPieces reads the pieces of a large transaction through a Raw
// filter, a new one at the first piece: a worker that tries again reads
// them from the start.
func filteredPieces(f *filter.Filter, o filter.Outcome, n int, read func(int) (*binlog.RawTxn, error)) func(int) (*binlog.RawTxn, error) {
	var raw *filter.Raw
	return func(i int) (*binlog.RawTxn, error) {
		rt, err := read(i)
		if err != nil {
			return nil, err
		}
		if i == 0 || raw == nil {
			raw = f.Raw(o)
		}
		return raw.Piece(rt, i == n-1)
	}
}
