package applier

import (
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// sqlTables are the SQL views of the tables t writes.
func sqlTables(t *stage.Txn) []*sqlgen.Table {
	if t.Large != nil {
		return t.Large.Tables
	}
	return t.Tables
}

// hasStatements reports whether work holds statement-format DML.
func hasStatements(work *stage.Work) bool {
	for _, t := range work.Txns {
		if t.Txn.StatementDML {
			return true
		}
	}
	return false
}
