package prepare

import (
	"fmt"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/stage"
)

// settleXA pairs the halves of an XA transaction. An XA PREPARE is held
// (the source has not committed it); its XA COMMIT takes its rows, tables
// and raw events, so that one target transaction applies them and records
// both GTIDs; an XA ROLLBACK records both and applies nothing. A held
// prepare stays in memory until then.
func (p *Preparer) settleXA(pr *stage.Prepared) error {
	it := pr.Txn
	switch it.Txn.XA {
	case binlog.XAPrepare:
		pr.Hold = true
		p.prepared[it.Txn.XID] = it
	case binlog.XACommit, binlog.XARollback:
		held := p.prepared[it.Txn.XID]
		if held == nil {
			return &stage.ConflictError{GTID: it.GTID, What: fmt.Sprintf("%s %s: its XA PREPARE was not read (it comes before where replication started)", it.Txn.XA, it.Txn.XID)}
		}
		delete(p.prepared, it.Txn.XID)
		pr.Releases = held.Seq
		it.Also = []string{held.GTID}
		if it.Txn.XA == binlog.XACommit {
			merged := *it.Txn
			merged.Rows, merged.Statements, merged.StatementDML = held.Txn.Rows, held.Txn.Statements, held.Txn.StatementDML
			merged.Large, merged.LargeRows, merged.LargeTables, merged.LargeTableRows = held.Txn.Large, held.Txn.LargeRows, held.Txn.LargeTables, held.Txn.LargeTableRows
			it.Txn, it.Raw, it.Tables, it.Large = &merged, held.Raw, held.Tables, held.Large
			it.Bytes += held.Bytes
		}
	}
	return nil
}
