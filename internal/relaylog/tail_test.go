package relaylog

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/binlog"
)

// nextAsync runs r.Next(ctx) in a goroutine and delivers its result.
func nextAsync(ctx context.Context, r *Reader) <-chan result {
	ch := make(chan result, 1)
	go func() {
		e, err := r.Next(ctx)
		ch <- result{e, err}
	}()
	return ch
}

type result struct {
	e   *Entry
	err error
}

// fill appends recs with add until one waits for space longer than 30 ms
// (a deadline makes the wait time out instead of failing) and returns how
// many it appended.
func fill(t *testing.T, recs []Record, add func(context.Context, Record) (uint64, error)) int {
	t.Helper()
	for n, r := range recs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		_, err := add(ctx, r)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return len(recs)
}

// consume reads n entries from index from in a goroutine, purging each
// as an applier's checkpoint would, and delivers the first error, or nil.
func consume(ctx context.Context, l *Log, from uint64, n int) <-chan error {
	done := make(chan error, 1)
	go func() {
		r := l.NewReader(from)
		defer r.Close()
		for range n {
			e, err := r.Next(ctx)
			if err != nil {
				done <- err
				return
			}
			if err := l.Purge(e.Index); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return done
}

// notYet fails if ch delivers within d: the call is blocked.
func notYet[T any](t *testing.T, ch <-chan T, d time.Duration, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s did not block: %+v", what, v)
	case <-time.After(d):
	}
}

func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s", what, d)
		panic("unreachable")
	}
}

func TestTailing(t *testing.T) {
	recs := smallRecords(t, 3)
	l := openLog(t, Options{Dir: t.TempDir()})
	appendAll(t, l, recs[:1])
	r := l.NewReader(1)
	defer r.Close()
	if _, err := r.Next(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Blocked at the end, it wakes when another goroutine appends.
	got := nextAsync(context.Background(), r)
	notYet(t, got, 50*time.Millisecond, "Next at the end")
	appendAll(t, l, recs[1:2])
	res := within(t, got, 5*time.Second, "Next after an append")
	if res.err != nil {
		t.Fatal(res.err)
	}
	checkEntry(t, res.e, 2, recs[1])

	// Cancelling the context unblocks it promptly.
	ctx, cancel := context.WithCancel(context.Background())
	got = nextAsync(ctx, r)
	notYet(t, got, 20*time.Millisecond, "Next at the end")
	cancel()
	res = within(t, got, 2*time.Second, "Next after cancel")
	if !errors.Is(res.err, context.Canceled) {
		t.Fatalf("Next after cancel: %v", res.err)
	}
	// The reader still works after a cancelled wait.
	appendAll(t, l, recs[2:])
	if e := readAll(t, l, 3, 1)[0]; e.Index != 3 {
		t.Fatal(e.Index)
	}
	if e, err := r.Next(context.Background()); err != nil || e.Index != 3 {
		t.Fatalf("Next after a cancelled wait: %v %v", e, err)
	}

	// Close unblocks waiting readers.
	got = nextAsync(context.Background(), r)
	notYet(t, got, 20*time.Millisecond, "Next at the end")
	l.Close()
	if res := within(t, got, 2*time.Second, "Next after Close"); !errors.Is(res.err, ErrClosed) {
		t.Fatalf("Next after Close: %v", res.err)
	}
}

// TestReaderFromFuture waits for an index beyond the end.
func TestReaderFromFuture(t *testing.T) {
	recs := smallRecords(t, 5)
	l := openLog(t, Options{Dir: t.TempDir()})
	got := nextAsync(context.Background(), l.NewReader(4))
	appendAll(t, l, recs[:3])
	notYet(t, got, 30*time.Millisecond, "Next(4) with 3 appended")
	appendAll(t, l, recs[3:])
	res := within(t, got, 5*time.Second, "Next(4)")
	if res.err != nil {
		t.Fatal(res.err)
	}
	checkEntry(t, res.e, 4, recs[3])
}

func TestBackPressure(t *testing.T) {
	recs := smallRecords(t, 200)
	var logged logBuffer
	const maxBytes = 16 << 10
	// The log may exceed MaxBytes by one segment preamble while it waits.
	var slack int64
	for _, r := range recs {
		slack = max(slack, preambleSize(position{gtid: r.GTID, resume: r.Resume}))
	}
	l := openLog(t, Options{Dir: t.TempDir(), MaxBytes: maxBytes, SegmentBytes: 4 << 10, Logger: logged.logger()})

	n := fill(t, recs, l.Append)
	if n == len(recs) || n < 5 {
		t.Fatalf("log full after %d appends", n)
	}
	// The wait counted (how long depends on when the deadline, set before
	// Append started, caught up with it).
	st := l.Stats()
	if st.BlockedTime <= 0 || st.Blocked || st.Bytes > maxBytes+slack || st.Last != uint64(n) {
		t.Fatalf("after a timed-out wait: %+v", st)
	}

	// A blocked Append goes on when Purge frees space.
	done := make(chan error, 1)
	go func() {
		_, err := l.Append(context.Background(), recs[n])
		done <- err
	}()
	notYet(t, done, 50*time.Millisecond, "Append to a full log")
	for deadline := time.Now().Add(5 * time.Second); !l.Stats().Blocked; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Stats does not show the blocked Append")
		}
	}
	if err := l.Purge(uint64(n) / 2); err != nil {
		t.Fatal(err)
	}
	if err := within(t, done, 5*time.Second, "Append after Purge"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "waiting for purge") {
		t.Fatalf("back-pressure not logged: %q", logged.String())
	}
	n++

	// Sustained: a consumer purges behind a reader; every append gets
	// through, and the log never exceeds MaxBytes by more than the slack.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	consumed := consume(ctx, l, uint64(n)+1, len(recs)-n)
	for ; n < len(recs); n++ {
		if _, err := l.Append(ctx, recs[n]); err != nil {
			t.Fatalf("append %d: %v", n+1, err)
		}
		if b := l.Stats().Bytes; b > maxBytes+slack {
			t.Fatalf("log holds %d bytes, MaxBytes %d", b, maxBytes)
		}
	}
	if err := <-consumed; err != nil {
		t.Fatal(err)
	}

	// Close unblocks a waiting Append.
	go func() {
		var err error
		for err == nil {
			_, err = l.Append(context.Background(), recs[0])
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	l.Close()
	if err := within(t, done, 5*time.Second, "Append after Close"); !errors.Is(err, ErrClosed) {
		t.Fatalf("blocked Append after Close: %v", err)
	}
}

// TestMaxBytesOneSegment: when MaxBytes holds a single segment, Append
// seals the segment it writes, so a purge can always make room.
func TestMaxBytesOneSegment(t *testing.T) {
	recs := smallRecords(t, 100)
	l := openLog(t, Options{Dir: t.TempDir(), MaxBytes: 4 << 10, SegmentBytes: 4 << 10})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, rec := range recs {
		_, err := l.Append(ctx, rec)
		if err != nil {
			t.Fatalf("append %d: %v", i+1, err)
		}
		// The applier keeps up and purges what it applied. That record is
		// in the segment being written, so nothing is deleted now: when
		// the log is full, the next Append must seal that segment and
		// delete it, or it would wait for a Purge that never comes.
		if err := l.Purge(uint64(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTooLarge(t *testing.T) {
	recs := smallRecords(t, 2)
	l := openLog(t, Options{Dir: t.TempDir(), MaxBytes: 4 << 10})
	big := recs[0]
	txn := *big.Txn
	ev := binlog.Event{Data: make([]byte, 4<<10), Pos: txn.Events[0].Pos}
	copy(ev.Data, txn.Events[0].Data[:binlog.HeaderSize])
	txn.Events = append([]binlog.Event{ev}, txn.Events[1:]...)
	big.Txn = &txn
	_, err := l.Append(context.Background(), big)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "MaxBytes") {
		t.Fatalf("huge transaction: %v", err)
	}
	appendAll(t, l, recs)
	readAll(t, l, 1, 2)
}

// TestConcurrent runs an appender, several readers and a purger at once
// (meaningful under -race): every reader sees every entry intact, in order.
func TestConcurrent(t *testing.T) {
	recs := smallRecords(t, 600)
	l := openLog(t, Options{Dir: t.TempDir(), MaxBytes: 64 << 10, SegmentBytes: 8 << 10, Sync: SyncNever})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const readers = 3
	var wg sync.WaitGroup
	progress := make([]uint64, readers) // read up to, guarded by mu
	var mu sync.Mutex
	errs := make(chan error, readers+2)
	for i := range readers {
		wg.Go(func() {
			r := l.NewReader(1)
			defer r.Close()
			rnd := rand.New(rand.NewSource(int64(i)))
			for idx := uint64(1); idx <= uint64(len(recs)); idx++ {
				e, err := r.Next(ctx)
				if err != nil {
					errs <- err
					return
				}
				rec := recs[idx-1]
				if e.Index != idx || e.Resume != rec.Resume || len(e.Txn.Events) != len(rec.Txn.Events) ||
					string(e.Txn.Events[0].Data) != string(rec.Txn.Events[0].Data) {
					errs <- errors.New("entry differs")
					return
				}
				mu.Lock()
				progress[i] = idx
				mu.Unlock()
				if rnd.Intn(50) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Go(func() { // the purger: behind the slowest reader
		for ctx.Err() == nil {
			mu.Lock()
			low := progress[0]
			for _, p := range progress {
				low = min(low, p)
			}
			mu.Unlock()
			if err := l.Purge(low); err != nil {
				errs <- err
				return
			}
			if low == uint64(len(recs)) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	for _, rec := range recs {
		if _, err := l.Append(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := l.Stats(); st.PurgedSegments == 0 || st.Appended != uint64(len(recs)) {
		t.Fatalf("stats: %+v", st)
	}
}

// TestTooLargeForHeldSegment: a segment without transactions is never
// rolled, so what it holds (here a FORMAT record left by a cut tail) counts
// against the room for a transaction: ErrTooLarge, not a wait forever.
func TestTooLargeForHeldSegment(t *testing.T) {
	recs := corpusRecords(t)
	recA := recs[0]
	var recB Record
	for _, r := range recs {
		if !sameEvent(r.Txn.Format.Event, recA.Txn.Format.Event) && r.Txn.Bytes() > 1500 && r.Txn.Bytes() < 8000 {
			recB = r
			break
		}
	}
	if recB.Txn == nil {
		t.Fatal("no suitable record")
	}
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir})
	appendAll(t, l, []Record{recA})
	l.Close()
	onDisk := scanRecords(t, segPath(dir, 1), 1)
	if err := os.Truncate(segPath(dir, 1), onDisk[len(onDisk)-1].off); err != nil { // cut the TXN
		t.Fatal(err)
	}

	var w writer
	txnSize, _ := w.encodeTxn(recTxn, 1, recB)
	fresh := preambleSize(position{}) + formatRecSize(recB.Txn.Format.Event) + txnSize
	l = openLog(t, Options{Dir: dir, MaxBytes: fresh, SegmentBytes: fresh})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := l.Append(ctx, recB); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Append: %v, want ErrTooLarge", err)
	}
}
