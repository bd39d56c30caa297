package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The two replicas of the rig: paraply as a process of its own, started
// and stopped around each file, and MariaDB's replica; and how the harness
// waits for each to apply what the source logged, or tells that it
// stopped.

// mtrParaply is one paraply replicate process of the rig.
type mtrParaply struct {
	cmd  *exec.Cmd
	out  bytes.Buffer // read only after done is closed
	done chan struct{}
	err  error // the exit status, set before done is closed
}

// startParaply starts paraply with its defaults, from pos, with a fresh
// relay directory.
func (r *mtrRig) startParaply(pos string) error {
	r.relayCount++
	p := &mtrParaply{done: make(chan struct{})}
	p.cmd = paraply("replicate", "--source", r.src.URL(), "--target", r.tgt.URL(), "--start-gtid", pos,
		"--relay-dir", filepath.Join(r.relayDirs, fmt.Sprint(r.relayCount)), "--http", "", "--log-level", "warn")
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		return err
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	r.paraply = p
	return nil
}

// stopParaply stops the running paraply with SIGTERM (SIGKILL after 30
// seconds) and removes its relay directory.
func (r *mtrRig) stopParaply() {
	p := r.paraply
	if p == nil {
		return
	}
	r.paraply = nil
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	_ = os.RemoveAll(filepath.Join(r.relayDirs, fmt.Sprint(r.relayCount)))
}

// exited returns paraply's error when it has exited: its first error line
// or, failing that, its last line and exit status.
func (p *mtrParaply) exited() (string, bool) {
	select {
	case <-p.done:
	default:
		return "", false
	}
	out := strings.TrimSpace(p.out.String())
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "paraply:") || strings.Contains(l, "level=ERROR") {
			return strings.TrimSpace(strings.TrimPrefix(l, "paraply:")), true
		}
	}
	if out == "" {
		return fmt.Sprintf("exited (%v) without a message", p.err), true
	}
	return fmt.Sprintf("exited (%v): %s", p.err, lastLine(out)), true
}

// waitNative waits up to limit for the native replica to apply pos. It
// returns "" once it has, else why it stopped (its SQL or I/O thread's
// error) or that it is too slow.
func (r *mtrRig) waitNative(ctx context.Context, pos string, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var res sql.NullInt64
		if err := r.ndb.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, 0.5)", pos).Scan(&res); err != nil {
			return "native replica: " + err.Error()
		}
		if res.Valid && res.Int64 == 0 {
			return ""
		}
		if stopped := r.nativeStopped(ctx); stopped != "" {
			return stopped
		}
	}
	return fmt.Sprintf("did not apply %s within %s", pos, limit)
}

// nativeStopped says why the native replica stopped, or "" if it runs.
func (r *mtrRig) nativeStopped(ctx context.Context) string {
	st, err := mtrRowMap(ctx, r.ndb, "SHOW SLAVE STATUS")
	switch {
	case err != nil:
		return "SHOW SLAVE STATUS: " + err.Error()
	case st == nil:
		return "no replication configured"
	case st["Slave_SQL_Running"] != "Yes":
		return "SQL thread stopped: " + st["Last_SQL_Error"]
	case st["Slave_IO_Running"] == "No":
		return "I/O thread stopped: " + st["Last_IO_Error"]
	}
	return ""
}

// mtrRowMap returns the first row of q by column name, nil if it has none.
func mtrRowMap(ctx context.Context, db *sql.DB, q string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	m := map[string]string{}
	for i, c := range cols {
		m[c] = vals[i].String
	}
	return m, rows.Err()
}

// waitParaply waits up to limit for paraply to apply pos: every
// transaction up to it is below the checkpoint's low-water mark or
// recorded in paraply.applied. It returns "" once it is, else paraply's
// error if it exited, or that it is too slow.
func (r *mtrRig) waitParaply(ctx context.Context, pos string, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if msg, ok := r.paraply.exited(); ok {
			return msg
		}
		if !r.tgt.Running() {
			return "its target's server exited"
		}
		if checkpointCovers(ctx, r.tdb, pos) {
			return ""
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Sprintf("did not apply %s within %s", pos, limit)
}

// checkpointCovers reports whether paraply's checkpoint on its target
// (tdb) says that every transaction up to pos is applied. paraply commits
// transactions out of order, so a GTID in paraply.applied says nothing
// about the ones before it: each must be there or below the mark. Rows
// keyed by a marker (a CREATE ... SELECT's DDL records "GTID/ddl1" before
// its rows are applied) do not count.
func checkpointCovers(ctx context.Context, tdb *sql.DB, pos string) bool {
	var mark string
	if err := tdb.QueryRowContext(ctx, "SELECT position FROM paraply.progress WHERE id = 1").Scan(&mark); err != nil {
		return false
	}
	rows, err := mtrRows(ctx, tdb, "SELECT gtid, IFNULL(others, '') FROM paraply.applied")
	if err != nil {
		return false
	}
	applied := map[[2]uint64]bool{}
	for _, row := range rows {
		for _, g := range append([]string{row[0]}, strings.Split(row[1], ",")...) {
			if d, n, ok := mtrGTID(g); ok {
				applied[[2]uint64{d, n}] = true
			}
		}
	}
	for _, g := range strings.Split(pos, ",") {
		d, n, ok := mtrGTID(g)
		if !ok {
			continue
		}
		low := uint64(0)
		for _, m := range strings.Split(mark, ",") {
			if md, mn, ok := mtrGTID(m); ok && md == d {
				low = mn
			}
		}
		for seq := low + 1; seq <= n; seq++ {
			if !applied[[2]uint64{d, seq}] {
				return false
			}
		}
	}
	return true
}

// mtrGTIDSyntax is a MariaDB GTID: domain-server-sequence.
var mtrGTIDSyntax = regexp.MustCompile(`^(\d+)-\d+-(\d+)$`)

// mtrGTID returns the domain and sequence number of a GTID, and false for
// anything else.
func mtrGTID(s string) (domain, seq uint64, ok bool) {
	m := mtrGTIDSyntax.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, 0, false
	}
	domain, err1 := strconv.ParseUint(m[1], 10, 32)
	seq, err2 := strconv.ParseUint(m[2], 10, 64)
	return domain, seq, err1 == nil && err2 == nil
}

// TestMTRGTID: a CREATE ... SELECT's DDL marker is not its GTID.
func TestMTRGTID(t *testing.T) {
	for s, want := range map[string]bool{"0-1-5": true, " 12-3-400": true, "0-1-5/ddl1": false, "": false, "0-1": false} {
		if _, _, ok := mtrGTID(s); ok != want {
			t.Errorf("mtrGTID(%q): %v, want %v", s, ok, want)
		}
	}
}
