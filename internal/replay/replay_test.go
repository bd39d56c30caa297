package replay

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
)

// rawTxns frames the fixture binlog of internal/binlog: one transaction of
// each kind MariaDB 10.11 writes (see its .sql beside it).
func rawTxns(t *testing.T) []*binlog.RawTxn {
	t.Helper()
	out, err := binlog.FrameFile("../binlog/testdata/mariadb-10.11-fidelity.000001")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 23 {
		t.Fatalf("%d transactions, want 23", len(out))
	}
	return out
}

// binlogEvents decodes the types of the events of a packet's BINLOG
// statement.
func binlogEvents(t *testing.T, p Packet) []replication.EventType {
	t.Helper()
	var types []replication.EventType
	for _, ev := range binlogRaw(t, p) {
		types = append(types, replication.EventType(ev[4]))
	}
	return types
}

// binlogRaw decodes the events of a packet's BINLOG statement.
func binlogRaw(t *testing.T, p Packet) [][]byte {
	t.Helper()
	i := strings.LastIndex(p.SQL, "BINLOG '")
	if i < 0 {
		return nil
	}
	if !strings.HasSuffix(p.SQL, "'") {
		t.Fatalf("BINLOG is not the last statement of %q", p.SQL)
	}
	raw, err := base64.StdEncoding.DecodeString(p.SQL[i+len("BINLOG '") : len(p.SQL)-1])
	if err != nil {
		t.Fatal(err)
	}
	var evs [][]byte
	for len(raw) > 0 {
		n := int(binary.LittleEndian.Uint32(raw[9:]))
		evs = append(evs, raw[:n])
		raw = raw[n:]
	}
	return evs
}

// TestSavepointsInPlace: the transaction that rolls back to a savepoint
// (0-1-23: insert 50, SAVEPOINT q, insert 51, ROLLBACK TO q, insert 52)
// becomes BINLOG, SAVEPOINT + BINLOG, ROLLBACK TO + BINLOG, each BINLOG last
// in its packet and carrying its table map with its rows.
func TestSavepointsInPlace(t *testing.T) {
	txns := rawTxns(t)
	var b Builder
	b.Exec("START TRANSACTION")
	if err := b.Txn(0, txns[22]); err != nil {
		t.Fatal(err)
	}
	b.Exec("INSERT INTO x VALUES (?)", 1)
	ps := b.Packets()
	var shape []string
	for _, p := range ps {
		plain := p.SQL
		if i := strings.LastIndex(plain, "BINLOG '"); i >= 0 {
			plain = plain[:i] + "BINLOG"
		}
		var evs []string
		for _, e := range binlogEvents(t, p) {
			evs = append(evs, e.String())
		}
		shape = append(shape, plain+" "+strings.Join(evs, ","))
	}
	want := []string{
		"START TRANSACTION;BINLOG TableMapEvent,WriteRowsEventV1",
		"SAVEPOINT `q`;BINLOG TableMapEvent,WriteRowsEventV1",
		"ROLLBACK TO `q`;BINLOG TableMapEvent,WriteRowsEventV1",
		"INSERT INTO x VALUES (?) ",
	}
	if strings.Join(shape, "\n") != strings.Join(want, "\n") {
		t.Fatalf("packets:\n%s\nwant:\n%s", strings.Join(shape, "\n"), strings.Join(want, "\n"))
	}
	if ps[3].Txn != -1 || len(ps[3].Args) != 1 || ps[0].Txn != 0 {
		t.Errorf("packet bookkeeping: %+v", ps)
	}
}

// TestChunks: a transaction larger than MaxChunk is cut between events;
// every chunk with rows starts with its statement's table maps (the server
// skips rows whose table map it lacks), and every rows event reaches the
// target once, in order.
func TestChunks(t *testing.T) {
	txns := rawTxns(t)
	var want []replication.EventType
	var b Builder
	b.MaxChunk = 100
	for i, rt := range txns {
		if i == 20 || i == 19 {
			continue // (0-1-20 and 0-1-21 hold statement-format DML)
		}
		if err := b.Txn(i, rt); err != nil {
			t.Fatalf("0-1-%d: %v", i+1, err)
		}
		for _, ev := range rt.Events {
			if binlog.IsRowsEvent(ev.Type()) {
				want = append(want, ev.Type())
			}
		}
	}
	var got []replication.EventType
	for _, p := range b.Packets() {
		evs := binlogEvents(t, p)
		rows := 0
		for _, e := range evs {
			if binlog.IsRowsEvent(e) {
				got = append(got, e)
				rows++
			}
		}
		if rows > 0 && evs[0] != replication.TABLE_MAP_EVENT {
			t.Errorf("packet %q: rows without a table map first (%v)", p.SQL[:min(len(p.SQL), 60)], evs)
		}
		if rows > 1 {
			t.Errorf("packet holds %d rows events over the chunk size", rows)
		}
		if rows > 0 {
			// Each chunk is a whole statement to the server, its events
			// still intact.
			raws := binlogRaw(t, p)
			last := raws[len(raws)-1]
			if binlog.RowsFlags(binlog.Event{Data: last})&binlog.RowsFlagStmtEnd == 0 {
				t.Errorf("chunk's last rows event lacks the statement-end flag")
			}
			for _, ev := range raws {
				if crc32.ChecksumIEEE(ev[:len(ev)-4]) != binary.LittleEndian.Uint32(ev[len(ev)-4:]) {
					t.Errorf("event of type %d has a bad checksum", ev[4])
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d events replayed, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("event %d is %s, want %s", i, got[i], want[i])
		}
	}
}

// TestStatementRefused: statement-format DML cannot be replayed as rows.
func TestStatementRefused(t *testing.T) {
	var b Builder
	if err := b.Txn(0, rawTxns(t)[20]); err == nil || !strings.Contains(err.Error(), "INSERT INTO audit") {
		t.Fatalf("error %v, want one naming the statement", err)
	}
}

// TestPieces: a transaction given in pieces cut anywhere, even inside a
// statement or right after its table maps, replays the same rows events,
// each chunk starting with its statement's table maps.
func TestPieces(t *testing.T) {
	txns := rawTxns(t)
	whole := txns[22] // insert 50, SAVEPOINT q, insert 51, ROLLBACK TO q, insert 52
	for cut := 1; cut < len(whole.Events); cut++ {
		var b Builder
		a := &binlog.RawTxn{Events: whole.Events[:cut], Format: whole.Format, Part: true}
		z := &binlog.RawTxn{Events: whole.Events[cut:], Format: whole.Format, Parts: 1}
		if err := b.Piece(0, a, true, false); err != nil {
			t.Fatal(err)
		}
		ps := b.Drain()
		if err := b.Piece(0, z, false, true); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, b.Packets()...)
		var rows, saves int
		for _, p := range ps {
			evs := binlogEvents(t, p)
			for _, e := range evs {
				if binlog.IsRowsEvent(e) {
					rows++
				}
			}
			if len(evs) > 0 && evs[0] != replication.TABLE_MAP_EVENT {
				t.Fatalf("cut at %d: a chunk starts with %s", cut, evs[0])
			}
			saves += strings.Count(p.SQL, "SAVEPOINT `q`") + strings.Count(p.SQL, "ROLLBACK TO `q`")
		}
		if rows != 3 || saves != 2 {
			t.Fatalf("cut at %d: %d rows events and %d savepoint statements replayed, want 3 and 2", cut, rows, saves)
		}
	}
}

// TestFragments: events whose BINLOG statement would exceed MaxStatement
// (one large row) go in two user variables, each set in a packet of its
// own, then BINLOG @a, @b, then the variables freed; the halves joined are
// the events' base64 text, and the plain statements before them go first.
func TestFragments(t *testing.T) {
	txns := rawTxns(t)
	var whole Builder
	if err := whole.Txn(0, txns[5]); err != nil { // 0-1-6: an update and its trigger's rows
		t.Fatal(err)
	}
	ps := whole.Packets()
	if len(ps) != 1 {
		t.Fatalf("%d packets without a bound, want 1", len(ps))
	}
	b64 := ps[0].SQL[len("BINLOG '") : len(ps[0].SQL)-1]

	b := Builder{MaxStatement: len(b64) - 1}
	b.Exec("START TRANSACTION")
	if err := b.Txn(7, txns[5]); err != nil {
		t.Fatal(err)
	}
	ps = b.Packets()
	if len(ps) != 4 {
		t.Fatalf("%d packets, want 4: %v", len(ps), ps)
	}
	first, ok := strings.CutPrefix(ps[0].SQL, "START TRANSACTION;SET "+fragment0+" = '")
	second, ok2 := strings.CutPrefix(ps[1].SQL, "SET "+fragment1+" = '")
	if !ok || !ok2 || first[:len(first)-1]+second[:len(second)-1] != b64 {
		t.Errorf("the fragments are not the events' base64 in two halves: %.80q, %.80q", ps[0].SQL, ps[1].SQL)
	}
	if want := "BINLOG " + fragment0 + ", " + fragment1; ps[2].SQL != want || ps[2].Txn != 7 {
		t.Errorf("third packet %q (txn %d), want %q (txn 7)", ps[2].SQL, ps[2].Txn, want)
	}
	if ps[0].Txn != -1 || ps[1].Txn != -1 || ps[3].Txn != -1 || !strings.Contains(ps[3].SQL, "= NULL") {
		t.Errorf("the other packets: %+v", []Packet{ps[0], ps[1], ps[3]})
	}
}
