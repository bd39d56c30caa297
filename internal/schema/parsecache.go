package schema

import (
	"sync"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// parsedText is one statement as StatementSubjects and StatementWrites
// read it: cleaned of comments, its SET STATEMENT ... FOR prefix
// removed, tokenized and parsed.
type parsedText struct {
	text  string
	toks  []token
	nodes []ast.StmtNode
	err   error
}

// statementRead is what StatementSubjects and StatementWrites say of one
// statement in one current database. Callers only read it.
type statementRead struct {
	schema, query string
	subjects      Subjects
	subjectsErr   error
	writes        Writes
	writesOK      bool
}

// recentReads keeps the last few statements read: the preparer reads
// each statement of a statement-format transaction more than once (the
// filters, whether it must commit alone, which rows it writes), and
// parsing it is most of what that costs (a sysbench write_only
// transaction's four statements: 538 µs read three times, 62 µs read
// once here). Results, not ASTs, are kept: walking an AST writes to it.
var recentReads struct {
	mu    sync.Mutex
	reads [8]*statementRead
	next  int
}

// readStatement returns what StatementSubjects and StatementWrites say of
// query in currentSchema, from recentReads if it is there, else from its
// shape (see shapeCache).
func readStatement(currentSchema, query string) *statementRead {
	rr := &recentReads
	rr.mu.Lock()
	for _, r := range rr.reads {
		if r != nil && r.query == query && r.schema == currentSchema {
			rr.mu.Unlock()
			return r
		}
	}
	rr.mu.Unlock()
	r := shapes.read(currentSchema, query)
	rr.mu.Lock()
	rr.reads[rr.next] = r
	rr.next = (rr.next + 1) % len(rr.reads)
	rr.mu.Unlock()
	return r
}

// readFull reads query in currentSchema from its text: cleaned, parsed.
func readFull(currentSchema, query string) *statementRead {
	return readParsed(currentSchema, query, parseText(cleanQuery(query)))
}

// parseText tokenizes and parses a cleaned statement, past its SET
// STATEMENT ... FOR prefix.
func parseText(text string) *parsedText {
	p := &parsedText{text: text, toks: tokenize(text)}
	if body, ok := setStatementBody(p.text, p.toks); ok {
		p.text, p.toks = body, tokenize(body)
	}
	p.nodes, p.err = parseSQL(p.text)
	return p
}

// readParsed is what StatementSubjects and StatementWrites say of query,
// parsed as p, in currentSchema.
func readParsed(currentSchema, query string, p *parsedText) *statementRead {
	r := &statementRead{schema: currentSchema, query: query}
	r.subjects, r.subjectsErr = subjectsOf(currentSchema, p)
	r.writes, r.writesOK = writesOf(currentSchema, p)
	return r
}
