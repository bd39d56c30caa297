package schema

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// A column's DEFAULT or generation expression may call CONNECTION_ID()
// (MariaDB allows both; a CHECK it refuses). A statement that fills such a
// column reads the connection id of the session that runs it, which a
// replica must then set to the source's (pseudo_thread_id). The catalog
// marks such columns so that the applier can leave pseudo_thread_id alone
// where nothing reads it.

// ReadsConnectionID reports whether a column's default or generation
// expression calls CONNECTION_ID().
func (t *Table) ReadsConnectionID() bool {
	for i := range t.Columns {
		if t.Columns[i].ConnectionID {
			return true
		}
	}
	return false
}

// callsConnectionID reports whether expression e calls CONNECTION_ID().
func callsConnectionID(e ast.ExprNode) bool {
	if e == nil {
		return false
	}
	var v connectionIDFinder
	e.Accept(&v)
	return v.found
}

// connectionIDFinder is the ast.Visitor of callsConnectionID.
type connectionIDFinder struct{ found bool }

func (v *connectionIDFinder) Enter(n ast.Node) (ast.Node, bool) {
	if f, ok := n.(*ast.FuncCallExpr); ok && f.FnName.L == ast.ConnectionID {
		v.found = true
	}
	return n, v.found
}

func (v *connectionIDFinder) Leave(n ast.Node) (ast.Node, bool) { return n, !v.found }
