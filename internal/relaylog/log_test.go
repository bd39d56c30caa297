package relaylog

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/binlog"
)

// TestRoundTrip appends real transactions of both flavors and several
// formats across many segments, then reads them back byte-identical, live
// and after reopening, from the start and from the middle.
func TestRoundTrip(t *testing.T) {
	recs := corpusRecords(t)
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentBytes: 16 << 10, MaxBytes: 64 << 20}
	l := openLog(t, opts)
	appendAll(t, l, recs)

	if n := len(segFirsts(t, dir)); n < 5 {
		t.Fatalf("%d segments, want several", n)
	}
	check := func(l *Log, from uint64) {
		t.Helper()
		for i, e := range readAll(t, l, from, len(recs)-int(from-1)) {
			checkEntry(t, e, from+uint64(i), recs[int(from)-1+i])
		}
	}
	check(l, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = openLog(t, opts)
	if last, g := l.Last(); last != uint64(len(recs)) || g != recs[len(recs)-1].GTID {
		t.Fatalf("after reopen Last = %d %s, want %d %s", last, g, len(recs), recs[len(recs)-1].GTID)
	}
	check(l, 1)
	check(l, uint64(len(recs)/2))
	// Every segment can be read on its own: start at each segment's first.
	for _, first := range segFirsts(t, dir) {
		check(l, first)
	}
}

// TestDecodeAfterRoundTrip checks that what comes back decodes as the
// original did: formats attach and GTIDs match.
func TestDecodeAfterRoundTrip(t *testing.T) {
	recs := corpusRecords(t)
	l := openLog(t, Options{Dir: t.TempDir(), SegmentBytes: 8 << 10})
	appendAll(t, l, recs)
	dec := binlog.NewDecoder()
	var prev *binlog.Format
	shared := 0
	for _, e := range readAll(t, l, 1, len(recs)) {
		tx, err := dec.Decode(e.Txn)
		if err != nil {
			t.Fatalf("index %d: %v", e.Index, err)
		}
		if tx.GTID != e.GTID {
			t.Fatalf("index %d: decoded GTID %s, stored %s", e.Index, tx.GTID, e.GTID)
		}
		if e.Txn.Format == prev {
			shared++
		}
		prev = e.Txn.Format
	}
	// Entries under one format share its *Format, across segments too.
	if shared < len(recs)-3*len(corpusFiles) {
		t.Fatalf("only %d of %d entries share the previous entry's Format", shared, len(recs))
	}
}

func TestReopenContinues(t *testing.T) {
	recs := smallRecords(t, 30)
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentBytes: 4 << 10}
	l := openLog(t, opts)
	if _, ok := l.Resume(); ok {
		t.Fatal("a new log has a resume position")
	}
	if l.First() != 1 {
		t.Fatalf("First of a new log = %d", l.First())
	}
	appendAll(t, l, recs[:20])
	l.Close()

	l = openLog(t, opts)
	if r, ok := l.Resume(); !ok || r != recs[19].Resume {
		t.Fatalf("Resume = %q %v, want %q", r, ok, recs[19].Resume)
	}
	if l.First() != 1 {
		t.Fatalf("First = %d", l.First())
	}
	appendAll(t, l, recs[20:])
	for i, e := range readAll(t, l, 1, 30) {
		checkEntry(t, e, uint64(i+1), recs[i])
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := l.Append(context.Background(), recs[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if err := l.Purge(10); !errors.Is(err, ErrClosed) {
		t.Fatalf("Purge after Close: %v", err)
	}
	if err := l.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close: %v", err)
	}
	if _, err := l.NewReader(1).Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}

	// An empty resume position is "none".
	l = openLog(t, opts)
	rec := recs[0]
	rec.Resume = ""
	appendAll(t, l, []Record{rec})
	if _, ok := l.Resume(); ok {
		t.Fatal("Resume reports a position after a record without one")
	}
}

func TestPurge(t *testing.T) {
	recs := smallRecords(t, 60)
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir, SegmentBytes: 4 << 10})
	appendAll(t, l, recs)
	firsts := segFirsts(t, dir)
	if len(firsts) < 4 {
		t.Fatalf("%d segments, want at least 4", len(firsts))
	}

	// A reader in the first segment, which the purge will delete.
	early := l.NewReader(1)
	defer early.Close()
	if _, err := early.Next(context.Background()); err != nil {
		t.Fatal(err)
	}

	// upTo in the middle of the third segment: the first two go.
	upTo := firsts[2] + 1
	if err := l.Purge(upTo); err != nil {
		t.Fatal(err)
	}
	if got := segFirsts(t, dir); got[0] != firsts[2] {
		t.Fatalf("after Purge(%d) segments start at %d, want %d", upTo, got[0], firsts[2])
	}
	if l.First() != firsts[2] {
		t.Fatalf("First = %d, want %d", l.First(), firsts[2])
	}
	// Nothing above upTo is gone, even in the segment that holds upTo.
	for i, e := range readAll(t, l, firsts[2], len(recs)-int(firsts[2])+1) {
		checkEntry(t, e, firsts[2]+uint64(i), recs[int(firsts[2])-1+i])
	}
	if _, err := early.Next(context.Background()); !errors.Is(err, ErrPurged) {
		t.Fatalf("reader positioned at a purged index: %v", err)
	}
	if _, err := l.NewReader(firsts[1]).Next(context.Background()); !errors.Is(err, ErrPurged) {
		t.Fatalf("new reader at a purged index: %v", err)
	}

	// Purging everything keeps the segment being written.
	active := firsts[len(firsts)-1]
	if err := l.Purge(math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	if got := segFirsts(t, dir); len(got) != 1 || got[0] != active {
		t.Fatalf("after purging everything: segments %v, want [%d]", got, active)
	}
	st := l.Stats()
	if st.Segments != 1 || st.First != active || st.Bytes != fileSize(t, segPath(dir, active)) {
		t.Fatalf("stats after purge: %+v", st)
	}
	appendAll(t, l, recs[:1])
	if e := readAll(t, l, 61, 1)[0]; e.Index != 61 {
		t.Fatalf("read %d after purge, want 61", e.Index)
	}
}

// TestPurgeRemembered: Purge(upTo) holds for segments sealed later, and a
// lower upTo does not take it back.
func TestPurgeRemembered(t *testing.T) {
	recs := smallRecords(t, 20)
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir, SegmentBytes: 1 << 20})
	appendAll(t, l, recs[:10])
	if err := l.Purge(10); err != nil { // all in the segment being written
		t.Fatal(err)
	}
	if err := l.Purge(4); err != nil {
		t.Fatal(err)
	}
	if got := segFirsts(t, dir); len(got) != 1 {
		t.Fatalf("segments %v: the one being written was deleted", got)
	}
	if err := l.roll(); err != nil {
		t.Fatal(err)
	}
	if got := segFirsts(t, dir); len(got) != 1 || got[0] != 11 || l.First() != 11 {
		t.Fatalf("after sealing, segments %v, First %d; want [11] and 11", got, l.First())
	}
	appendAll(t, l, recs[10:])
	readAll(t, l, 11, 10)
}

// TestRollSyncs: under any policy but SyncNever, sealing a segment syncs
// it, and a new segment's preamble is synced before it is used.
func TestRollSyncs(t *testing.T) {
	for _, tc := range []struct {
		policy  SyncPolicy
		perRoll uint64
	}{{SyncInterval(time.Hour), 2}, {SyncNever, 0}} {
		dir := t.TempDir()
		l := openLog(t, Options{Dir: dir, SegmentBytes: 4 << 10, Sync: tc.policy})
		s0 := l.Stats().Syncs // creating the first segment
		if s0 != tc.perRoll/2 {
			t.Fatalf("%s: %d syncs creating the log", tc.policy, s0)
		}
		appendAll(t, l, smallRecords(t, 30))
		rolls := uint64(len(segFirsts(t, dir)) - 1)
		if rolls < 3 {
			t.Fatalf("%d rolls", rolls)
		}
		if s := l.Stats().Syncs - s0; s != rolls*tc.perRoll {
			t.Fatalf("%s: %d syncs for %d rolls, want %d", tc.policy, s, rolls, rolls*tc.perRoll)
		}
	}
}

func TestStatsCountBytes(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir, SegmentBytes: 4 << 10, Sync: SyncEveryTxn})
	appendAll(t, l, smallRecords(t, 40))
	st := l.Stats()
	var onDisk int64
	for _, f := range segFirsts(t, dir) {
		onDisk += fileSize(t, segPath(dir, f))
	}
	if st.Bytes != onDisk || st.Segments != len(segFirsts(t, dir)) {
		t.Fatalf("Stats %+v, on disk %d bytes", st, onDisk)
	}
	if st.Appended != 40 || st.Last != 40 || st.Syncs < 41 || st.Blocked || st.BlockedTime != 0 {
		t.Fatalf("Stats %+v", st)
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir})
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v", err)
	}
	l.Close()
	l2 := openLog(t, Options{Dir: dir})
	l2.Close()
}

// TestPrivate: the directory Open makes and every file of the log are
// readable by their owner alone, under the usual umask 022 too.
func TestPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "relay")
	l := openLog(t, Options{Dir: dir, SegmentBytes: 16 << 10})
	appendAll(t, l, corpusRecords(t)[:50])
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 2 {
		t.Fatalf("%d files in the log, want its lock and segments", len(entries))
	}
	paths := []string{dir}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v: others than its owner may read it", path, fi.Mode().Perm())
		}
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{
		{},
		{Dir: "x", MaxBytes: 100},
		{Dir: "x", MaxBytes: 1 << 20, SegmentBytes: 2 << 20},
		{Dir: "x", SegmentBytes: -1},
		{Dir: "x", Sync: -3},
	} {
		if err := o.withDefaults().validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	o := Options{Dir: "x", MaxBytes: 8 << 20}.withDefaults()
	if o.SegmentBytes != 2<<20 || o.Sync.interval() != DefaultSyncInterval {
		t.Errorf("defaults: %+v", o)
	}
	if SyncInterval(0) != SyncEveryTxn || SyncInterval(time.Second).interval() != time.Second {
		t.Error("SyncInterval")
	}
	for p, want := range map[SyncPolicy]string{SyncNever: "never", SyncEveryTxn: "every-txn", 0: "interval 100ms"} {
		if p.String() != want {
			t.Errorf("%d.String() = %q", p, p.String())
		}
	}
}

func TestAppendRejects(t *testing.T) {
	l := openLog(t, Options{Dir: t.TempDir()})
	good := corpusRecords(t)[0]
	bad := func(mut func(r *Record)) Record {
		r := good
		txn := *good.Txn
		txn.Events = append([]binlog.Event(nil), good.Txn.Events...)
		r.Txn = &txn
		mut(&r)
		return r
	}
	for name, rec := range map[string]Record{
		"nil txn":     {},
		"no events":   bad(func(r *Record) { r.Txn.Events = nil }),
		"no format":   bad(func(r *Record) { r.Txn.Format = nil }),
		"short event": bad(func(r *Record) { r.Txn.Events[0].Data = r.Txn.Events[0].Data[:5] }),
		"two files":   bad(func(r *Record) { r.Txn.Events[1].Pos.File = "other" }),
		"bad gtid":    bad(func(r *Record) { r.GTID = binlog.GTID{Seq: 3} }),
	} {
		if _, err := l.Append(context.Background(), rec); err == nil || !strings.Contains(err.Error(), "relaylog") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if last, _ := l.Last(); last != 0 {
		t.Fatalf("rejected records were appended: Last = %d", last)
	}
}
