package relaylog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAppendHeld: held transactions stay out of the file and out of
// readers' sight until Flush, a plain Append, or HeldBytes of them; then
// they all appear at once.
func TestAppendHeld(t *testing.T) {
	recs := smallRecords(t, 200)
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir, Sync: SyncNever})
	seg := segPath(dir, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	appendAll(t, l, recs[:2])
	r := l.NewReader(3)
	defer r.Close()
	next := nextAsync(ctx, r)

	size := fileSize(t, seg)
	for i := 2; i < 5; i++ {
		idx, err := l.AppendHeld(ctx, recs[i])
		if err != nil || idx != uint64(i+1) {
			t.Fatalf("AppendHeld: index %d, %v; want %d", idx, err, i+1)
		}
	}
	if last, _ := l.Last(); last != 2 {
		t.Fatalf("Last = %d with three transactions held, want 2", last)
	}
	if res, _ := l.Resume(); res != recs[1].Resume {
		t.Fatalf("Resume = %q with three transactions held, want %q", res, recs[1].Resume)
	}
	if got := fileSize(t, seg); got != size {
		t.Fatalf("the segment grew from %d to %d bytes while transactions were held", size, got)
	}
	notYet(t, next, 50*time.Millisecond, "reading a held transaction")
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if res := within(t, next, 5*time.Second, "reading after Flush"); res.err != nil {
		t.Fatal(res.err)
	}
	if last, _ := l.Last(); last != 5 {
		t.Fatalf("Last = %d after Flush, want 5", last)
	}
	for i, e := range readAll(t, l, 3, 3) {
		checkEntry(t, e, uint64(i+3), recs[i+2])
	}

	// Held until they fill HeldBytes: all published by the append that
	// gets there.
	size = fileSize(t, seg)
	n := 5
	for ; n < len(recs); n++ {
		if _, err := l.AppendHeld(ctx, recs[n]); err != nil {
			t.Fatal(err)
		}
		if last, _ := l.Last(); last != 5 {
			if last != uint64(n+1) {
				t.Fatalf("Last = %d after holding up to %d", last, n+1)
			}
			break
		}
		if got := fileSize(t, seg); got != size {
			t.Fatalf("the segment grew from %d to %d bytes while transactions were held", size, got)
		}
	}
	if grew := fileSize(t, seg) - size; n == len(recs) || grew < HeldBytes {
		t.Fatalf("published after %d held transactions, %d bytes; want at least %d bytes", n-4, grew, HeldBytes)
	}
	n++

	// A plain Append publishes what was held before it.
	if _, err := l.AppendHeld(ctx, recs[n]); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, recs[n+1]); err != nil {
		t.Fatal(err)
	}
	if last, _ := l.Last(); last != uint64(n+2) {
		t.Fatalf("Last = %d after a plain Append, want %d", last, n+2)
	}
	for i, e := range readAll(t, l, 6, n-3) {
		checkEntry(t, e, uint64(i+6), recs[i+5])
	}
}

// TestAppendHeldWhenFull: an AppendHeld that waits for space shows what
// it held to readers first (they would otherwise wait for it as long as it
// waits for them), and goes on once they let the log purge.
func TestAppendHeldWhenFull(t *testing.T) {
	recs := smallRecords(t, 300)
	// Two sealed segments leave less than one segment's room: the wait
	// comes while the segment being written holds transactions.
	l := openLog(t, Options{Dir: t.TempDir(), MaxBytes: 16 << 10, SegmentBytes: 6 << 10, Sync: SyncNever})
	n := fill(t, recs, l.AppendHeld)
	if st := l.Stats(); n == len(recs) || st.Last != uint64(n) || st.BlockedTime == 0 {
		t.Fatalf("after waiting for space with %d appended: %+v; want them all published", n, st)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	consumed := consume(ctx, l, 1, len(recs))
	for ; n < len(recs); n++ {
		if _, err := l.AppendHeld(ctx, recs[n]); err != nil {
			t.Fatalf("AppendHeld %d: %v (log %+v)", n+1, err, l.Stats())
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := <-consumed; err != nil {
		t.Fatal(err)
	}
}

// TestFailedFlushDropsHeld: a flush that fails (EFBIG, in a helper
// process) drops every held transaction; the log goes on from the last
// one published.
func TestFailedFlushDropsHeld(t *testing.T) { checkAfterLimit(t, "fsize-held") }

// helperHeldFileSize holds transactions past RLIMIT_FSIZE, so that the
// flush fails, and then appends them again with the limit lifted.
func helperHeldFileSize(dir string) error {
	l, small, size, lift, err := atTheLimit(dir, Options{Sync: SyncNever})
	if err != nil {
		return err
	}
	ctx := context.Background()
	path := segPath(dir, 1)
	for i, r := range small[5:8] {
		if idx, err := l.AppendHeld(ctx, r); err != nil || idx != uint64(i+6) {
			return fmt.Errorf("holding: index %d, %w", idx, err)
		}
	}
	err = l.Flush()
	if !errors.Is(err, syscall.EFBIG) || !strings.Contains(err.Error(), path) {
		return fmt.Errorf("flush over the limit: %w", err)
	}
	if last, _ := l.Last(); last != 5 {
		return fmt.Errorf("Last = %d after a failed flush", last)
	}
	if res, _ := l.Resume(); res != small[4].Resume {
		return fmt.Errorf("Resume = %q after a failed flush, want %q", res, small[4].Resume)
	}
	if st, _ := os.Stat(path); st.Size() != size {
		return fmt.Errorf("held records not cut: %d bytes, want %d", st.Size(), size)
	}
	if err := lift(); err != nil {
		return err
	}
	for i, r := range small[5:] {
		if idx, err := l.AppendHeld(ctx, r); err != nil || idx != uint64(i+6) {
			return fmt.Errorf("holding after the limit is lifted: index %d, %w", idx, err)
		}
	}
	return l.Close() // flushes what is held
}
