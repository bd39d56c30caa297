package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHandover switches a target between MariaDB's own replication and
// paraply, both ways, while a counter load runs on the source throughout:
// native, paraply (stopped with SIGTERM, handover), native, paraply with
// out-of-order commits (SIGKILLed, handover fills the gaps from the
// source), native, paraply. Every switch starts exactly where the other
// left off: the counters are exact (nothing lost, nothing applied twice)
// and verify finds the target equal to the source.
func TestHandover(t *testing.T) {
	p := newReplPair(t, "ho")
	execAll(t, p.sdb, counterSetup()...)
	execAll(t, p.tdb, "SET GLOBAL gtid_slave_pos = '"+p.start+"'",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", p.src.Port),
		"START SLAVE")
	load := startCounterLoad(t, p.sdb, 4)
	relay := filepath.Join(t.TempDir(), "relay")
	base := []string{"--target", p.tgt.URL(), "--relay-dir", relay, "--log-level", "warn"}
	replicate := func(extra ...string) (*exec.Cmd, *bytes.Buffer) {
		var logs bytes.Buffer
		cmd := paraply(append(append([]string{"replicate", "--source", p.src.URL(), "--workers", "8", "--heartbeat", "200ms", "--http", ""}, base...), extra...)...)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &logs
	}
	native := func() {
		time.Sleep(time.Second)
		execAll(t, p.tdb, "STOP SLAVE")
	}
	handover := func(extra ...string) string {
		code, out := runParaply(t, nil, append(append([]string{"handover"}, base...), extra...)...)
		if code != 0 || !strings.Contains(out, "MASTER_USE_GTID=slave_pos") {
			t.Fatalf("handover: exit %d\n%s", code, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "gtid_slave_pos is") || strings.Contains(line, "missing") {
				t.Log(line)
			}
		}
		execAll(t, p.tdb, "START SLAVE")
		return out
	}

	native()
	cmd, logs := replicate()
	time.Sleep(1500 * time.Millisecond)
	// paraply holds the target: handover refuses, naming the holder.
	if code, out := runParaply(t, nil, append([]string{"handover"}, base...)...); code == 0 || !strings.Contains(out, "another paraply process") {
		t.Fatalf("handover while paraply runs: exit %d\n%s", code, out)
	} else if !regexp.MustCompile(`connection \d+ of root from 127\.0\.0\.1:\d+ holds the lock paraply\.target, since `).MatchString(lastLine(out)) {
		t.Errorf("handover while paraply runs does not name the holder: %s", lastLine(out))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("paraply after SIGTERM: %v\n%s", err, logs.String())
	}
	handover()

	// Out of order, with a gap for sure: a row lock on the target holds
	// back every transaction on counter 1 while the others commit; paraply
	// is SIGKILLed so. handover must fill the gap before it hands over.
	native()
	hold, err := p.tdb.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec("SELECT n FROM crash.c WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	cmd, _ = replicate("--preserve-commit-order=false")
	time.Sleep(1500 * time.Millisecond)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	_ = hold.Rollback()
	if out := handover("--source", p.src.URL(), "--log-level", "info"); !strings.Contains(out, "applying the transactions missing") {
		t.Fatalf("handover after an out-of-order SIGKILL found no gap to fill:\n%s", out)
	}

	// paraply refuses to start while the native replica runs.
	time.Sleep(500 * time.Millisecond)
	if code, out := runParaply(t, nil, append([]string{"replicate", "--source", p.src.URL()}, base...)...); code == 0 || !strings.Contains(out, "replication threads run") {
		t.Fatalf("replicate while the native replica runs: exit %d\n%s", code, out)
	}
	native()
	committed := load.finish(t)
	if code, out := runParaply(t, nil, append([]string{"replicate", "--source", p.src.URL(), "--until-caught-up"}, base...)...); code != 0 {
		t.Fatalf("final catch-up: exit %d\n%s", code, out)
	}
	counted(t, p.tdb, "target", committed)
	p.equal(t, "crash")
	t.Logf("%d transactions committed, applied exactly once across 5 hand-overs", committed)
}
