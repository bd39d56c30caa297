package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/verify"
	"github.com/paraply/paraply/internal/workload"
)

// The sysbench tables the clone tests copy: small, in small chunks, so
// that a copy takes a few seconds and can be killed in the middle.
const (
	cloneTables    = 4
	cloneTableSize = 2000
	cloneChunkRows = 20
)

// TestCloneKilledUnderLoad clones a sysbench source that a write load
// keeps changing, at binlog_format ROW and MIXED, into an empty target;
// the clone is SIGKILLed twice in the middle of the copy and started
// again, then replicates. The target ends equal to the source with every
// write made during the copy, every chunk was committed once (the
// target's binlog holds one commit per chunk recorded) and no row was
// copied twice (each table's chunks hold its rows once).
func TestCloneKilledUnderLoad(t *testing.T) {
	for _, format := range []string{"ROW", "MIXED"} {
		t.Run(format, func(t *testing.T) { cloneKilledUnderLoad(t, format) })
	}
}

func cloneKilledUnderLoad(t *testing.T, format string) {
	ctx := context.Background()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "clsrc", Binlog: true, ExtraArgs: []string{"--binlog-format=" + format}})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "cltgt", ServerID: 2, Binlog: true})
	if err := src.CreateDatabase(ctx, "sbtest"); err != nil {
		t.Fatal(err)
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_write_only", cloneTables, cloneTableSize, 1, 0); err != nil {
		t.Fatal(err)
	}
	stopLoad := startSysbenchLoad(t, src, cloneTables, cloneTableSize)
	defer stopLoad()
	tdb := sandboxtest.DB(t, tgt)
	relay, addr := t.TempDir(), freeAddr(t)
	// At most 2,000 rows a second: a copy of 4 seconds or more, which the
	// kills at a third and two thirds of its chunks fall in on any machine.
	args := []string{"clone", "--source", src.URL(), "--target", tgt.URL(), "--relay-dir", relay, "--http", addr,
		"--copy-workers", "3", "--chunk-rows", strconv.Itoa(cloneChunkRows), "--copy-rate", "2000", "--log-level", "info"}
	chunks := cloneTables * cloneTableSize / cloneChunkRows
	for kill := 1; kill <= 2; kill++ {
		p := startParaply(t, args...)
		waitChunks(t, tdb, p, kill*chunks/3)
		if kill == 1 {
			cloneServes(t, addr)
		}
		p.Kill()
		if n := committedChunks(t, tdb); n >= chunks {
			t.Fatalf("kill %d came after the copy (%d chunks committed)\n%s", kill, n, p.Logs)
		}
	}
	// replicate refuses the target its clone has not finished.
	refused := paraply("replicate", "--source", src.URL(), "--target", tgt.URL(), "--relay-dir", relay, "--http", "", "--start-gtid", "current")
	if out, err := refused.CombinedOutput(); err == nil || !strings.Contains(string(out), "clone of this stream has not finished") {
		t.Fatalf("replicate onto an unfinished clone: %v, want refused\n%s", err, out)
	}
	run := paraply(append(args, "--until-caught-up", "--copy-rate", "0")...)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("the clone's third run: %v\n%s", err, out)
	} else {
		t.Logf("the clone's third run:\n%s", lastLines(string(out), 12))
	}
	stopLoad()
	replicate := paraply("replicate", "--source", src.URL(), "--target", tgt.URL(), "--relay-dir", relay, "--http", "", "--until-caught-up")
	if out, err := replicate.CombinedOutput(); err != nil {
		t.Fatalf("replicate after the clone: %v\n%s", err, out)
	}
	sdb := sandboxtest.DB(t, src)
	rep, err := verify.Run(ctx, verify.Options{Source: sdb, Target: tdb})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equal() {
		rep.WriteText(os.Stderr)
		t.Fatal("target differs from source")
	}
	checkChunksOnce(t, tgt, tdb)
	var runs int
	if err := tdb.QueryRow("SELECT runs FROM paraply.clone").Scan(&runs); err != nil || runs != 3 {
		t.Errorf("paraply.clone says %d runs (%v), want 3", runs, err)
	}
}

// startSysbenchLoad runs a light sysbench write load on src's sbtest
// until the returned function is called.
func startSysbenchLoad(t *testing.T, src *sandbox.Server, tables, size int) (stop func()) {
	t.Helper()
	load := src.Sysbench(context.Background(), "oltp_write_only", "--tables="+strconv.Itoa(tables), "--table-size="+strconv.Itoa(size),
		"--threads=2", "--rate=100", "--time=0", "--events=0", "--rand-seed=7", "--report-interval=0", "run")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = load.Process.Kill()
		_ = load.Wait() // killed: its error says so
	}
	t.Cleanup(stop)
	return stop
}

// committedChunks counts the chunks the clone recorded on the target (0
// before it created its table).
func committedChunks(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM paraply.clone_chunks").Scan(&n); err != nil {
		return 0
	}
	return n
}

// waitChunks waits until the clone p runs has committed at least n
// chunks.
func waitChunks(t *testing.T, db *sql.DB, p *bgParaply, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for committedChunks(t, db) < n {
		select {
		case err := <-p.Exited:
			t.Fatalf("the clone ended (%v) before %d chunks were committed\n%s", err, n, p.Logs)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the clone committed fewer than %d chunks in 2 minutes\n%s", n, p.Logs)
		}
	}
}

// checkChunksOnce checks that every chunk was committed once: the
// target's binlog holds one write to paraply.clone_chunks per chunk it
// records, and each table's chunks hold its rows once (oltp_write_only
// deletes and inserts a row in one transaction, so a table keeps its
// size at every position).
func checkChunksOnce(t *testing.T, tgt *sandbox.Server, db *sql.DB) {
	t.Helper()
	commits := 0
	files, err := tgt.BinlogFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rows, err := db.Query("SHOW BINLOG EVENTS IN '" + filepath.Base(f) + "'")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			dest := make([]any, len(vals))
			for i := range vals {
				dest[i] = &vals[i]
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			if vals[2].String == "Table_map" && strings.HasSuffix(vals[5].String, "(paraply.clone_chunks)") {
				commits++
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	recorded := committedChunks(t, db)
	if commits != recorded {
		t.Errorf("the target's binlog holds %d chunk commits, paraply.clone_chunks %d chunks: a chunk was committed twice", commits, recorded)
	}
	rows, err := db.Query("SELECT table_name, SUM(row_count) FROM paraply.clone_chunks GROUP BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	tables := 0
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		tables++
		if n != cloneTableSize {
			t.Errorf("%s: its chunks hold %d rows, the table %d: a row was copied twice or not at all", name, n, cloneTableSize)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if tables != cloneTables {
		t.Errorf("chunks of %d tables, want %d", tables, cloneTables)
	}
	t.Logf("%d chunks, each committed once", recorded)
}

// cloneServes checks that a clone copying serves its progress on its
// --http address: the metrics, /clone.json and the page; and that
// paraply status says a clone copies.
func cloneServes(t *testing.T, addr string) {
	t.Helper()
	get := func(path string) string {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d, %v", path, resp.StatusCode, err)
		}
		return string(b)
	}
	// paraply status, which reads replicate's /status.json, says a clone
	// copies.
	if code, out := runParaply(t, nil, "status", "--http", addr); code != 1 || !strings.Contains(out, "paraply clone is copying the source") {
		t.Errorf("paraply status during the clone: exit %d, want 1 and that a clone copies\n%s", code, out)
	}
	m := regexp.MustCompile(`(?m)^paraply_clone_rows\{stream="default"\} (\d+)`).FindStringSubmatch(get("/metrics"))
	if m == nil || m[1] == "0" {
		t.Errorf("the clone's /metrics shows no rows copied: %v", m)
	}
	var p struct {
		Rows   int64 `json:"rows"`
		Tables []struct {
			Table string `json:"table"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(get("/clone.json")), &p); err != nil || p.Rows == 0 || len(p.Tables) != cloneTables {
		t.Errorf("the clone's /clone.json: %+v, %v; want rows and %d tables", p, err, cloneTables)
	}
	if page := get("/"); !strings.Contains(page, "sbtest.sbtest") || !strings.Contains(page, "rows/s") {
		t.Errorf("the clone's page shows no table's progress:\n%s", page)
	}
}
