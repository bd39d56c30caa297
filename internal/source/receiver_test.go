package source

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

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
	const heartbeat = 200 * time.Millisecond
	rcv, _ := runReceiver(t, Config{Source: ep, ServerID: 4242, Flavor: binlog.FlavorMariaDB,
		Heartbeat: heartbeat, MaxBackoff: heartbeat})

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
		waitReceived(ctx, t, rcv, gtid)
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

// TestReceiverRelaysWhatTheBinlogHolds: what the receiver reads from the
// stream reaches the relay log byte for byte, as the source's binlog files
// hold it, at the files and offsets they hold it: across rotations, with
// an event larger than one protocol packet (16 MiB), and with transactions
// larger than PartBytes relayed in pieces.
func TestReceiverRelaysWhatTheBinlogHolds(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "source-bytes", Binlog: true,
		ExtraArgs: []string{"--max-allowed-packet=64M"}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if err := src.Exec(ctx, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, b LONGBLOB)",
		"INSERT INTO d.t VALUES (1, 'one'), (2, 'two')",
		"FLUSH BINARY LOGS",
		// One rows event of 20 MB: the source sends it in two packets.
		"INSERT INTO d.t VALUES (3, REPEAT('x', 20000000))",
		// 40 rows events of 200 kB in one transaction: relayed in pieces.
		"INSERT INTO d.t SELECT seq + 10, REPEAT('y', 200000) FROM d.seq_1_to_40",
		"FLUSH BINARY LOGS",
		"UPDATE d.t SET b = 'small' WHERE id = 3",
	); err != nil {
		t.Fatal(err)
	}
	ep, err := config.ParseEndpoint(fmt.Sprintf("mysql://root@127.0.0.1:%d", src.Port))
	if err != nil {
		t.Fatal(err)
	}
	rcv, relay := runReceiver(t, Config{Source: ep, ServerID: 4243, Flavor: binlog.FlavorMariaDB, PartBytes: 1 << 20})

	db := sandboxtest.DB(t, src)
	var gtid string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&gtid); err != nil {
		t.Fatal(err)
	}
	waitReceived(ctx, t, rcv, gtid)

	paths, err := src.BinlogFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := binlog.FrameFile(paths...)
	if err != nil {
		t.Fatal(err)
	}
	// The status is at the end of the last transaction, which is not
	// always the end of the binlog: the source may write a binlog
	// checkpoint event after it, at any time.
	lastTxn := want[len(want)-1].Events
	end := lastTxn[len(lastTxn)-1]
	file, offset := filepath.Base(end.Pos.File), end.Pos.Offset+int64(len(end.Data))
	if st := rcv.Status(); st.SourceFile != file || st.SourceOffset != offset {
		t.Errorf("receiver status at %s:%d, the source's last transaction ends at %s:%d", st.SourceFile, st.SourceOffset, file, offset)
	}
	rd := relay.NewReader(1)
	defer rd.Close()
	pieces := 0
	for i, wt := range want {
		e, err := rd.Next(ctx)
		if err != nil {
			t.Fatalf("relay log entry %d: %v", i+1, err)
		}
		var got []binlog.Event
		for _, ref := range e.Parts {
			evs, err := relay.ReadPart(ref)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, evs...)
		}
		pieces += len(e.Parts)
		got = append(got, e.Txn.Events...)
		// The source sends annotate rows events (the statement's text)
		// only to a replica that asks for them; the receiver does not.
		wt.Events = slices.DeleteFunc(wt.Events, func(ev binlog.Event) bool {
			return ev.Type() == replication.MARIADB_ANNOTATE_ROWS_EVENT
		})
		if len(got) != len(wt.Events) {
			t.Fatalf("transaction %d (%s): %d events relayed, the binlog holds %d", i+1, e.GTID, len(got), len(wt.Events))
		}
		for j, ev := range got {
			w := wt.Events[j]
			if !bytes.Equal(ev.Data, w.Data) || filepath.Base(w.Pos.File) != ev.Pos.File || w.Pos.Offset != ev.Pos.Offset {
				t.Fatalf("transaction %d (%s) event %d: relayed %d bytes at %s, the binlog holds %d bytes at %s:%d",
					i+1, e.GTID, j, len(ev.Data), ev.Pos, len(w.Data), filepath.Base(w.Pos.File), w.Pos.Offset)
			}
		}
	}
	if pieces == 0 {
		t.Error("no transaction was relayed in pieces")
	}
}

// waitReceived waits until rcv has relayed the transaction gtid, the
// last of a single-domain stream. It waits on the receiver's status, which
// moves just after the relay log has the transaction: a test that waited
// on the relay log could read a status one transaction short.
func waitReceived(ctx context.Context, t *testing.T, rcv *Receiver, gtid string) {
	t.Helper()
	for rcv.Status().Position != gtid {
		if ctx.Err() != nil {
			t.Fatalf("the relay log did not receive %s: receiver %+v", gtid, rcv.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runReceiver runs a Receiver with cfg into a relay log of its own, from
// the beginning of the source's binlogs, until the test ends.
func runReceiver(t *testing.T, cfg Config) (*Receiver, *relaylog.Log) {
	t.Helper()
	relay, err := relaylog.Open(relaylog.Options{Dir: t.TempDir(), Sync: relaylog.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := NewReceiver(cfg, relay)
	if err != nil {
		relay.Close()
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rcv.Run(ctx, "") }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		relay.Close()
	})
	return rcv, relay
}
