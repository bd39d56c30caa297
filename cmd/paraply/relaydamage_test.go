package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/faults"
)

// relayRig is a pair with paraply applying through a proxy on the target,
// so that a test can hold applying back while the relay log fills.
type relayRig struct {
	*replPair
	proxy *faults.Proxy
	relay string
	args  []string
	next  int // next id for rl.t
}

func newRelayRig(t *testing.T, name string) *relayRig {
	t.Helper()
	p := newReplPair(t, name)
	proxy, err := faults.NewProxy(net.JoinHostPort(p.tgt.Host, strconv.Itoa(p.tgt.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	r := &relayRig{replPair: p, proxy: proxy, relay: filepath.Join(t.TempDir(), "relay"), next: 1}
	// Small segments (the relay log cuts a segment at a quarter of
	// --relay-max-bytes), so that a few hundred transactions fill several.
	r.args = []string{"replicate", "--source", p.src.URL(), "--target", proxy.URL("root"), "--workers", "4",
		"--relay-dir", r.relay, "--relay-max-bytes", strconv.Itoa(256 << 10), "--start-gtid", p.start,
		"--heartbeat", "200ms", "--log-level", "info", "--http", ""}
	execAll(t, p.sdb, "CREATE DATABASE rl", "CREATE TABLE rl.t (id INT PRIMARY KEY, pad VARCHAR(400))")
	return r
}

// insert commits n transactions of about 400 bytes each on the source.
func (r *relayRig) insert(t *testing.T, n int) {
	t.Helper()
	for range n {
		execAll(t, r.sdb, fmt.Sprintf("INSERT INTO rl.t VALUES (%d, REPEAT('x', 380))", r.next))
		r.next++
	}
}

// fillUnapplied starts paraply, lets it catch up, then holds applying back
// (the proxy drops the target) while n more transactions arrive, waits
// until the relay log holds at least segs segments, and kills paraply.
func (r *relayRig) fillUnapplied(t *testing.T, n, segs int) {
	t.Helper()
	proc := faults.NewProcess(func() *exec.Cmd { return paraply(r.args...) })
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer proc.Kill()
	// Running, past its start (a target lost while starting is an error).
	if !proc.WaitLog(0, "msg=replicating", 30*time.Second) {
		t.Fatalf("paraply did not start:\n%s", proc.Logs())
	}
	r.waitCaughtUp(t, proc)
	r.proxy.Set(faults.Drop, 0)
	defer r.proxy.Set(faults.Pass, 0)
	r.insert(t, n)
	deadline := time.Now().Add(30 * time.Second)
	for {
		files, _ := faults.Segments(r.relay)
		if len(files) >= segs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the relay log has %d segments, want %d\n%s", len(files), segs, proc.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // let the receiver write what it has
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
}

// waitCaughtUp waits until the target's checkpoint covers the source's
// current position, with paraply (proc) running.
func (r *replPair) waitCaughtUp(t *testing.T, proc *faults.Process) {
	t.Helper()
	var want string
	if err := r.sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&want); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var have string
		_ = r.tdb.QueryRow("SELECT position FROM paraply.progress WHERE id = 1").Scan(&have)
		if have != "" && gtidIn(want, have) {
			return
		}
		if exited, err := proc.Exited(); exited {
			t.Fatalf("paraply exited: %v\n%s", err, proc.Logs())
		}
		if time.Now().After(deadline) {
			t.Fatalf("the target did not catch up with %s (checkpoint %q)\n%s", want, have, proc.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// targetSubset checks that every row of rl.t on the target is on the
// source with the same value: nothing wrong was applied.
func (r *relayRig) targetSubset(t *testing.T) int {
	t.Helper()
	var rows, same int
	if err := r.tdb.QueryRow("SELECT COUNT(*) FROM rl.t").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	rs, err := r.tdb.Query("SELECT id, pad FROM rl.t")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var id int
		var pad string
		if err := rs.Scan(&id, &pad); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := r.sdb.QueryRow("SELECT COUNT(*) FROM rl.t WHERE id = ? AND pad = ?", id, pad).Scan(&n); err != nil {
			t.Fatal(err)
		}
		same += n
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if same != rows {
		t.Errorf("%d of the target's %d rows are not on the source as they are", rows-same, rows)
	}
	return rows
}

// TestRelayDamageRefetched damages the relay log of a killed paraply while
// it holds transactions not applied yet, and restarts it: a bit flip or a
// cut in a sealed segment is reported with the file and offset and the
// relay log is fetched again from the source; damage in the last segment is
// cut off at start and fetched again. Either way the target ends equal.
func TestRelayDamageRefetched(t *testing.T) {
	r := newRelayRig(t, "rld")
	cases := []struct {
		name   string
		last   bool // damage the last segment, else the one before it
		cut    bool // truncate at the middle, else flip a bit there
		expect string
	}{
		{name: "bit flip in a sealed segment", expect: "the relay log is damaged"},
		{name: "sealed segment cut short", cut: true, expect: "the relay log is damaged"},
		{name: "bit flip in the last segment", last: true, expect: "cutting a torn or damaged tail"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			r.fillUnapplied(t, 300, 3)
			files, err := faults.Segments(r.relay)
			if err != nil || len(files) < 2 {
				t.Fatalf("segments: %v %v", files, err)
			}
			victim := files[len(files)-2]
			if c.last {
				victim = files[len(files)-1]
			}
			size, err := faults.Size(victim)
			if err != nil {
				t.Fatal(err)
			}
			if c.cut {
				err = os.Truncate(victim, size/2)
			} else {
				err = faults.FlipBit(victim, size/2)
			}
			if err != nil {
				t.Fatal(err)
			}
			code, out := runParaply(t, nil, append(r.args, "--until-caught-up")...)
			if code != 0 {
				t.Fatalf("exit status %d\n%s", code, out)
			}
			if !strings.Contains(out, c.expect) || !strings.Contains(out, filepath.Base(victim)) || !strings.Contains(out, "offset=") {
				t.Errorf("the log does not say %q with the segment %s and an offset:\n%s", c.expect, filepath.Base(victim), out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, c.expect) {
					t.Logf("%s: %s", c.name, line)
				}
			}
			r.targetSubset(t)
			r.equal(t, "rl")
		})
	}
}

// TestRelayDamageSourcePurged damages a sealed segment after the source has
// purged the binlogs it came from: paraply cannot fetch it again, so it
// stops with exit status 1 and an error naming the segment, the offset and
// the source's refusal, and applies nothing wrong.
func TestRelayDamageSourcePurged(t *testing.T) {
	r := newRelayRig(t, "rlp")
	r.fillUnapplied(t, 300, 3)
	files, err := faults.Segments(r.relay)
	if err != nil || len(files) < 3 {
		t.Fatalf("segments: %v %v", files, err)
	}
	victim := files[len(files)-2]
	size, _ := faults.Size(victim)
	if err := faults.FlipBit(victim, size/2); err != nil {
		t.Fatal(err)
	}
	// A binlog that a dump thread still reads is not purged: the killed
	// paraply's may linger until the source notices; the loop below ends it.
	execAll(t, r.sdb, "FLUSH BINARY LOGS")
	var file string
	var pos int64
	rows, err := r.sdb.QueryContext(context.Background(), "SHOW MASTER STATUS")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	dest := []any{&file, &pos}
	for range len(cols) - 2 {
		dest = append(dest, new(any))
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		execAll(t, r.sdb, "PURGE BINARY LOGS TO '"+file+"'")
		files, err := r.src.BinlogFiles(context.Background())
		if err == nil && len(files) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the source still has binlogs %v (%v)", files, err)
		}
		killDump(t, r.sdb)
		time.Sleep(100 * time.Millisecond)
	}

	code, out := runParaply(t, nil, append(r.args, "--until-caught-up")...)
	if code != 1 {
		t.Fatalf("exit status %d, want 1 (damaged %s)\n%s", code, victim, out)
	}
	msg := lastLine(out)
	for _, w := range []string{filepath.Base(victim), "offset", "relay log corrupt", "has purged the binlogs"} {
		if !strings.Contains(msg, w) {
			t.Errorf("the error does not say %q:\n%s", w, msg)
		}
	}
	t.Logf("%s", msg)
	rows2 := r.targetSubset(t)
	if rows2 >= r.next-1 {
		t.Errorf("the target has all %d rows although the damaged part could not be fetched again", rows2)
	}
}

// TestRelayRestartKeepsCheckpointNumbering starts paraply on an empty relay
// directory while the target has a checkpoint (the relay log was lost or
// started again): the new log numbers its transactions from 1, so the
// checkpoint's relay index must be reset with it. Otherwise a crash before
// the next checkpoint makes the restart take the old index for one in the
// new log and skip that many transactions.
func TestRelayRestartKeepsCheckpointNumbering(t *testing.T) {
	r := newRelayRig(t, "rln")
	r.insert(t, 200)
	if code, out := runParaply(t, nil, append(r.args, "--until-caught-up")...); code != 0 {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	if err := os.RemoveAll(r.relay); err != nil {
		t.Fatal(err)
	}
	r.insert(t, 300)
	// Start on the empty relay log and hold applying back from the start,
	// so that no checkpoint is written in the new numbering; then crash.
	proc := faults.NewProcess(func() *exec.Cmd { return paraply(r.args...) })
	mark := proc.Mark()
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer proc.Kill()
	if !proc.WaitLog(mark, "msg=replicating", 30*time.Second) {
		t.Fatalf("paraply did not start:\n%s", proc.Logs())
	}
	r.proxy.Set(faults.Stall, 0)
	deadline := time.Now().Add(30 * time.Second)
	for {
		files, _ := faults.Segments(r.relay)
		var bytes int64
		for _, f := range files {
			n, _ := faults.Size(f)
			bytes += n
		}
		if bytes > 300*400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the relay log did not receive the backlog:\n%s", proc.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	r.proxy.Set(faults.Pass, 0)
	if code, out := runParaply(t, nil, append(r.args, "--until-caught-up")...); code != 0 {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	r.equal(t, "rl")
}
