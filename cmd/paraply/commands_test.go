package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestCommandsShareConfig: the file of settings a DBA writes for
// replicate serves every command: verify, skip, handover, status and apply
// read it too, each taking its own settings and stepping over the
// others'; a setting no command has is an error. apply, with its default
// flags, runs beside a replicate that holds the default status address.
// SIGTERM stops replicate with exit 0 and its final position in the log.
func TestCommandsShareConfig(t *testing.T) {
	p := newReplPair(t, "conf")
	execAll(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)", "INSERT INTO app.t VALUES (1, 1), (2, 2)")
	dir := t.TempDir()
	addr := freeAddr(t)
	conf := filepath.Join(dir, "paraply.conf")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("# replicate's settings, read by every command\n" +
		"source = " + p.src.URL() + "\n" +
		"target = " + p.tgt.URL() + "\n" +
		"relay-dir = " + filepath.Join(dir, "relay") + "\n" +
		"start-gtid = " + p.start + "\n" +
		"workers = 2\n" +
		"log-level = info\n" +
		"http = " + addr + "\n")

	// replicate in the background, then SIGTERM.
	var logs bytes.Buffer
	cmd := paraply("replicate", "--config", conf)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitApplied(t, p.tdb, p.sourcePos(t), exited, &logs)
	if code, out := runParaply(t, nil, "status", "--config", conf); code != 0 || !strings.Contains(out, "lag") {
		t.Errorf("status --config: exit %d\n%s", code, out)
	}
	// apply with its defaults beside it: no status server, so the default
	// address, held or not, is no obstacle.
	if l, err := net.Listen("tcp", "127.0.0.1:9104"); err == nil {
		defer l.Close()
	}
	files, err := p.src.BinlogFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	other := sandboxtest.ForTest(t, sandbox.Options{Name: "confapp", ServerID: 3})
	if code, out := runParaply(t, nil, append([]string{"apply", "--target", other.URL(), "--start-gtid", p.start}, files...)...); code != 0 {
		t.Errorf("apply with default flags beside a replicate: exit %d\n%s", code, out)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("replicate after SIGINT: %v, want exit 0\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("replicate did not stop on SIGINT\n%s", logs.String())
	}
	if last := lastLine(logs.String()); !strings.Contains(last, "stopped on a signal") || !strings.Contains(last, "position=0-1-") {
		t.Errorf("the last log line does not give the final position: %s", last)
	}

	// The others, from the same file.
	if code, out := runParaply(t, nil, "verify", "--config", conf); code != 0 {
		t.Errorf("verify --config: exit %d\n%s", code, out)
	}
	if code, out := runParaply(t, nil, "handover", "--config", conf); code != 0 || !strings.Contains(out, "gtid_slave_pos") {
		t.Errorf("handover --config: exit %d\n%s", code, out)
	}
	if code, out := runParaply(t, nil, "skip", "--config", conf, "0-1-999999"); code != 0 || !strings.Contains(out, "0-1-999999") {
		t.Errorf("skip --config: exit %d\n%s", code, out)
	}
	write("target = " + p.tgt.URL() + "\nwrokers = 2\n")
	if code, out := runParaply(t, nil, "skip", "--config", conf, "0-1-999998"); code != 1 || !strings.Contains(out, `unknown setting "wrokers"`) {
		t.Errorf("a misspelt setting: exit %d\n%s", code, out)
	}
}
