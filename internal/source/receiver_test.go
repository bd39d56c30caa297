package source

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/faults"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestReceiverReconnectsWhenSourceGoesSilent: the network between paraply
// and the source stops carrying packets without closing anything. The
// receiver notices after three heartbeat periods, and again while
// reconnecting (a handshake that gets no answer), and once packets flow
// again it receives what the source wrote meanwhile.
func TestReceiverReconnectsWhenSourceGoesSilent(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "source-silent", Binlog: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := src.Exec(ctx, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	proxy, err := faults.NewProxy(fmt.Sprintf("127.0.0.1:%d", src.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	ep, err := config.ParseEndpoint(proxy.URL("root"))
	if err != nil {
		t.Fatal(err)
	}
	relay, err := relaylog.Open(relaylog.Options{Dir: t.TempDir(), Sync: relaylog.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	const heartbeat = 200 * time.Millisecond
	rcv, err := NewReceiver(Config{Source: ep, ServerID: 4242, Flavor: binlog.FlavorMariaDB,
		Heartbeat: heartbeat, MaxBackoff: heartbeat}, relay)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rcv.Run(runCtx, "") }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	db := sandboxtest.DB(t, src)
	insertAndWait := func(id int) {
		t.Helper()
		if err := src.Exec(ctx, fmt.Sprintf("INSERT INTO d.t VALUES (%d)", id)); err != nil {
			t.Fatal(err)
		}
		var gtid string
		if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&gtid); err != nil {
			t.Fatal(err)
		}
		for {
			if _, g := relay.Last(); g.String() == gtid {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("the relay log did not receive %s: receiver %+v", gtid, rcv.Status())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	insertAndWait(1)

	proxy.Set(faults.Stall, 0)
	stalled := time.Now()
	if err := src.Exec(ctx, "INSERT INTO d.t VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	// Two failures: the stream going silent, then a reconnection whose
	// handshake gets no answer.
	for rcv.Status().Reconnects < 2 {
		if ctx.Err() != nil {
			t.Fatalf("the receiver did not notice the silence: %+v", rcv.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(stalled); took < 3*heartbeat {
		t.Errorf("the receiver gave up after %s of silence, before three heartbeat periods", took)
	}
	if st := rcv.Status(); !strings.Contains(st.LastError, "the source sent nothing") {
		t.Errorf("last error %q, want it to say the source sent nothing", st.LastError)
	}
	proxy.Set(faults.Pass, 0)
	insertAndWait(3)
	if st := rcv.Status(); st.Transactions < 3 || !st.Connected {
		t.Errorf("after the network came back: %+v, want 3 transactions (or more) and connected", st)
	}
}
