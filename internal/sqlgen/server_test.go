package sqlgen

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/schema"
)

// TestServerRoundTrip is the type-fidelity test: a workload runs on a
// source MariaDB, its binary log is decoded by package binlog, every rows
// event goes through a Batch, and the batches run on a target MariaDB with
// the applier's connection settings. After every phase both servers must
// hold byte-identical tables, and every statement must affect exactly the
// rows its Expect says.
func TestServerRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two MariaDB servers")
	}
	ctx := t.Context()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "sqlgen-src", Binlog: true})
	dst := sandboxtest.ForTest(t, sandbox.Options{Name: "sqlgen-dst"})
	for _, s := range []*sandbox.Server{src, dst} {
		if err := s.Exec(ctx, ddl...); err != nil {
			t.Fatal(err)
		}
	}
	srcDB := applierDB(t, src)
	dstDB := applierDB(t, dst)
	cat, err := schema.Load(ctx, dstDB, db)
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{t: t, db: dstDB, cat: cat, tables: map[schema.TableName]*Table{}}
	for _, p := range phases() {
		queries := append([]string{sourceSession}, p.stmts...)
		metadata := p.name == "no metadata"
		if metadata {
			if err := src.Exec(ctx, "SET GLOBAL binlog_row_metadata = NO_LOG"); err != nil {
				t.Fatal(err)
			}
		}
		if err := src.Exec(ctx, queries...); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if metadata {
			if err := src.Exec(ctx, "SET GLOBAL binlog_row_metadata = FULL"); err != nil {
				t.Fatal(err)
			}
		}
		a.applyNew(ctx, src)
		for _, table := range tables {
			compareTable(t, p.name, srcDB, dstDB, cat.Table(db, table))
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	a.checkCoverage()
}

// applierDB opens a pool on s with the connection settings the applier
// uses.
func applierDB(t testing.TB, s *sandbox.Server) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(s.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.InterpolateParams = true
	cfg.MultiStatements = true
	cfg.ClientFoundRows = true
	cfg.Params = map[string]string{"time_zone": "'+00:00'", "sql_mode": "'NO_AUTO_VALUE_ON_ZERO'"}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(conn)
	t.Cleanup(func() { pool.Close() })
	return pool
}

// applier applies the source's binary log to the target, a few source
// transactions per target transaction, and counts what it exercised.
type applier struct {
	t       *testing.T
	db      *sql.DB
	cat     *schema.Catalog
	tables  map[schema.TableName]*Table
	applied uint64 // transactions read so far

	batch   Batch
	pending int
	// seen counts the shapes of statements and events applied.
	seen map[string]int
}

// txnsPerBatch source transactions go into one target transaction.
const txnsPerBatch = 3

// applyNew applies the source's transactions that were not applied yet.
func (a *applier) applyNew(ctx context.Context, src *sandbox.Server) {
	t := a.t
	t.Helper()
	if err := src.Exec(ctx, "FLUSH BINARY LOGS"); err != nil {
		t.Fatal(err)
	}
	files, err := src.BinlogFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.tables = map[schema.TableName]*Table{} // rebuild per phase: the table maps' metadata may have changed
	fr := binlog.NewFileReader(files...)
	defer fr.Close()
	r := binlog.NewReader(fr)
	for {
		txn, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if txn.Seq <= a.applied {
			continue
		}
		a.applied = txn.Seq
		n := 0
		for _, rows := range txn.Rows {
			if rows.Schema() != db {
				continue
			}
			n++
			tab := a.table(rows.Table)
			a.count(tab, rows)
			if err := a.batch.Add(tab, rows, a.pending); err != nil {
				t.Fatalf("txn %s: %v", txn.ID(), err)
			}
		}
		if n > 0 {
			a.pending++
		}
		if a.pending == txnsPerBatch {
			a.flush(ctx)
		}
	}
	a.flush(ctx)
}

// table returns the Table for a table map, built without a schema when the
// table map has the column names and the table no generated column (to
// exercise that path), and with the target's schema otherwise.
func (a *applier) table(tm *replication.TableMapEvent) *Table {
	t := a.t
	name := schema.TableName{Schema: string(tm.Schema), Name: string(tm.Table)}
	if tab := a.tables[name]; tab != nil && tab.Matches(tm) {
		return tab
	}
	def := a.cat.Table(name.Schema, name.Name)
	if def == nil {
		t.Fatalf("no schema for %s", name)
	}
	useDef := len(tm.ColumnNameString()) == 0 || slices.ContainsFunc(def.Columns, func(c schema.Column) bool { return c.Generated })
	var tab *Table
	var err error
	if useDef {
		tab, err = NewTable(def, tm)
		a.inc("table from schema")
	} else {
		tab, err = NewTable(nil, tm)
		a.inc("table from table map")
	}
	if err != nil {
		t.Fatal(err)
	}
	a.tables[name] = tab
	return tab
}

// flush runs the batch in one target transaction and checks the
// affected-row counts.
func (a *applier) flush(ctx context.Context) {
	t := a.t
	t.Helper()
	defer func() {
		a.batch.Reset()
		a.pending = 0
	}()
	if a.batch.Len() == 0 {
		return
	}
	expects := a.batch.Expects()
	for i, e := range expects {
		if e.Op == binlog.Insert && e.LastTxn != e.Txn {
			a.inc("insert merged across transactions")
		}
		// Rows of one INSERT statement on the source share their columns:
		// two INSERTs in a row from one transaction were split at the cap.
		if i > 0 && e.Op == binlog.Insert && expects[i-1].Op == binlog.Insert &&
			e.Table == expects[i-1].Table && e.Txn == expects[i-1].LastTxn {
			a.inc("insert split at the cap")
		}
	}
	conn, err := a.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// First as compound statements that check their counts in the target
	// (Batch.Compound), rolled back: every statement's ROW_COUNT() must be
	// its Expect, as the counts of the multi-statement run below must.
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if q, err := execCompound(ctx, conn, &a.batch); err != nil {
		t.Errorf("compound statement failed: %v\n%s", err, abbreviate(q))
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var affected []int64
	err = conn.Raw(func(dc any) error {
		res, err := dc.(driver.ExecerContext).ExecContext(ctx, a.batch.SQL(), a.batch.NamedValues(nil))
		if err != nil {
			return err
		}
		affected = res.(mysql.Result).AllRowsAffected()
		return nil
	})
	if err != nil {
		t.Fatalf("batch failed: %v\n%s", err, abbreviate(a.batch.SQL()))
	}
	if len(affected) != len(expects) {
		t.Fatalf("%d results for %d statements", len(affected), len(expects))
	}
	for i, e := range expects {
		if e.Rows >= 0 && affected[i] != e.Rows {
			t.Errorf("statement %d: %d rows affected, Expect %+v\n%s", i, affected[i], e, abbreviate(statement(a.batch.SQL(), i)))
		}
	}
	if err := a.batch.Check(affected); err != nil {
		t.Error(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
}

// count records the shape of a rows event.
func (a *applier) count(tab *Table, r *binlog.Rows) {
	a.inc(r.Op.String())
	if len(r.Table.ColumnNameString()) == 0 {
		a.inc("table map without names")
	}
	if r.Before != nil {
		a.inc(r.Op.String() + " with a partial before image")
	}
	if r.After != nil {
		a.inc(r.Op.String() + " with a partial after image")
	}
	switch {
	case tab.Key == nil:
		a.inc("keyless " + r.Op.String())
	case len(tab.Key) > 1 && r.Op == binlog.Delete && r.Changes() > 1:
		a.inc("multi-row delete by a composite key")
	case r.Op == binlog.Delete && r.Changes() > 1:
		a.inc("multi-row delete by a single-column key")
	}
}

func (a *applier) inc(what string) {
	if a.seen == nil {
		a.seen = map[string]int{}
	}
	a.seen[what]++
}

// checkCoverage fails if the workload did not exercise what the test is
// about, so that a change to it cannot make the test pass vacuously.
func (a *applier) checkCoverage() {
	for _, want := range []string{
		"insert", "update", "delete",
		"keyless update", "keyless delete",
		"multi-row delete by a composite key", "multi-row delete by a single-column key",
		"update with a partial before image", "update with a partial after image",
		"delete with a partial before image", "insert with a partial after image",
		"insert merged across transactions", "insert split at the cap",
		"table from schema", "table from table map", "table map without names",
	} {
		if a.seen[want] == 0 {
			a.t.Errorf("the workload never exercised %q (seen: %v)", want, a.seen)
		}
	}
}

// compareTable compares a table on both servers, row by row and column by
// column, with expressions that show every bit of the stored values.
func compareTable(t *testing.T, phase string, srcDB, dstDB *sql.DB, def *schema.Table) {
	t.Helper()
	if def == nil {
		t.Fatalf("%s: a table is missing from the catalog", phase)
	}
	var exprs, names []string
	for _, c := range def.Columns {
		exprs = append(exprs, exactExpr(c))
		names = append(names, c.Name)
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + def.TableName().String()
	want := tableRows(t, srcDB, q)
	got := tableRows(t, dstDB, q)
	if len(want) == 0 && def.Name != "uk" {
		t.Errorf("%s: %s is empty on the source: the comparison would prove nothing", phase, def.TableName())
	}
	if len(got) != len(want) {
		t.Errorf("%s: %s has %d rows on the target, %d on the source", phase, def.TableName(), len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		for j := range names {
			if got[i][j] != want[i][j] {
				t.Errorf("%s: %s row %d (%s) column %s:\n target %s\n source %s", phase, def.TableName(), i,
					shorten(strings.Join(want[i][:min(len(want[i]), 3)], ",")), names[j], shorten(got[i][j]), shorten(want[i][j]))
			}
		}
	}
}

// exactExpr returns an expression that renders every bit of a column's
// value as text.
func exactExpr(c schema.Column) string {
	q := schema.QuoteIdent(c.Name)
	switch c.Type {
	case "float":
		return "CAST(CAST(" + q + " AS DOUBLE) AS CHAR)" // the float widened, all its digits
	case "double", "tinyint", "smallint", "mediumint", "int", "bigint", "decimal",
		"date", "time", "datetime", "timestamp", "year":
		return "CAST(" + q + " AS CHAR)"
	case "enum", "set":
		return "CONCAT(" + q + " + 0, ':', HEX(" + q + "))"
	}
	return "HEX(" + q + ")" // strings, BIT, JSON, GEOMETRY, UUID, INET
}

// tableRows returns the rows of q as strings, NULL as "NULL" (HEX never
// gives that), sorted.
func tableRows(t *testing.T, pool *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := pool.Query(q)
	if err != nil {
		t.Fatalf("%v: %s", err, q)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = "'" + v.String + "'"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
	return out
}

func shorten(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%s...(%d bytes)", s[:120], len(s))
	}
	return s
}

func abbreviate(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// statement returns the i-th statement of a batch's SQL (split on ';'
// outside quotes, which generated SQL has only inside identifiers).
func statement(sqlText string, i int) string {
	inQuote := false
	start, n := 0, 0
	for j := 0; j < len(sqlText); j++ {
		switch sqlText[j] {
		case '`':
			inQuote = !inQuote
		case ';':
			if inQuote {
				continue
			}
			if n == i {
				return sqlText[start:j]
			}
			n++
			start = j + 1
		}
	}
	return sqlText[start:]
}
