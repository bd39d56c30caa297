package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/status"
)

// TestReplicaControls checks the daily controls of a replica, one after
// the other on one source and target: --until-gtid (as START SLAVE UNTIL
// master_gtid_pos), paraply skip (as sql_slave_skip_counter, for the
// transaction that stops replication) and --delay (as MASTER_DELAY).
func TestReplicaControls(t *testing.T) {
	p := newReplPair(t, "ctl")
	relay := filepath.Join(t.TempDir(), "relay")
	base := []string{"--source", p.src.URL(), "--target", p.tgt.URL(), "--relay-dir", relay, "--start-gtid", p.start,
		"--log-level", "warn", "--http", ""}
	replicate := func(extra ...string) (int, string) {
		return runParaply(t, nil, append(append([]string{"replicate"}, base...), extra...)...)
	}
	count := func(q string) (n int) {
		t.Helper()
		if err := p.tdb.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	execAll(t, p.sdb, "CREATE DATABASE ctl", "CREATE TABLE ctl.t (id INT PRIMARY KEY, v INT NOT NULL)")
	var gtids []string
	for i := 1; i <= 10; i++ {
		gtids = append(gtids, commitGTID(t, p.sdb, fmt.Sprintf("INSERT INTO ctl.t VALUES (%d, %d)", i, i)))
	}

	t.Run("until", func(t *testing.T) {
		// Out of order on 8 workers: still nothing after the GTID.
		code, out := replicate("--until-gtid", gtids[4], "--workers", "8", "--preserve-commit-order=false")
		if code != 0 {
			t.Fatalf("replicate --until-gtid %s: exit %d\n%s", gtids[4], code, out)
		}
		if n, max := count("SELECT COUNT(*) FROM ctl.t"), count("SELECT MAX(id) FROM ctl.t"); n != 5 || max != 5 {
			t.Fatalf("after --until-gtid %s the target has %d rows up to id %d, want 5 up to 5", gtids[4], n, max)
		}
		if !p.applied(t, gtids[4]) || p.applied(t, gtids[5]) {
			t.Fatalf("the checkpoint must hold %s and not %s", gtids[4], gtids[5])
		}
		// Already there: exits at once.
		if code, out := replicate("--until-gtid", gtids[2]); code != 0 || count("SELECT COUNT(*) FROM ctl.t") != 5 {
			t.Fatalf("replicate --until-gtid %s (applied already): exit %d\n%s", gtids[2], code, out)
		}
	})

	t.Run("until, two domains", func(t *testing.T) {
		// Domain 0 goes past its position before domain 1 reaches its own:
		// paraply stops there (it used to wait for ever) and says so.
		d1 := "SET SESSION gtid_domain_id = 1"
		a := commitGTID(t, p.sdb, "INSERT INTO ctl.t VALUES (11, 11)")
		b := commitGTID(t, p.sdb, d1, "INSERT INTO ctl.t VALUES (12, 12)")
		c := commitGTID(t, p.sdb, "INSERT INTO ctl.t VALUES (13, 13)")
		d := commitGTID(t, p.sdb, d1, "INSERT INTO ctl.t VALUES (14, 14)")
		code, out := replicate("--until-gtid", a+","+d)
		if code != 0 || !strings.Contains(out, "before another domain reached its own") {
			t.Fatalf("replicate --until-gtid %s,%s: exit %d\n%s", a, d, code, out)
		}
		if !p.applied(t, a) || !p.applied(t, b) || p.applied(t, c) || count("SELECT COUNT(*) FROM ctl.t WHERE id IN (13, 14)") != 0 {
			t.Fatalf("want %s and %s applied, %s and %s not", a, b, c, d)
		}
		// Run again, it stops at once: nothing new passes, so no
		// checkpoint is saved to say so (it used to wait for one).
		if code, out := replicate("--until-gtid", a+","+d); code != 0 || p.applied(t, c) {
			t.Fatalf("replicate --until-gtid %s,%s again: exit %d\n%s", a, d, code, out)
		}
	})

	t.Run("skip", func(t *testing.T) {
		execAll(t, p.tdb, "INSERT INTO ctl.t VALUES (100, -1)") // the target has the row already
		poison := commitGTID(t, p.sdb, "INSERT INTO ctl.t VALUES (100, 100)")
		commitGTID(t, p.sdb, "INSERT INTO ctl.t VALUES (101, 101)")
		code, out := replicate("--until-caught-up")
		if code == 0 || !strings.Contains(out, poison) {
			t.Fatalf("replicate over a duplicate key: exit %d, want an error naming %s\n%s", code, poison, out)
		}
		code, out = runParaply(t, nil, "skip", "--target", p.tgt.URL(), "--log-level", "warn", poison, gtids[0])
		if code != 0 || !strings.Contains(out, "recorded as applied without applying it") || !strings.Contains(out, "gtid="+poison) ||
			!strings.Contains(out, "already has it") {
			t.Fatalf("skip %s %s: exit %d\n%s", poison, gtids[0], code, out)
		}
		t.Log(out)
		if code, out := replicate("--until-caught-up"); code != 0 {
			t.Fatalf("replicate after skip: exit %d\n%s", code, out)
		}
		var v int
		if err := p.tdb.QueryRow("SELECT v FROM ctl.t WHERE id = 100").Scan(&v); err != nil || v != -1 || count("SELECT COUNT(*) FROM ctl.t WHERE id = 101") != 1 {
			t.Fatalf("after skip: row 100 has v=%d (%v), want the target's -1 untouched, and row 101 applied", v, err)
		}
		execAll(t, p.tdb, "UPDATE ctl.t SET v = 100 WHERE id = 100") // settled by hand
		p.equal(t, "ctl")
	})

	t.Run("delay", func(t *testing.T) {
		const delay = 3 * time.Second
		addr := freeAddr(t)
		args := append([]string{"replicate"}, base...)
		args = append(args, "--delay", delay.String(), "--http", addr)
		cmd := paraply(args...)
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		defer func() { _ = cmd.Process.Kill(); <-exited }()

		committed := time.Now()
		gtid := commitGTID(t, p.sdb, "INSERT INTO ctl.t VALUES (200, 200)")
		// Held: the status says until when, the metrics say the delay.
		var held time.Time
		waitUntil(t, "hold "+gtid, 20*time.Millisecond, exited, &logs, func() bool {
			var st status.Report
			if getJSON("http://"+addr+"/status.json", &st) != nil || st.Status.Delay != delay {
				return false
			}
			held = st.Status.Dependencies.DelayedUntil
			return !held.IsZero()
		})
		metrics := httpGet(t, "http://"+addr+"/metrics")
		if !strings.Contains(metrics, "paraply_delay_seconds{stream=\"default\"} 3\n") {
			t.Error("/metrics has no paraply_delay_seconds 3")
		}
		// The default, --workers auto: a pool of 16, of which it starts
		// with 2 and, with nothing to apply, keeps it.
		for _, want := range []string{"paraply_workers{stream=\"default\"} 16\n", "paraply_workers_limit{stream=\"default\"} 2\n"} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics has no %q", want)
			}
		}
		waitUntil(t, "apply "+gtid, 20*time.Millisecond, exited, &logs, func() bool {
			var n int
			return p.tdb.QueryRow("SELECT COUNT(*) FROM ctl.t WHERE id = 200").Scan(&n) == nil && n == 1
		})
		// The source stamps whole seconds: a transaction may go up to a
		// second before its exact commit time plus the delay (and the
		// measured clock offset, about a millisecond here, moves it a
		// little either way).
		after := time.Since(committed)
		t.Logf("committed on the source, applied %s later with --delay %s (held until %s)", after.Round(10*time.Millisecond), delay, held.Format(time.TimeOnly+".000"))
		if after < delay-time.Second-50*time.Millisecond {
			t.Fatalf("applied %s after the source committed it, before --delay %s", after, delay)
		}
	})
}

// getJSON decodes url's JSON body into v.
func getJSON(url string, v any) error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
