package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestSeveralSourcesHandover: two sources (domains 1 and 2, databases c1
// and c2) applied by two streams under the counter load. Each stream in
// turn is handed over to MariaDB's multi-source connection of its name
// (handover --name; CHANGE MASTER 'NAME'), while the other stream goes on
// with paraply beside that connection; then each is taken back by paraply
// from where its connection stopped (its domains of gtid_slave_pos). At
// the end the target holds each source's counters exactly: nothing lost,
// nothing applied twice.
func TestSeveralSourcesHandover(t *testing.T) {
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "mhtgt", ServerID: 2})
	tdb, err := tgt.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer tdb.Close()
	dir := t.TempDir()
	streams := []*stream{{name: "one", serverID: "771"}, {name: "two", serverID: "772"}}
	var loads []*counterLoad
	for i, s := range streams {
		s.startSource(t, "mh", i)
		execAll(t, s.sdb, counterSetupIn(fmt.Sprintf("c%d", i+1))...)
		s.target, s.http, s.relay = tgt, "", filepath.Join(dir, "relay-"+s.name)
		s.run(t)
	}
	for i, s := range streams {
		loads = append(loads, startCounterLoadIn(t, s.sdb, fmt.Sprintf("c%d", i+1), 2))
	}
	toNative := func(s *stream) {
		time.Sleep(2 * time.Second)
		if err := s.proc.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := <-s.proc.Exited; err != nil {
			t.Fatalf("stream %s after SIGTERM: %v\n%s", s.name, err, s.proc.Logs)
		}
		code, out := runParaply(t, nil, "handover", "--name", s.name, "--target", tgt.URL())
		if code != 0 || !strings.Contains(out, "CHANGE MASTER '"+s.name+"' TO") {
			t.Fatalf("handover --name %s: exit %d\n%s", s.name, code, out)
		}
		execAll(t, tdb, fmt.Sprintf("CHANGE MASTER '%s' TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", s.name, s.src.Port),
			"START SLAVE '"+s.name+"'")
	}
	toParaply := func(s *stream) {
		time.Sleep(2 * time.Second)
		execAll(t, tdb, "STOP SLAVE '"+s.name+"'")
		s.start = "" // from the checkpoint, or where the connection stopped when that is ahead
		s.run(t)
	}
	toNative(streams[0])
	toNative(streams[1])
	toParaply(streams[0])
	toParaply(streams[1])
	time.Sleep(2 * time.Second)
	for i, l := range loads {
		committed := l.finish(t)
		s := streams[i]
		s.caughtUp(t, tdb)
		countedIn(t, tdb, fmt.Sprintf("c%d", i+1), "stream "+s.name+" after its hand-over and back", committed)
		t.Logf("stream %s: %d transactions, each applied once", s.name, committed)
	}
}
