package relaylog

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
)

// TestTornTail cuts the last segment at every byte inside its last
// append (a TXN record, with or without a FORMAT record before it): Open
// must recover exactly the previous transaction, and appending must go on
// with the next index.
func TestTornTail(t *testing.T) {
	recs := corpusRecords(t)
	// Two transactions under one format, then one under another format
	// (its append writes FORMAT and TXN), then one more under that format.
	var sameFmt, otherFmt []Record
	for _, r := range recs {
		if r.Txn.Bytes() > 1024 {
			continue
		}
		switch {
		case len(sameFmt) < 2:
			sameFmt = append(sameFmt, r)
		case r.Txn.Format.Event.Pos.File != sameFmt[0].Txn.Format.Event.Pos.File && len(otherFmt) < 2:
			otherFmt = append(otherFmt, r)
		}
	}
	for name, tc := range map[string]struct {
		recs   []Record
		fmtRec bool // the last append wrote a FORMAT record too
	}{
		"txn":        {recs: append(append([]Record{}, sameFmt...), otherFmt...), fmtRec: false},
		"format+txn": {recs: append(append([]Record{}, sameFmt...), otherFmt[0]), fmtRec: true},
	} {
		t.Run(name, func(t *testing.T) {
			tornTail(t, tc.recs, tc.fmtRec)
		})
	}
}

func tornTail(t *testing.T, recs []Record, fmtRec bool) {
	// A sealed segment before the last one, so that Open has history.
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentBytes: 1 << 20}
	l := openLog(t, opts)
	appendAll(t, l, smallRecords(t, 3))
	if err := l.roll(); err != nil { // seal it; a test may call the writer directly
		t.Fatal(err)
	}
	appendAll(t, l, recs[:len(recs)-1])
	lastIdx, _ := l.Last()
	appendAll(t, l, recs[len(recs)-1:])
	l.Close()

	firsts := segFirsts(t, dir)
	lastSeg := segPath(dir, firsts[len(firsts)-1])
	recsOnDisk := scanRecords(t, lastSeg, firsts[len(firsts)-1])
	end := fileSize(t, lastSeg)
	txnOff := recsOnDisk[len(recsOnDisk)-1].off
	start := txnOff               // where the last append's bytes begin
	boundaries := []int64{txnOff} // record boundaries from start on, before end
	if fmtRec {
		if recsOnDisk[len(recsOnDisk)-2].typ != recFormat {
			t.Fatal("the last append did not write a FORMAT record")
		}
		start = recsOnDisk[len(recsOnDisk)-2].off
		boundaries = []int64{start, txnOff}
	}
	prev := recs[len(recs)-2]
	whole, err := os.ReadFile(lastSeg)
	if err != nil {
		t.Fatal(err)
	}
	d := copyDir(t, dir)
	path := segPath(d, firsts[len(firsts)-1])
	for cut := start; cut < end; cut++ {
		if err := os.WriteFile(path, whole[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		var logged logBuffer
		l, err := Open(Options{Dir: d, SegmentBytes: 1 << 20, Logger: logged.logger()})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if last, g := l.Last(); last != lastIdx || g != prev.GTID {
			t.Fatalf("cut at %d: Last = %d %s, want %d %s", cut, last, g, lastIdx, prev.GTID)
		}
		if r, _ := l.Resume(); r != prev.Resume {
			t.Fatalf("cut at %d: Resume = %q, want %q", cut, r, prev.Resume)
		}
		// What is left ends at the last record boundary at or before cut:
		// a FORMAT record whose TXN is gone is whole, and harmless.
		want := start
		for _, b := range boundaries {
			if b <= cut {
				want = b
			}
		}
		if got := fileSize(t, path); got != want {
			t.Fatalf("cut at %d: segment is %d bytes after Open, want %d", cut, got, want)
		}
		if cut > want && !strings.Contains(logged.String(), "cutting") {
			t.Fatalf("cut at %d: nothing logged", cut)
		}
		if cut == want && logged.String() != "" {
			t.Fatalf("cut at a record boundary logged %q", logged.String())
		}
		idx, err := l.Append(context.Background(), recs[len(recs)-1])
		if err != nil || idx != lastIdx+1 {
			t.Fatalf("cut at %d: Append = %d, %v; want %d", cut, idx, err, lastIdx+1)
		}
		all := readAll(t, l, 1, int(lastIdx+1))
		checkEntry(t, all[lastIdx-1], lastIdx, prev)
		checkEntry(t, all[lastIdx], lastIdx+1, recs[len(recs)-1])
		l.Close()
	}
}

// TestCorruptSealedSegment flips bits in a segment that is no longer
// written: Open does not look at it, and a Reader stops at the damaged
// record with an error naming file, offset and index.
func TestCorruptSealedSegment(t *testing.T) {
	recs := smallRecords(t, 40)
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentBytes: 8 << 10}
	l := openLog(t, opts)
	appendAll(t, l, recs)
	l.Close()
	firsts := segFirsts(t, dir)
	if len(firsts) < 3 {
		t.Fatalf("%d segments", len(firsts))
	}
	seg := firsts[1] // sealed, neither first nor last
	onDisk := scanRecords(t, segPath(dir, seg), seg)
	var victim recInfo // the third TXN record in it
	for i, n := 0, 0; i < len(onDisk); i++ {
		if onDisk[i].typ == recTxn {
			if n++; n == 3 {
				victim = onDisk[i]
			}
		}
	}
	for name, at := range map[string]int64{
		"length":  victim.off + 1,
		"crc":     victim.off + 5,
		"type":    victim.off + 8,
		"index":   victim.off + 10,
		"payload": (victim.off + victim.end) / 2,
		"last":    victim.end - 1,
	} {
		t.Run(name, func(t *testing.T) {
			d := copyDir(t, dir)
			path := segPath(d, seg)
			flipByte(t, path, at)
			l := openLog(t, Options{Dir: d, SegmentBytes: 8 << 10})
			if last, _ := l.Last(); last != uint64(len(recs)) {
				t.Fatalf("Open changed the log: Last = %d", last)
			}
			r := l.NewReader(1)
			defer r.Close()
			for i := uint64(1); i < victim.index; i++ {
				e, err := r.Next(context.Background())
				if err != nil {
					t.Fatalf("index %d: %v", i, err)
				}
				checkEntry(t, e, i, recs[i-1])
			}
			_, err := r.Next(context.Background())
			checkCorrupt(t, err, path, victim.off, victim.index)
			if _, err2 := r.Next(context.Background()); err2 != err { //nolint:errorlint // the very same error again, not one wrapping it
				t.Fatalf("error not sticky: %v", err2)
			}
			// The next segment reads fine on its own.
			readAll(t, l, firsts[2], len(recs)-int(firsts[2])+1)
		})
	}

	t.Run("header", func(t *testing.T) {
		d := copyDir(t, dir)
		path := segPath(d, seg)
		flipByte(t, path, 9) // the first index
		l := openLog(t, Options{Dir: d})
		_, err := l.NewReader(seg).Next(context.Background())
		checkCorrupt(t, err, path, 0, seg)
	})
	t.Run("wrong index", func(t *testing.T) {
		// An intact record out of sequence: checksums made right.
		d := copyDir(t, dir)
		path := segPath(d, seg)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[victim.off+recHeaderSize]++ // the low byte of the u64 index
		if err := os.WriteFile(path, fixChecksums(b), 0o644); err != nil {
			t.Fatal(err)
		}
		l := openLog(t, Options{Dir: d})
		r := l.NewReader(victim.index - 1)
		if _, err := r.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, err = r.Next(context.Background())
		checkCorrupt(t, err, path, victim.off, victim.index)
		if !strings.Contains(err.Error(), "expected") {
			t.Fatalf("error does not say what was expected: %v", err)
		}
	})
	t.Run("missing segment", func(t *testing.T) {
		d := copyDir(t, dir)
		l := openLog(t, Options{Dir: d})
		if err := os.Remove(segPath(d, seg)); err != nil {
			t.Fatal(err)
		}
		_, err := l.NewReader(seg + 1).Next(context.Background())
		checkCorrupt(t, err, segPath(d, seg), 0, seg+1)
	})
	t.Run("missing records", func(t *testing.T) {
		// The segment ends early: a truncated sealed segment.
		d := copyDir(t, dir)
		path := segPath(d, seg)
		if err := os.Truncate(path, victim.off); err != nil {
			t.Fatal(err)
		}
		l := openLog(t, Options{Dir: d})
		r := l.NewReader(victim.index - 1)
		if _, err := r.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, err := r.Next(context.Background())
		checkCorrupt(t, err, path, victim.off, victim.index)
	})
}

func checkCorrupt(t *testing.T, err error, path string, off int64, idx uint64) {
	t.Helper()
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
		t.Fatalf("got %v, want a CorruptError", err)
	}
	if ce.Path != path || ce.Offset != off || ce.Index != idx {
		t.Fatalf("CorruptError names %s offset %d index %d, want %s %d %d", ce.Path, ce.Offset, ce.Index, path, off, idx)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "offset") {
		t.Fatalf("message %q does not name the file and offset", msg)
	}
}

// TestCorruptLastSegment flips bits in the last segment: Open cuts it at the
// damaged record, whatever follows.
func TestCorruptLastSegment(t *testing.T) {
	recs := smallRecords(t, 12)
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir})
	appendAll(t, l, recs)
	l.Close()
	path := segPath(dir, 1)
	onDisk := scanRecords(t, path, 1)
	for _, victim := range []recInfo{onDisk[len(onDisk)-1], onDisk[len(onDisk)-5]} {
		d := copyDir(t, dir)
		flipByte(t, segPath(d, 1), victim.end-3)
		var logged logBuffer
		l := openLog(t, Options{Dir: d, Logger: logged.logger()})
		if last, _ := l.Last(); last != victim.index-1 {
			t.Fatalf("flip in index %d: Last = %d", victim.index, last)
		}
		if got := fileSize(t, segPath(d, 1)); got != victim.off {
			t.Fatalf("flip in index %d: size %d after Open, want %d", victim.index, got, victim.off)
		}
		if !strings.Contains(logged.String(), "checksum mismatch") {
			t.Fatalf("log does not say why: %q", logged.String())
		}
		readAll(t, l, 1, int(victim.index-1))
		appendAll(t, l, recs[victim.index-1:])
		for i, e := range readAll(t, l, 1, len(recs)) {
			checkEntry(t, e, uint64(i+1), recs[i])
		}
	}
}

// TestDamagedPreamble: a crash while a segment was being created leaves a
// last segment without a whole header or POSITION record.
func TestDamagedPreamble(t *testing.T) {
	recs := smallRecords(t, 10)
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir})
	appendAll(t, l, recs[:5])
	if err := l.roll(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if got := segFirsts(t, dir); len(got) != 2 || got[1] != 6 {
		t.Fatalf("segments %v", got)
	}
	preamble := fileSize(t, segPath(dir, 6))
	for cut := int64(0); cut < preamble; cut++ {
		d := copyDir(t, dir)
		if err := os.Truncate(segPath(d, 6), cut); err != nil {
			t.Fatal(err)
		}
		l := openLog(t, Options{Dir: d})
		if last, _ := l.Last(); last != 5 {
			t.Fatalf("cut at %d: Last = %d", cut, last)
		}
		if r, _ := l.Resume(); r != recs[4].Resume {
			t.Fatalf("cut at %d: Resume = %q", cut, r)
		}
		appendAll(t, l, recs[5:])
		for i, e := range readAll(t, l, 1, 10) {
			checkEntry(t, e, uint64(i+1), recs[i])
		}
		l.Close()
	}

	// The only segment: it is rewritten, keeping the index its name gives.
	d := copyDir(t, dir)
	os.Remove(segPath(d, 1))
	if err := os.Truncate(segPath(d, 6), 20); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, Options{Dir: d})
	if last, _ := l.Last(); last != 5 {
		t.Fatalf("Last = %d, want 5", last)
	}
	if _, ok := l.Resume(); ok {
		t.Fatal("a rewritten segment claims a resume position")
	}
	if idx, err := l.Append(context.Background(), recs[5]); err != nil || idx != 6 {
		t.Fatalf("Append = %d, %v", idx, err)
	}
}

// TestFormatRejected: an intact FORMAT record that binlog.ParseFormat
// rejects cannot be read past; the error is a CorruptError that carries
// the binlog package's error.
func TestFormatRejected(t *testing.T) {
	recs := smallRecords(t, 3)
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir})
	appendAll(t, l, recs)
	if err := l.roll(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	path := segPath(dir, 1)
	var fmtRec recInfo
	for _, ri := range scanRecords(t, path, 1) {
		if ri.typ == recFormat {
			fmtRec = ri
			break
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ev := recs[0].Txn.Format.Event
	typeAt := fmtRec.off + recHeaderSize + int64(stringSize(ev.Pos.File)+uvarintSize(uint64(ev.Pos.Offset))) + 4
	if b[typeAt] != 15 { // FORMAT_DESCRIPTION_EVENT
		t.Fatalf("byte at %d is %d, not the event type", typeAt, b[typeAt])
	}
	b[typeAt] = 2 // QUERY_EVENT
	if err := os.WriteFile(path, fixChecksums(b), 0o644); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, Options{Dir: dir})
	_, err = l.NewReader(1).Next(context.Background())
	checkCorrupt(t, err, path, fmtRec.off, 1)
	if !errors.Is(err, binlog.ErrCorrupt) {
		t.Fatalf("the binlog error is not chained: %v", err)
	}
}
