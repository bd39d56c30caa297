package sqlgen

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/schema"
)

// The tables of TestServerCompact. p and q are compactable; u has a second
// unique key, and fkp and fkc are linked by a foreign key, so they are
// not.
var compactDDL = []string{
	`CREATE TABLE %s.p (id INT NOT NULL PRIMARY KEY, c VARCHAR(20) CHARACTER SET utf8mb4, n INT,
		l VARCHAR(10) CHARACTER SET latin1, d DOUBLE, f FLOAT, bl BLOB, dt DATETIME(6), g INT AS (n * 2) VIRTUAL)`,
	`CREATE TABLE %s.q (a INT NOT NULL, b VARBINARY(8) NOT NULL, v VARCHAR(20) CHARACTER SET utf8mb4, PRIMARY KEY (a, b))`,
	`CREATE TABLE %s.u (id INT NOT NULL PRIMARY KEY, uk INT NOT NULL, v VARCHAR(20) CHARACTER SET utf8mb4, UNIQUE KEY (uk))`,
	`CREATE TABLE %s.fkp (id INT NOT NULL PRIMARY KEY)`,
	`CREATE TABLE %s.fkc (id INT NOT NULL PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fkp (id))`,
}

// compactCols are the table maps' view of the tables (types and names).
var compactCols = map[string][]col{
	"p": {intCol("id"), varcharCol("c"), {name: "n", typ: "int", tp: mysql.MYSQL_TYPE_LONG, nullable: true},
		latin1Col("l"), {name: "d", typ: "double", tp: mysql.MYSQL_TYPE_DOUBLE, meta: 8, nullable: true},
		{name: "f", typ: "float", tp: mysql.MYSQL_TYPE_FLOAT, meta: 4, nullable: true},
		{name: "bl", typ: "blob", tp: mysql.MYSQL_TYPE_BLOB, meta: 2, cs: "binary", co: "binary", nullable: true},
		{name: "dt", typ: "datetime", tp: mysql.MYSQL_TYPE_DATETIME2, meta: 6, nullable: true},
		{name: "g", typ: "int", tp: mysql.MYSQL_TYPE_LONG, nullable: true, generated: true}},
	"q": {intCol("a"), {name: "b", typ: "varbinary", tp: mysql.MYSQL_TYPE_VARCHAR, meta: 8, cs: "binary", co: "binary"}, varcharCol("v")},
	"u": {intCol("id"), intCol("uk"), varcharCol("v")},
}

var compactTables = []string{"p", "q", "u"}

// TestServerCompact is the equivalence test of compaction: random
// sequences of inserts, updates and deletes (in a small key space, so that
// rows change several times per batch, with primary key changes) are
// applied to two copies of the same tables, statement by statement in one
// and compacted in the other, a batch of up to 64 transactions per target
// transaction as the applier does. Every statement must find the rows its
// Expect says, and the copies must end byte for byte equal. Then a row
// missing on the target, and a row that should not be there, must fail
// both ways.
func TestServerCompact(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server")
	}
	ctx := t.Context()
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "sqlgen-compact"})
	pool := applierDB(t, srv)
	// compound runs the compacted batches as compound statements that
	// check their own counts (Batch.Compound), as the applier does on
	// MariaDB.
	modes := []struct {
		db                string
		compact, compound bool
	}{{"plain", false, false}, {"compact", true, false}, {"compound", true, true}}
	tabs := map[string]map[string]*Table{}
	for _, m := range modes {
		stmts := []string{"CREATE DATABASE " + m.db}
		for _, d := range compactDDL {
			stmts = append(stmts, fmt.Sprintf(d, m.db))
		}
		if err := srv.Exec(ctx, stmts...); err != nil {
			t.Fatal(err)
		}
		cat, err := schema.Load(ctx, pool, m.db)
		if err != nil {
			t.Fatal(err)
		}
		tabs[m.db] = map[string]*Table{}
		for _, name := range compactTables {
			_, tm := fixture(m.db, name, compactCols[name])
			tab, err := NewTableIn(cat, cat.Table(m.db, name), tm)
			if err != nil {
				t.Fatal(err)
			}
			if want := name != "u"; tab.Compactable() != want {
				t.Fatalf("%s.%s: Compactable() = %v", m.db, name, !want)
			}
			tabs[m.db][name] = tab
		}
		for _, name := range []string{"fkp", "fkc"} {
			_, tm := fixture(m.db, name, []col{intCol("id"), intCol("pid")}[:len(cat.Table(m.db, name).Columns)])
			if tab, err := NewTableIn(cat, cat.Table(m.db, name), tm); err != nil || tab.Compactable() {
				t.Fatalf("%s.%s: compactable, or %v", m.db, name, err)
			}
		}
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	g := newCompactGen(rand.New(rand.NewPCG(7, 11)))
	var stmts [3]int // statements run, per mode
	for w := range 200 {
		n := 1 + g.r.IntN(64)
		if w == 0 {
			n = 64 // the initial data
		}
		work := g.work(n)
		for i, m := range modes {
			b := buildWork(t, tabs[m.db], work, m.compact)
			stmts[i] += b.Len()
			if err := runChecked(ctx, conn, b, m.compound); err != nil {
				t.Fatalf("work %d, %s: %v\n%s", w, m.db, err, abbreviate(b.SQL()))
			}
		}
		if w%10 == 9 {
			for _, name := range compactTables {
				compareCopies(t, pool, "plain", "compact", name)
				compareCopies(t, pool, "plain", "compound", name)
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	}
	t.Logf("statements: %d without compaction, %d with; %v", stmts[0], stmts[1], g.seen)
	if stmts[1]*2 > stmts[0] {
		t.Errorf("compaction saved too little: %d statements, %d without", stmts[1], stmts[0])
	}
	for _, what := range []string{"delete+insert", "insert+delete", "update+update", "primary key change", "unique key change"} {
		if g.seen[what] == 0 {
			t.Errorf("the workload never did %q", what)
		}
	}

	// Conflicts: the target differs from the source (the setup, run in
	// the batch's transaction), and every way must fail; the batch is
	// rolled back.
	for _, c := range []struct {
		name  string
		setup func(db string) string
		work  func() [][]compactEvent
	}{{
		name:  "a row to update is missing",
		setup: func(db string) string { return "DELETE FROM " + db + ".p WHERE id = " + g.someKey("p") },
		work:  func() [][]compactEvent { return g.touching("p", g.lastKey, binlog.Update) },
	}, {
		name:  "a row to delete is missing",
		setup: func(db string) string { return "DELETE FROM " + db + ".p WHERE id = " + g.someKey("p") },
		work:  func() [][]compactEvent { return g.touching("p", g.lastKey, binlog.Delete) },
	}, {
		name:  "a row to insert, then delete, exists",
		setup: func(db string) string { return "INSERT INTO " + db + ".p (id) VALUES (" + g.freeKey("p") + ")" },
		work:  func() [][]compactEvent { return g.insertDelete("p", g.lastKey) },
	}} {
		setup := map[string]string{}
		for _, m := range modes {
			setup[m.db] = c.setup(m.db)
		}
		work := c.work()
		var compacted error // what the compact mode reported
		for _, m := range modes {
			b := buildWork(t, tabs[m.db], work, m.compact, setup[m.db])
			err := runChecked(ctx, conn, b, m.compound)
			var rc *RowCountError
			var me *gomysql.MySQLError
			if !errors.As(err, &rc) && !(errors.As(err, &me) && me.Number == 1062) {
				t.Errorf("%s, %s: got %v, want a row count error or a duplicate key", c.name, m.db, err)
			} else {
				t.Logf("%s, %s: %v", c.name, m.db, err)
			}
			// The same statements, checked by the target: the same
			// statement, the same count.
			switch m.db {
			case "compact":
				compacted = err
			case "compound":
				if err == nil || compacted == nil || strings.ReplaceAll(err.Error(), "`compound`", "`compact`") != compacted.Error() {
					t.Errorf("%s: compound statement says %v, the checked counts %v", c.name, err, compacted)
				}
			}
		}
	}
	for _, name := range compactTables {
		compareCopies(t, pool, "plain", "compact", name)
		compareCopies(t, pool, "plain", "compound", name)
	}
}

// runChecked runs a batch that starts a transaction, checking the
// affected-row counts (with Batch.Check, or in the target with compound
// statements), and commits if all is well, else rolls back.
func runChecked(ctx context.Context, conn *sql.Conn, b *Batch, compound bool) error {
	if !compound {
		affected, err := runBatch(ctx, conn, b)
		if err == nil {
			err = b.Check(affected)
		}
		return err
	}
	_, err := execCompound(ctx, conn, b)
	end := "COMMIT"
	if err != nil {
		end = "ROLLBACK"
	}
	if _, cerr := conn.ExecContext(ctx, end); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// compactEvent is a rows event of the generated workload.
type compactEvent struct {
	table  string
	op     binlog.Op
	images [][]any
}

// buildWork makes the batch of a work, a transaction per element, after
// statements setup.
func buildWork(t *testing.T, tabs map[string]*Table, work [][]compactEvent, compact bool, setup ...string) *Batch {
	t.Helper()
	b := &Batch{Compact: compact}
	b.Raw("START TRANSACTION")
	for _, s := range setup {
		b.Raw(s)
	}
	for i, txn := range work {
		for _, e := range txn {
			tab := tabs[e.table]
			if err := b.Add(tab, &binlog.Rows{Op: e.op, Table: tableMap(tab), Images: e.images}, i); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b
}

// runBatch runs a batch that starts a transaction, and commits if every
// statement succeeded, else rolls back.
func runBatch(ctx context.Context, conn *sql.Conn, b *Batch) ([]int64, error) {
	var affected []int64
	err := conn.Raw(func(dc any) error {
		res, err := dc.(driver.ExecerContext).ExecContext(ctx, b.SQL(), b.NamedValues(nil))
		if err != nil {
			return err
		}
		affected = res.(gomysql.Result).AllRowsAffected()
		return nil
	})
	end := "COMMIT"
	if err != nil || b.Check(affected) != nil {
		end = "ROLLBACK"
	}
	if _, cerr := conn.ExecContext(ctx, end); cerr != nil && err == nil {
		err = cerr
	}
	return affected, err
}

// compareCopies compares a table of two schemas byte for byte.
func compareCopies(t *testing.T, pool *sql.DB, a, b, name string) {
	t.Helper()
	cat, err := schema.Load(t.Context(), pool, a)
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, c := range cat.Table(a, name).Columns {
		exprs = append(exprs, exactExpr(c))
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM %s." + schema.QuoteIdent(name)
	want := tableRows(t, pool, fmt.Sprintf(q, a))
	got := tableRows(t, pool, fmt.Sprintf(q, b))
	if len(want) == 0 {
		t.Errorf("%s.%s is empty: the comparison proves nothing", a, name)
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("%s differs:\n%s: %v\n%s: %v", name, a, want, b, got)
	}
}

// compactGen generates valid row changes: it keeps the rows each table
// holds, so that it inserts only absent keys and changes only present
// ones.
type compactGen struct {
	r       *rand.Rand
	rows    map[string]map[string][]any // table → key → image
	seen    map[string]int
	lastKey string
	// in a work: which keys were inserted and deleted, for counting
	// chains
	touched map[string]binlog.Op
}

func newCompactGen(r *rand.Rand) *compactGen {
	g := &compactGen{r: r, rows: map[string]map[string][]any{}, seen: map[string]int{}}
	for _, t := range compactTables {
		g.rows[t] = map[string][]any{}
	}
	return g
}

const compactKeys = 16 // keys per table: small, so that rows change often

func (g *compactGen) key(table string, img []any) string {
	if table == "q" {
		return fmt.Sprintf("%d/%s", img[0], img[1])
	}
	return fmt.Sprint(img[0])
}

// newKey returns a random primary key value for table: the key columns of
// an image.
func (g *compactGen) newKey(table string) []any {
	id := int32(g.r.IntN(compactKeys))
	if table == "q" {
		return []any{id % 4, []string{"", "a", "\x00", "a\x00"}[id/4]}
	}
	return []any{id}
}

func pick[T any](r *rand.Rand, vals ...T) T { return vals[r.IntN(len(vals))] }

// fill sets the non-key columns of img to random values.
func (g *compactGen) fill(table string, img []any, all bool) {
	r := g.r
	set := func(i int, v any) {
		if all || r.IntN(3) == 0 {
			img[i] = v
		}
	}
	switch table {
	case "p":
		set(1, pick[any](r, nil, "a", "A", "a ", "é😀", ""))
		set(2, pick[any](r, nil, int32(0), int32(-7), int32(2147483647), int32(r.IntN(100))))
		set(3, pick[any](r, nil, "\xe9", "e", "E", "x\x00y"))
		set(4, pick[any](r, nil, 0.1, 1e300, 5e-324, -2.5, 123456.789, 0.30000000000000004, 1.7976931348623157e308))
		set(5, pick[any](r, nil, float32(0.1), float32(3.4028235e38), float32(-1.5), float32(1e-45)))
		set(6, pick[any](r, nil, []byte{}, []byte{0}, []byte("blob\x00\xff"), []byte(strings.Repeat("z", 300))))
		set(7, pick[any](r, nil, "2024-02-29 12:34:56.789000", "1000-01-01 00:00:00.000000", "9999-12-31 23:59:59.999999"))
		img[8] = nil // g = n * 2, logged but never written
		if n, ok := img[2].(int32); ok && n != 2147483647 {
			img[8] = n * 2
		}
	case "q":
		set(2, pick[any](r, nil, "v", "w", strings.Repeat("x", 20)))
	case "u":
		set(2, pick[any](r, nil, "v", "w"))
		if all {
			img[1] = g.freeUnique()
		}
	}
}

// freeUnique returns a value of u.uk that no row has.
func (g *compactGen) freeUnique() int32 {
	for {
		v := int32(g.r.IntN(4 * compactKeys))
		if !slices.ContainsFunc(slices.Collect(maps.Values(g.rows["u"])), func(img []any) bool { return img[1] == v }) {
			return v
		}
	}
}

// work returns n transactions of 1 to 4 row changes each.
func (g *compactGen) work(n int) [][]compactEvent {
	g.touched = map[string]binlog.Op{}
	out := make([][]compactEvent, n)
	for i := range out {
		for range 1 + g.r.IntN(4) {
			out[i] = append(out[i], g.event(pick(g.r, compactTables...)))
		}
	}
	return out
}

// event returns one rows event on table: a change of a random key, and
// sometimes of another key with the same operation.
func (g *compactGen) event(table string) compactEvent {
	e := g.change(table)
	if g.r.IntN(4) == 0 {
		next := g.change(table)
		if next.op == e.op {
			e.images = append(e.images, next.images...)
			return e
		}
		g.undo(table, next) // keep the model in step with what is emitted
	}
	return e
}

// change makes one row change on table and applies it to the model.
func (g *compactGen) change(table string) compactEvent {
	rows := g.rows[table]
	kv := g.newKey(table)
	ncols := len(compactCols[table])
	img := make([]any, ncols)
	copy(img, kv)
	k := g.key(table, img)
	old, exists := rows[k]
	switch {
	case !exists:
		g.fill(table, img, true)
		rows[k] = img
		g.note(table, k, binlog.Insert)
		return compactEvent{table, binlog.Insert, [][]any{img}}
	case g.r.IntN(4) == 0:
		delete(rows, k)
		g.note(table, k, binlog.Delete)
		return compactEvent{table, binlog.Delete, [][]any{old}}
	}
	g.note(table, k, binlog.Update)
	after := slices.Clone(old)
	g.fill(table, after, false)
	if table == "u" && g.r.IntN(3) == 0 {
		after[1] = g.freeUnique()
		g.seen["unique key change"]++
	}
	if g.r.IntN(8) == 0 {
		nk := make([]any, ncols)
		copy(nk, g.newKey(table))
		if _, taken := rows[g.key(table, nk)]; !taken {
			copy(after, nk[:len(kv)])
			g.seen["primary key change"]++
		}
	}
	delete(rows, k)
	rows[g.key(table, after)] = after
	return compactEvent{table, binlog.Update, [][]any{old, after}}
}

// undo takes back a change made by change.
func (g *compactGen) undo(table string, e compactEvent) {
	rows := g.rows[table]
	switch e.op {
	case binlog.Insert:
		delete(rows, g.key(table, e.images[0]))
	case binlog.Delete:
		rows[g.key(table, e.images[0])] = e.images[0]
	case binlog.Update:
		delete(rows, g.key(table, e.images[1]))
		rows[g.key(table, e.images[0])] = e.images[0]
	}
}

// note records the chains the workload makes, for coverage: op follows
// the work's last change of the key.
func (g *compactGen) note(table, k string, op binlog.Op) {
	if table == "u" {
		return
	}
	tk := table + "/" + k
	switch prev, ok := g.touched[tk]; {
	case !ok:
	case prev == binlog.Delete && op == binlog.Insert:
		g.seen["delete+insert"]++
	case prev == binlog.Insert && op == binlog.Delete:
		g.seen["insert+delete"]++
	case prev == binlog.Update && op == binlog.Update:
		g.seen["update+update"]++
	}
	g.touched[tk] = op
}

// someKey returns the id of a row of table p, remembered as lastKey.
func (g *compactGen) someKey(table string) string {
	keys := slices.Sorted(maps.Keys(g.rows[table]))
	g.lastKey = keys[len(keys)/2]
	return g.lastKey
}

// freeKey returns an id that table p does not hold, remembered as lastKey.
func (g *compactGen) freeKey(table string) string {
	for i := range compactKeys {
		if k := fmt.Sprint(i); g.rows[table][k] == nil {
			g.lastKey = k
			return k
		}
	}
	panic("no free key")
}

// touching returns a work whose middle transaction changes row k of table
// (op: Update or Delete) and others change other rows.
func (g *compactGen) touching(table, k string, op binlog.Op) [][]compactEvent {
	img := g.rows[table][k]
	e := compactEvent{table, binlog.Delete, [][]any{img}}
	if op == binlog.Update {
		after := slices.Clone(img)
		after[1] = "changed"
		e = compactEvent{table, binlog.Update, [][]any{img, after}}
	}
	return g.around(table, k, e)
}

// insertDelete returns a work that inserts row k of table, then deletes
// it.
func (g *compactGen) insertDelete(table, k string) [][]compactEvent {
	img := make([]any, len(compactCols[table]))
	id, err := strconv.Atoi(k)
	if err != nil {
		panic(err)
	}
	img[0] = int32(id)
	g.fill(table, img, true)
	return g.around(table, k, compactEvent{table, binlog.Insert, [][]any{img}}, compactEvent{table, binlog.Delete, [][]any{img}})
}

// around puts events es in a work among changes of other rows of table,
// which the model does not keep (the work is rolled back).
func (g *compactGen) around(table, k string, es ...compactEvent) [][]compactEvent {
	var work [][]compactEvent
	for _, other := range slices.Sorted(maps.Keys(g.rows[table])) {
		img := g.rows[table][other]
		if other == k {
			continue
		}
		after := slices.Clone(img)
		after[1] = "other"
		work = append(work, []compactEvent{{table, binlog.Update, [][]any{img, after}}})
	}
	mid := len(work) / 2
	for i, e := range es {
		work = slices.Insert(work, mid+i, []compactEvent{e})
	}
	return work
}

// execCompound runs b as the compound statements of Batch.Compound, in
// order, until one fails: it returns that one's text and its error, a
// *RowCountError when a count differs.
func execCompound(ctx context.Context, conn *sql.Conn, b *Batch) (string, error) {
	for i := 0; i < b.Len(); {
		q, args, next := b.Compound(i, 0)
		named := make([]driver.NamedValue, len(args))
		for j, a := range args {
			named[j] = driver.NamedValue{Ordinal: j + 1, Value: a}
		}
		if err := conn.Raw(func(dc any) error {
			_, err := dc.(driver.ExecerContext).ExecContext(ctx, q, named)
			return err
		}); err != nil {
			return q, b.CompoundError(err)
		}
		i = next
	}
	return "", nil
}
