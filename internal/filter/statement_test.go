package filter

import (
	"errors"
	"reflect"
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
		if !reflect.DeepEqual(c.txn.Statements[0], before) || len(c.txn.Statements) != 1 {
			t.Errorf("%s: changed on error", before.Query)
		}
	}
}

// TestStatementDML: statement-format DML is left out when every table it
// writes is, kept when every one is kept, and refused when some are: one
// statement cannot be applied in part.
func TestStatementDML(t *testing.T) {
	f := New(mustRules(t, []string{"app.%"}, nil, nil))
	for q, out := range map[string]bool{
		"INSERT INTO other.t VALUES (1)":          true,
		"INSERT INTO other.t SELECT * FROM app.u": true, // reads app.u, writes other.t
		"INSERT INTO app.t SELECT * FROM other.u": false,
		"DELETE FROM t WHERE id = 1":              true, // in other
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
	// A multi-table UPDATE may write every table it joins.
	q := "UPDATE other.t JOIN app.u ON t.id = u.id SET t.v = 1"
	txn := &binlog.Txn{StatementDML: true, Statements: []binlog.Statement{{Schema: "other", Query: q, Kind: binlog.StmtDML}}}
	if _, err := f.Txn(txn); err == nil || !strings.Contains(err.Error(), "tables they leave out") {
		t.Errorf("%s: %v, want an error", q, err)
	}
	// A LOAD DATA left out leaves no statement DML.
	txn = &binlog.Txn{StatementDML: true, LoadData: true, Statements: []binlog.Statement{{Schema: "other", Query: "LOAD DATA INFILE 'f' INTO TABLE other.t",
		Kind: binlog.StmtDML, Load: &binlog.LoadData{FnStart: 9, FnEnd: 23}}}}
	if _, err := f.Txn(txn); err != nil || txn.StatementDML || txn.LoadData {
		t.Errorf("LOAD DATA: %v, statement DML %t, LOAD DATA %t", err, txn.StatementDML, txn.LoadData)
	}
}

// TestStatementDMLRenamed: --rewrite-db renames the default database of
// statement-format DML and the databases it names, as it does DDL's.
func TestStatementDMLRenamed(t *testing.T) {
	f := New(mustRules(t, nil, nil, []string{"src=dst"}))
	txn := &binlog.Txn{StatementDML: true, Statements: []binlog.Statement{
		{Schema: "src", Query: "INSERT INTO src.t SELECT * FROM src.u", Kind: binlog.StmtDML},
		{Schema: "other", Query: "UPDATE t SET v = 1", Kind: binlog.StmtDML},
	}}
	if _, err := f.Txn(txn); err != nil {
		t.Fatal(err)
	}
	if st := txn.Statements[0]; st.Schema != "dst" || st.Query != "INSERT INTO `dst`.t SELECT * FROM `dst`.u" {
		t.Errorf("renamed: %q in %q", st.Query, st.Schema)
	}
	if st := txn.Statements[1]; st.Schema != "other" || st.Query != "UPDATE t SET v = 1" {
		t.Errorf("kept: %q in %q", st.Query, st.Schema)
	}
}
