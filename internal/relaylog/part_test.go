package relaylog

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/binlog"
)

// pieces returns n records whose transactions stand for the pieces of one
// large transaction: the events of each, appended with AppendPart.
func pieces(t *testing.T, n int) []*binlog.RawTxn {
	t.Helper()
	var out []*binlog.RawTxn
	for _, r := range smallRecords(t, n) {
		rt := *r.Txn
		rt.Part = true
		out = append(out, &rt)
	}
	return out
}

// checkParts reads an entry's pieces back and compares them with want.
func checkParts(t *testing.T, l *Log, e *Entry, want []*binlog.RawTxn) {
	t.Helper()
	if len(e.Parts) != len(want) {
		t.Fatalf("index %d has %d pieces, want %d", e.Index, len(e.Parts), len(want))
	}
	for i, ref := range e.Parts {
		evs, err := l.ReadPart(ref)
		if err != nil {
			t.Fatalf("piece %d: %v", i, err)
		}
		if len(evs) != len(want[i].Events) {
			t.Fatalf("piece %d: %d events, want %d", i, len(evs), len(want[i].Events))
		}
		for j, ev := range want[i].Events {
			if evs[j].Pos != ev.Pos || !bytes.Equal(evs[j].Data, ev.Data) {
				t.Fatalf("piece %d event %d differs", i, j)
			}
		}
	}
}

// TestLargeTransactionPieces: the pieces of a transaction are invisible to
// readers until its last piece is appended; the entry then locates them,
// in order, without holding them, and the log goes on as before.
func TestLargeTransactionPieces(t *testing.T) {
	l := openLog(t, Options{Dir: t.TempDir()})
	recs := smallRecords(t, 3)
	appendAll(t, l, recs[:1])
	parts := pieces(t, 4)
	ctx := context.Background()
	for _, p := range parts {
		if err := l.AppendPart(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	r := l.NewReader(2)
	defer r.Close()
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	if e, err := r.Next(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a reader got %v, %v before the transaction's last piece", e, err)
	}
	cancel()
	appendAll(t, l, recs[1:])
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	e, err := r.Next(rctx)
	if err != nil {
		t.Fatal(err)
	}
	checkEntry(t, e, 2, recs[1])
	checkParts(t, l, e, parts)
	e, err = r.Next(rctx)
	if err != nil {
		t.Fatal(err)
	}
	checkEntry(t, e, 3, recs[2])
	if len(e.Parts) != 0 {
		t.Fatalf("index 3 has %d pieces", len(e.Parts))
	}
}

// TestDiscardPartial: the pieces of a transaction that the receiver will
// fetch again (its connection broke) go, and the next transaction takes
// the index as if they had never been.
func TestDiscardPartial(t *testing.T) {
	l := openLog(t, Options{Dir: t.TempDir()})
	recs := smallRecords(t, 2)
	appendAll(t, l, recs[:1])
	before := l.Stats().Bytes
	for _, p := range pieces(t, 3) {
		if err := l.AppendPart(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.DiscardPartial(); err != nil {
		t.Fatal(err)
	}
	if got := l.Stats().Bytes; got != before {
		t.Fatalf("log holds %d bytes after dropping the pieces, %d before them", got, before)
	}
	appendAll(t, l, recs[1:])
	e := readAll(t, l, 2, 1)[0]
	checkEntry(t, e, 2, recs[1])
	if len(e.Parts) != 0 {
		t.Fatalf("%d pieces survived DiscardPartial", len(e.Parts))
	}
}

// TestPiecesCutAtRecovery: pieces left without their transaction's end by
// a crash are cut when the log is opened again, and the log resumes after
// the last whole transaction.
func TestPiecesCutAtRecovery(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	recs := smallRecords(t, 2)
	appendAll(t, l, recs[:1])
	for _, p := range pieces(t, 3) {
		if err := l.AppendPart(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	l.Close() // the bytes reach the file, as after SIGKILL
	var logs logBuffer
	l = openLog(t, Options{Dir: dir, Logger: logs.logger()})
	if last, _ := l.Last(); last != 1 {
		t.Fatalf("last index %d after recovery, want 1", last)
	}
	if res, _ := l.Resume(); res != recs[0].Resume {
		t.Fatalf("resume %q, want %q", res, recs[0].Resume)
	}
	if !bytes.Contains([]byte(logs.String()), []byte("cutting the pieces")) {
		t.Errorf("recovery did not say it cut the pieces:\n%s", logs.String())
	}
	appendAll(t, l, recs[1:])
	e := readAll(t, l, 2, 1)[0]
	checkEntry(t, e, 2, recs[1])
	if len(e.Parts) != 0 {
		t.Fatalf("%d pieces survived recovery", len(e.Parts))
	}
}

// TestPiecesBeyondMaxBytes: a transaction larger than the log's bound is
// appended anyway (waiting for space it cannot get would be for ever), and
// reads back.
func TestPiecesBeyondMaxBytes(t *testing.T) {
	recs := smallRecords(t, 1)
	parts := pieces(t, 40)
	var size int64
	for _, p := range parts {
		size += int64(p.Bytes())
	}
	max := size / 4
	l := openLog(t, Options{Dir: t.TempDir(), MaxBytes: max, SegmentBytes: max})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, p := range parts {
		if err := l.AppendPart(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Append(ctx, recs[0]); err != nil {
		t.Fatal(err)
	}
	e := readAll(t, l, 1, 1)[0]
	checkParts(t, l, e, parts)
}

// TestDamagedPiece: a piece damaged on disk is reported as corruption by
// ReadPart, naming the file and offset.
func TestDamagedPiece(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir})
	parts := pieces(t, 2)
	for _, p := range parts {
		if err := l.AppendPart(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	appendAll(t, l, smallRecords(t, 1))
	e := readAll(t, l, 1, 1)[0]
	ref := e.Parts[1]
	flipByte(t, ref.Path, ref.Offset+ref.Size-3)
	_, err := l.ReadPart(ref)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Path != ref.Path || ce.Offset != ref.Offset {
		t.Fatalf("reading a damaged piece: %v", err)
	}
	if _, err := l.ReadPart(e.Parts[0]); err != nil {
		t.Fatalf("the other piece: %v", err)
	}
}
