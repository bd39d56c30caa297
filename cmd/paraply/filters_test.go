package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/verify"
)

// The filters of TestFiltersAndRewrite: app's tables but its tmp_ ones,
// shop.orders alone, and src, renamed to a database whose name needs
// quoting.
const renamedDB = "dst`ü"

var filterArgs = []string{
	"--include", "app.*", "--include", "shop.orders", "--include", "dst`ü.%",
	"--exclude", "%.tmp_%", "--rewrite-db", "src=" + renamedDB,
}

// applies says, independently of paraply's code, which source tables the
// target must have, and under which database.
func applies(db, table string) (string, bool) {
	switch {
	case db == "app" && !strings.HasPrefix(table, "tmp_"):
		return db, true
	case db == "shop" && table == "orders":
		return db, true
	case db == "src":
		return renamedDB, true
	}
	return "", false
}

// filterRound writes round r of the workload on the source: DDL of every
// kind on included, excluded and renamed tables (default database and
// qualified names), a transaction over all of them (with a statement
// writing an included and an excluded table), transactions whose
// every change is left out (rows, a statement, a large one), a large
// transaction over all of them, and a DROP TABLE naming an included and
// an excluded table. The last transaction of a round is left out whole,
// so that the checkpoint reaching the source's position shows that such
// transactions move it. It returns the GTIDs of the transactions left out
// whole.
func filterRound(t *testing.T, p *replPair, r int, mid func()) []string {
	t.Helper()
	q := func(format string) string { return strings.ReplaceAll(format, "%d", fmt.Sprint(r)) }
	execAll(t, p.sdb,
		q("CREATE TABLE app.t%d (id INT PRIMARY KEY, v VARCHAR(20))"),
		q("CREATE TABLE app.tmp_%d (id INT PRIMARY KEY)"),
		q("CREATE TABLE other.o%d (id INT PRIMARY KEY, v INT)"))
	commitGTID(t, p.sdb, "USE src", q("CREATE TABLE s%d (id INT PRIMARY KEY, v VARCHAR(20))"))
	execAll(t, p.sdb, q("CREATE TABLE src.q%d LIKE src.s%d"))
	commitGTID(t, p.sdb, "BEGIN",
		q("INSERT INTO app.t%d VALUES (1, 'a'), (2, 'b'), (3, 'c')"),
		q("INSERT INTO other.o%d VALUES (1, 1), (2, 2)"),
		q("INSERT INTO app.tmp_%d VALUES (1)"),
		q("INSERT INTO shop.orders VALUES (%d01, 'pen', %d)"),
		q("INSERT INTO shop.items VALUES (%d01, 'pen')"),
		q("INSERT INTO src.s%d VALUES (1, 's1'), (2, 's2')"),
		q("INSERT INTO src.q%d SELECT id, CONCAT(v, 'q') FROM src.s%d"),
		// One statement: rows events of an included table, then of an
		// excluded one, which ends the statement; more statements after.
		q("UPDATE app.t%d AS a STRAIGHT_JOIN other.o%d AS o USING (id) SET a.v = CONCAT(a.v, 'j'), o.v = o.v + 10"),
		// A statement naming the excluded table that changes none of its
		// rows.
		q("UPDATE app.t%d AS a STRAIGHT_JOIN other.o%d AS o USING (id) SET a.v = CONCAT(a.v, 'k'), o.v = o.v"),
		q("UPDATE app.`tä``b` SET v = CONCAT(v, '%d') WHERE id = 1"),
		q("INSERT INTO app.log VALUES (%d, 1, 'mixed')"),
		q("INSERT INTO src.log VALUES (%d, 1)"),
		"COMMIT")
	mid()
	var whole []string
	whole = append(whole, commitGTID(t, p.sdb, "BEGIN", q("INSERT INTO other.o%d VALUES (3, 3)"),
		q("UPDATE shop.items SET name = 'ink' WHERE id = %d01"), q("INSERT INTO app.tmp_%d VALUES (2)"), "COMMIT"))
	whole = append(whole, commitGTID(t, p.sdb, "SET SESSION binlog_format = STATEMENT", q("INSERT INTO other.o%d VALUES (4, 4)")))
	execAll(t, p.sdb,
		q("ALTER TABLE app.t%d ADD COLUMN w INT DEFAULT 7"),
		q("ALTER TABLE other.o%d ADD COLUMN w INT"))
	commitGTID(t, p.sdb, "USE src", q("ALTER TABLE q%d ADD COLUMN w INT DEFAULT 8"))
	execAll(t, p.sdb,
		q("UPDATE app.t%d SET w = id * 10 WHERE id < 3"),
		q("UPDATE src.q%d SET v = CONCAT(v, 'u'), w = w + id"),
		q("RENAME TABLE app.t%d TO app.r%d"),
		q("RENAME TABLE src.q%d TO src.qr%d"),
		q("UPDATE app.r%d SET v = 'renamed' WHERE id = 3"),
		q("CREATE TABLE app.d%d (id INT PRIMARY KEY)"),
		q("DROP TABLE app.d%d, other.o%d"))
	// Large: pieces of 64 KiB (--large-txn-piece) of 1500-row inserts.
	commitGTID(t, p.sdb, "USE warmup", "BEGIN",
		q("INSERT INTO app.big SELECT seq + %d0000, REPEAT('a', 100) FROM seq_1_to_1500"),
		q("INSERT INTO other.big SELECT seq + %d0000, REPEAT('o', 100) FROM seq_1_to_1500"),
		q("INSERT INTO src.big SELECT seq + %d0000, REPEAT('s', 100) FROM seq_1_to_1500"),
		q("INSERT INTO app.log VALUES (%d, 2, 'large')"),
		"COMMIT")
	whole = append(whole, commitGTID(t, p.sdb, "USE warmup", "BEGIN",
		q("INSERT INTO other.big SELECT seq + %d5000, REPEAT('x', 100) FROM seq_1_to_1500"), "COMMIT"))
	whole = append(whole, commitGTID(t, p.sdb, q("INSERT INTO other.big VALUES (%d9999, 'last')")))
	return whole
}

// TestFiltersAndRewrite replicates a workload over several databases
// with --include, --exclude and --rewrite-db through each apply path:
// sql (SIGKILLed in the middle of the second round), then binlog, then
// auto, each applying whole rounds. The target must have exactly the
// included tables, under their new names, equal to the source's; nothing
// of the excluded ones; every transaction left out whole recorded as
// applied; and the checkpoint at the source's position, whose last
// transaction is left out.
func TestFiltersAndRewrite(t *testing.T) {
	p := newReplPair(t, "flt")
	execAll(t, p.sdb,
		"CREATE DATABASE app", "CREATE DATABASE shop", "CREATE DATABASE other", "CREATE DATABASE src",
		"CREATE TABLE app.log (r INT, seq INT, note VARCHAR(20))", // no key: a doubled row stays visible
		"CREATE TABLE app.`tä``b` (id INT PRIMARY KEY, v VARCHAR(40))",
		"INSERT INTO app.`tä``b` VALUES (1, 'ü'), (2, '`')",
		"CREATE TABLE shop.orders (id INT PRIMARY KEY, item VARCHAR(20), qty INT)",
		"CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20))",
		"CREATE TABLE src.log (r INT, seq INT)",
		"CREATE TABLE app.big (id INT PRIMARY KEY, pad VARCHAR(200))",
		"CREATE TABLE other.big (id INT PRIMARY KEY, pad VARCHAR(200))",
		"CREATE TABLE src.big (id INT PRIMARY KEY, pad VARCHAR(200))")
	args := append([]string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--workers", "4",
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", p.start, "--heartbeat", "200ms",
		"--large-txn-piece", "65536", "--http", ""}, filterArgs...)
	var whole []string
	nop := func() {}
	whole = append(whole, filterRound(t, p, 1, nop)...)

	// sql, with the status endpoint: round 1 as a backlog, round 2 while
	// it runs, SIGKILLed in the middle of it.
	addr := freeAddr(t)
	sqlArgs := slices.Clone(args)
	sqlArgs[len(sqlArgs)-len(filterArgs)-1] = addr
	var logs bytes.Buffer
	cmd := paraply(append(sqlArgs, "--apply", "sql", "--log-level", "info")...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitApplied(t, p.tdb, sourcePosition(t, p), done, &logs)
	checkFilterStatus(t, addr, len(whole), &logs)
	whole = append(whole, filterRound(t, p, 2, func() {
		time.Sleep(100 * time.Millisecond)
		_ = cmd.Process.Kill()
		<-done
	})...)

	// binlog: the rest of round 2, and round 3.
	whole = append(whole, filterRound(t, p, 3, nop)...)
	if code, out := runParaply(t, nil, append(args, "--apply", "binlog", "--until-caught-up", "--log-level", "warn")...); code != 0 {
		t.Fatalf("--apply binlog: exit %d\n%s", code, out)
	}
	// auto: round 4.
	whole = append(whole, filterRound(t, p, 4, nop)...)
	end := sourcePosition(t, p)
	if code, out := runParaply(t, nil, append(args, "--apply", "auto", "--until-caught-up", "--log-level", "warn")...); code != 0 {
		t.Fatalf("--apply auto: exit %d\n%s", code, out)
	}

	if !p.applied(t, lastGTID(end)) {
		t.Errorf("the checkpoint does not reach the source's position %s, whose last transaction is left out", end)
	}
	for _, g := range whole {
		if !p.applied(t, g) {
			t.Errorf("transaction %s, left out whole, is not recorded as applied", g)
		}
	}
	checkFilteredTarget(t, p)

	// paraply apply, the same filters: the target emptied, rebuilt from
	// the source's binlog files.
	execAll(t, p.tdb, "DROP DATABASE paraply", "DROP DATABASE app", "DROP DATABASE shop", "DROP DATABASE "+schema.QuoteIdent(renamedDB))
	files, err := p.src.BinlogFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	applyArgs := append([]string{"apply", "--target", p.tgt.URL(), "--start-gtid", p.start, "--workers", "4", "--apply", "auto",
		"--large-txn-piece", "65536", "--spool-dir", t.TempDir(), "--log-level", "warn", "--http", ""}, filterArgs...)
	if code, out := runParaply(t, nil, append(applyArgs, files...)...); code != 0 {
		t.Fatalf("paraply apply: exit %d\n%s", code, out)
	}
	checkFilteredTarget(t, p)
}

// sourcePosition is the source's GTID position.
func sourcePosition(t *testing.T, p *replPair) string {
	t.Helper()
	var pos string
	if err := p.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return pos
}

// checkFilterStatus: the log names the rules, and the metrics and the
// status count what they left out (at least the transactions left out
// whole so far).
func checkFilterStatus(t *testing.T, addr string, whole int, logs *bytes.Buffer) {
	t.Helper()
	if !strings.Contains(logs.String(), "filters:") || !strings.Contains(logs.String(), "exclude %.tmp_%") {
		t.Errorf("the log does not state the filter rules:\n%s", logs.String())
	}
	var n float64
	for _, line := range strings.Split(httpGet(t, "http://"+addr+"/metrics"), "\n") {
		if v, ok := strings.CutPrefix(line, "paraply_filtered_transactions_total{stream=\"default\"} "); ok {
			fmt.Sscan(v, &n)
		}
	}
	if int(n) < whole {
		t.Errorf("paraply_filtered_transactions_total is %v, at least %d transactions were left out whole", n, whole)
	}
	var st struct {
		Status replicate.Status `json:"status"`
	}
	body := httpGet(t, "http://"+addr+"/status.json")
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if f := st.Status.Filters; f == nil || !strings.HasPrefix(f.Rules, "include app.*, shop.orders") || f.Transactions < int64(whole) || f.Rows == 0 || f.Statements == 0 {
		t.Errorf("/status.json does not show the filters and what they left out: %+v", f)
	}
}

// checkFilteredTarget compares the target with the source: exactly the
// tables applies says, equal, and nothing else.
func checkFilteredTarget(t *testing.T, p *replPair) {
	t.Helper()
	tables := func(db *sql.DB) []schema.TableName {
		rows, err := db.Query("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN " +
			"('mysql', 'information_schema', 'performance_schema', 'sys', 'paraply', 'warmup') ORDER BY 1, 2")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []schema.TableName
		for rows.Next() {
			var n schema.TableName
			if err := rows.Scan(&n.Schema, &n.Name); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var want []schema.TableName
	var same []verify.TableName
	renamed := map[string]string{} // target table -> source table, in the renamed database
	for _, n := range tables(p.sdb) {
		db, ok := applies(n.Schema, n.Name)
		if !ok {
			continue
		}
		want = append(want, schema.TableName{Schema: db, Name: n.Name})
		if db == n.Schema {
			same = append(same, verify.TableName{Schema: n.Schema, Name: n.Name})
		} else {
			renamed[n.Name] = n.String()
		}
	}
	got := tables(p.tdb)
	slices.SortFunc(want, schema.TableName.Compare)
	slices.SortFunc(got, schema.TableName.Compare)
	if !slices.Equal(got, want) {
		t.Fatalf("target tables:\n  %v\nwant (the included ones, src as %s):\n  %v", got, renamedDB, want)
	}
	var dbs []string
	for _, n := range got {
		if !slices.Contains(dbs, n.Schema) {
			dbs = append(dbs, n.Schema)
		}
	}
	if want := []string{"app", renamedDB, "shop"}; !slices.Equal(dbs, want) {
		t.Errorf("target databases %q, want %q", dbs, want)
	}
	rep, err := verify.Run(context.Background(), verify.Options{Source: p.sdb, Target: p.tdb, Tables: same})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equal() || len(rep.Tables) != len(same) {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Fatalf("included tables differ:\n%s", b.String())
	}
	for name, src := range renamed {
		tgt := schema.TableName{Schema: renamedDB, Name: name}.String()
		for _, q := range []string{"SELECT * FROM %s", "SHOW CREATE TABLE %s"} {
			s := queryText(t, p.sdb, fmt.Sprintf(q, src))
			g := queryText(t, p.tdb, fmt.Sprintf(q, tgt))
			if strings.HasPrefix(q, "SHOW") { // the same definition, but for its name
				s = strings.Replace(s, "`"+name+"`", "", 1)
				g = strings.Replace(g, "`"+name+"`", "", 1)
			}
			if s != g {
				t.Errorf("%s on the source:\n%s%s on the target:\n%s", src, s, tgt, g)
			}
		}
	}
	// The operator's check: verify with the run's own filters compares
	// each included table with the one it was replicated into.
	code, out := runParaply(t, nil, append([]string{"verify", "--source", p.src.URL(), "--target", p.tgt.URL()}, filterArgs...)...)
	if code != 0 || !strings.Contains(out, "filters: ") || !strings.Contains(out, "-> ") {
		t.Errorf("paraply verify with the filters: exit %d\n%s", code, out)
	}
	t.Logf("%d tables equal to the source's (%d renamed), %d left out", len(want), len(renamed), len(tables(p.sdb))-len(want))
}

// TestFilterStopsOnUnknownStatement: a statement whose tables cannot be
// known while filters are set (a function's writes, logged as SELECT
// f()) stops replication with an error naming its GTID, before anything
// of it or after it is applied; recorded by hand, it is stepped over.
func TestFilterStopsOnUnknownStatement(t *testing.T) {
	p := newReplPair(t, "unk")
	execAll(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)",
		"CREATE FUNCTION app.bump(x INT) RETURNS INT DETERMINISTIC MODIFIES SQL DATA BEGIN INSERT INTO app.t VALUES (x); RETURN x; END")
	args := append([]string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", filepath.Join(t.TempDir(), "relay"),
		"--start-gtid", p.start, "--until-caught-up", "--log-level", "warn", "--http", ""}, filterArgs...)
	if code, out := runParaply(t, nil, args...); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	bad := commitGTID(t, p.sdb, "SET SESSION binlog_format = STATEMENT", "SELECT app.bump(1)")
	after := commitGTID(t, p.sdb, "INSERT INTO app.t VALUES (2)")
	code, out := runParaply(t, nil, args...)
	msg := lastLine(out)
	if code != 1 || !strings.Contains(msg, "GTID "+bad+": statement-format DML whose tables cannot be told") || !strings.Contains(msg, "bump") {
		t.Fatalf("exit %d, want 1 and an error naming %s and the statement:\n%s", code, bad, out)
	}
	if p.applied(t, bad) || p.applied(t, after) {
		t.Fatal("the checkpoint claims the statement or what follows it")
	}
	var n int
	if err := p.tdb.QueryRow("SELECT COUNT(*) FROM app.t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows on the target (%v): nothing may be applied", n, err)
	}
	// The operator runs it by hand and records it: replication resumes.
	execAll(t, p.tdb, "INSERT INTO app.t VALUES (1)", "INSERT INTO paraply.applied (gtid) VALUES ('"+bad+"')")
	if code, out := runParaply(t, nil, args...); code != 0 {
		t.Fatalf("after the fix: exit %d\n%s", code, out)
	}
	p.equal(t, "app")
	t.Log(msg)
}
