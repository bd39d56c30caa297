package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// TestLargeTransactions replicates three single transactions of more than
// 1,000,000 row changes each (INSERT ... SELECT, an UPDATE of every row, a
// DELETE of most of them), ~140-280 MB of binlog each, and requires
// paraply's peak memory (the kernel's high-water mark of its resident
// set) to stay under 256 MiB whatever their size: they are received,
// stored, prepared and applied in pieces. paraply is SIGKILLed while it
// applies one of them, as its status reports; the restart applies that
// transaction again, whole, and the target ends equal to the source.
func TestLargeTransactions(t *testing.T) {
	// The UPDATE's binlog (before and after images) is larger than the
	// memory allowed; fewer rows would no longer show the bound.
	const rows, deleted = 1200000, 1000000
	p := startReplPair(t,
		sandbox.Options{Name: "lgsrc", Binlog: true, BufferPoolMB: 256},
		sandbox.Options{Name: "lgtgt", ServerID: 2, BufferPoolMB: 256})
	execAll(t, p.sdb, "CREATE DATABASE big", "CREATE TABLE big.t (id INT PRIMARY KEY, pad VARCHAR(100), n INT)")
	began := time.Now()
	execAll(t, p.sdb,
		fmt.Sprintf("INSERT INTO big.t SELECT seq, REPEAT('p', 100), 0 FROM big.seq_1_to_%d", rows),
		"UPDATE big.t SET n = n + 1, pad = REPEAT('q', 100)",
		fmt.Sprintf("DELETE FROM big.t WHERE id <= %d", deleted))
	t.Logf("source: 3 transactions of %d, %d and %d row changes in %s", rows, rows, deleted, time.Since(began).Round(time.Second))

	addr := freeAddr(t)
	args := []string{"replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--workers", "4",
		"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", p.start, "--until-caught-up",
		"--log-level", "warn", "--http", addr}
	var logs bytes.Buffer
	cmd := paraply(args...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	seen := waitLargeProgress(t, "http://"+addr+"/status.json", exited, &logs)
	_ = cmd.Process.Kill()
	<-exited
	t.Logf("SIGKILLed while applying %s (%d of %d pieces, %d of %d bytes); peak RSS %.0f MiB",
		seen.GTID, seen.PiecesDone, seen.Pieces, seen.BytesDone, seen.Bytes, maxRSS(cmd)/(1<<20))
	if rss := maxRSS(cmd); rss >= 256<<20 {
		t.Errorf("paraply's peak RSS before the kill: %.0f MiB, want under 256 MiB", rss/(1<<20))
	}

	began = time.Now()
	cmd = paraply(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := runWithin(cmd, 10*time.Minute); err != nil {
		t.Fatalf("after the kill: %v\n%s", err, out.String())
	}
	rss := maxRSS(cmd)
	t.Logf("restart: applied the rest in %s; peak RSS %.0f MiB", time.Since(began).Round(time.Second), rss/(1<<20))
	if rss >= 256<<20 {
		t.Errorf("paraply's peak RSS: %.0f MiB, want under 256 MiB", rss/(1<<20))
	}
	var src, tgt string
	if err := p.sdb.QueryRow("CHECKSUM TABLE big.t").Scan(new(string), &src); err != nil {
		t.Fatal(err)
	}
	if err := p.tdb.QueryRow("CHECKSUM TABLE big.t").Scan(new(string), &tgt); err != nil || tgt != src {
		t.Fatalf("target checksum %s (%v), source %s", tgt, err, src)
	}
	var n, sum int64
	if err := p.tdb.QueryRow("SELECT COUNT(*), SUM(n) FROM big.t").Scan(&n, &sum); err != nil || n != rows-deleted || sum != n {
		t.Fatalf("target: %d rows summing %d (%v), want %d rows each updated once", n, sum, err, rows-deleted)
	}

	// analyze reads the same binlogs in bounded memory too.
	files, err := p.src.BinlogFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cmd = paraply(append([]string{"analyze", "--json"}, files...)...)
	out.Reset()
	cmd.Stdout = &out
	if err := runWithin(cmd, 5*time.Minute); err != nil {
		t.Fatalf("analyze: %v\n%s", err, out.String())
	}
	var rep struct {
		Transactions int64 `json:"transactions"`
		Rows         int64 `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("analyze --json: %v", err)
	}
	rss = maxRSS(cmd)
	t.Logf("analyze: %d transactions, %d row changes; peak RSS %.0f MiB", rep.Transactions, rep.Rows, rss/(1<<20))
	if rep.Rows < 2*rows+deleted {
		t.Errorf("analyze counted %d row changes, want at least %d", rep.Rows, 2*rows+deleted)
	}
	if rss >= 256<<20 {
		t.Errorf("analyze's peak RSS: %.0f MiB, want under 256 MiB", rss/(1<<20))
	}
}

// largeProgress is what a worker reports in /status.json of the large
// transaction it applies.
type largeProgress struct {
	GTID       string `json:"gtid"`
	Pieces     int    `json:"pieces"`
	PiecesDone int    `json:"pieces_done"`
	Bytes      int64  `json:"bytes"`
	BytesDone  int64  `json:"bytes_done"`
}

// waitLargeProgress polls the status until a worker reports a large
// transaction partly applied, and returns what it reported.
func waitLargeProgress(t *testing.T, url string, exited <-chan error, logs *bytes.Buffer) largeProgress {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	c := http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("paraply exited before applying a large transaction: %v\n%s", err, logs.String())
		default:
		}
		if resp, err := c.Get(url); err == nil {
			var st struct {
				Workers []struct {
					Large *largeProgress `json:"large_transaction"`
				} `json:"workers"`
			}
			err := json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			for _, w := range st.Workers {
				if l := w.Large; err == nil && l != nil && l.PiecesDone > 0 && l.PiecesDone < l.Pieces {
					return *l
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no worker reported a large transaction in progress\n%s", logs.String())
	panic("unreachable")
}

// maxRSS is the peak resident set of an exited child (getrusage's
// ru_maxrss, the kernel's VmHWM of the process), in bytes.
func maxRSS(cmd *exec.Cmd) float64 {
	if cmd.ProcessState == nil {
		return 0
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) * 1024 // Linux reports KiB
	}
	return 0
}

// TestLargeTransactionConflict: a large transaction the target cannot
// apply (a row of it already there) stops replication with an error that
// names it and its size, on both apply paths, and leaves the target as it
// was.
func TestLargeTransactionConflict(t *testing.T) {
	for _, apply := range []string{"auto", "sql"} {
		t.Run(apply, func(t *testing.T) {
			p := newReplPair(t, "lgc")
			// The table is on both; replication starts after it.
			for _, db := range []*sql.DB{p.sdb, p.tdb} {
				execAll(t, db, "CREATE DATABASE lc", "CREATE TABLE lc.t (id INT PRIMARY KEY, pad VARCHAR(100))")
			}
			execAll(t, p.tdb, "INSERT INTO lc.t VALUES (19000, 'target')")
			var start string
			if err := p.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&start); err != nil {
				t.Fatal(err)
			}
			gtid := commitGTID(t, p.sdb, "INSERT INTO lc.t SELECT seq, REPEAT('p', 100) FROM lc.seq_1_to_20000")
			code, out := runParaply(t, nil, "replicate", "--apply", apply, "--source", p.src.URL(), "--target", p.tgt.URL(),
				"--relay-dir", filepath.Join(t.TempDir(), "relay"), "--start-gtid", start, "--until-caught-up",
				"--large-txn-piece", "65536", "--log-level", "warn", "--http", "")
			msg := lastLine(out)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, out)
			}
			for _, want := range []string{"GTID " + gtid, "`lc`.`t`", "duplicate key", "20000 rows"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not say %q: %s", want, msg)
				}
			}
			var n int
			if err := p.tdb.QueryRow("SELECT COUNT(*) FROM lc.t").Scan(&n); err != nil || n != 1 {
				t.Errorf("target has %d rows (%v), want its 1", n, err)
			}
			t.Log(msg)
		})
	}
}
