package filter

import (
	"errors"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
)

// ddlTxn is a DDL transaction of one statement run in database cur.
func ddlTxn(cur, q string) *binlog.Txn {
	return &binlog.Txn{DDL: true, Statements: []binlog.Statement{{Schema: cur, Query: q, Kind: binlog.ClassifyStatement(q)}}}
}

// TestDDL: a DDL is applied when one of the tables or databases it
// changes is, whole (a DROP TABLE with IF EXISTS when it names tables
// left out, as MariaDB's replica runs it), renamed; else left out.
func TestDDL(t *testing.T) {
	rules := mustRules(t, []string{"app.%", "dst.%"}, []string{"%.tmp_%"}, []string{"src=dst"})
	cases := []struct {
		cur, q string
		want   string // the statement run, "" when left out
		schema string // its default database on the target
		mixed  bool
	}{
		{cur: "app", q: "CREATE TABLE t (id INT)", want: "CREATE TABLE t (id INT)", schema: "app"},
		{cur: "app", q: "CREATE TABLE tmp_1 (id INT)"},
		{cur: "other", q: "CREATE TABLE t (id INT)"},
		{cur: "other", q: "ALTER TABLE app.t ADD COLUMN v INT", want: "ALTER TABLE app.t ADD COLUMN v INT", schema: "other"},
		{cur: "", q: "DROP TABLE app.x, other.y", want: "DROP TABLE IF EXISTS app.x, other.y", mixed: true},
		{cur: "", q: "DROP TABLE other.y, app.x", want: "DROP TABLE IF EXISTS other.y, app.x", mixed: true},
		{cur: "", q: "RENAME TABLE other.a TO other.b"},
		{cur: "", q: "RENAME TABLE app.a TO other.a", want: "RENAME TABLE app.a TO other.a", mixed: true},
		{cur: "", q: "CREATE DATABASE app", want: "CREATE DATABASE app"},
		{cur: "", q: "CREATE DATABASE other"},
		{cur: "", q: "DROP DATABASE other"},
		{cur: "other", q: "GRANT SELECT ON *.* TO 'u'@'%'", want: "GRANT SELECT ON *.* TO 'u'@'%'", schema: "other"},
		{cur: "other", q: "CREATE TABLE app.t2 LIKE other.t", want: "CREATE TABLE app.t2 LIKE other.t", schema: "other"},
		{cur: "other", q: "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.v = 1"},
		{cur: "app", q: "CREATE EVENT ev ON SCHEDULE EVERY 1 DAY DO DELETE FROM t", want: "CREATE EVENT ev ON SCHEDULE EVERY 1 DAY DO DELETE FROM t", schema: "app"},
		// Rewritten: the default database, qualified names, the database.
		{cur: "src", q: "CREATE TABLE t (id INT)", want: "CREATE TABLE t (id INT)", schema: "dst"},
		{cur: "src", q: "CREATE TABLE src.t2 LIKE src.t", want: "CREATE TABLE `dst`.t2 LIKE `dst`.t", schema: "dst"},
		{cur: "app", q: "RENAME TABLE src.a TO src.b", want: "RENAME TABLE `dst`.a TO `dst`.b", schema: "app"},
		{cur: "", q: "CREATE DATABASE src", want: "CREATE DATABASE `dst`"},
		{cur: "src", q: "CREATE TABLE tmp_1 (id INT)"},
	}
	for _, c := range cases {
		f := New(rules)
		txn := ddlTxn(c.cur, c.q)
		o, err := f.Txn(txn)
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if c.want == "" {
			if !o.Whole || txn.DDL || len(txn.Statements) != 0 || o.Statements != 1 {
				t.Errorf("%s: not left out: %+v, %+v", c.q, o, txn.Statements)
			}
			continue
		}
		if len(txn.Statements) != 1 || !txn.DDL || o.Whole {
			t.Errorf("%s: left out: %+v", c.q, o)
			continue
		}
		st := txn.Statements[0]
		if st.Query != c.want || st.Schema != c.schema || (len(o.Mixed) > 0) != c.mixed {
			t.Errorf("%s in %q:\n got %q in %q, mixed %v\nwant %q in %q, mixed %t", c.q, c.cur, st.Query, st.Schema, o.Mixed, c.want, c.schema, c.mixed)
		}
	}
}

// TestStatementErrors: what cannot be known stops, naming the statement,
// and leaves the transaction as it was.
func TestStatementErrors(t *testing.T) {
	filters := mustRules(t, []string{"app.%"}, nil, nil)
	rewrite := mustRules(t, nil, nil, []string{"src=dst"})
	for _, c := range []struct {
		rules Rules
		txn   *binlog.Txn
		what  string
	}{
		{filters, ddlTxn("app", "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'h')"), "cannot tell which tables this DDL changes"},
		{rewrite, ddlTxn("app", "GRANT SELECT ON src.* TO 'u'@'%'"), "cannot rename the databases"},
		{filters, &binlog.Txn{StatementDML: true, Statements: []binlog.Statement{{Schema: "app", Query: "SELECT f()", Kind: binlog.StmtDML}}}, "statement-format DML whose tables cannot be told"},
		{filters, &binlog.Txn{StatementDML: true, Statements: []binlog.Statement{{Schema: "app", Query: "CALL p()", Kind: binlog.StmtDML}}}, "statement-format DML whose tables cannot be told"},
	} {
		before := c.txn.Statements[0]
		_, err := New(c.rules).Txn(c.txn)
		var se *StatementError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.what) || !strings.Contains(err.Error(), before.Query) {
			t.Errorf("%s: %v", before.Query, err)
		}
		if c.txn.Statements[0] != before || len(c.txn.Statements) != 1 {
			t.Errorf("%s: changed on error", before.Query)
		}
	}
}

// TestStatementDML: statement-format DML is left out when every table it
// writes is; otherwise it stays (for the preparer to refuse).
func TestStatementDML(t *testing.T) {
	f := New(mustRules(t, []string{"app.%"}, nil, nil))
	for q, out := range map[string]bool{
		"INSERT INTO other.t VALUES (1)":                       true,
		"INSERT INTO other.t SELECT * FROM app.u":              true, // reads app.u, writes other.t
		"INSERT INTO app.t SELECT * FROM other.u":              false,
		"UPDATE other.t JOIN app.u ON t.id = u.id SET t.v = 1": false, // a multi-table UPDATE may write both
		"DELETE FROM t WHERE id = 1":                           true,  // in other
	} {
		txn := &binlog.Txn{StatementDML: true, Statements: []binlog.Statement{{Schema: "other", Query: q, Kind: binlog.StmtDML}}}
		o, err := f.Txn(txn)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if o.Whole != out || txn.StatementDML == out || o.DroppedDML != out {
			t.Errorf("%s: outcome %+v, statement DML %t; want left out %t", q, o, txn.StatementDML, out)
		}
	}
	// A LOAD DATA logged as a statement is not among the statements: the
	// transaction stays statement DML.
	txn := &binlog.Txn{StatementDML: true, LoadData: true, Statements: []binlog.Statement{{Schema: "other", Query: "INSERT INTO other.t VALUES (1)", Kind: binlog.StmtDML}}}
	if _, err := f.Txn(txn); err != nil || !txn.StatementDML {
		t.Errorf("LOAD DATA: %v, statement DML %t", err, txn.StatementDML)
	}
}
