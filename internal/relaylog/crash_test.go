//go:build linux

package relaylog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The tests below run the appender in a child process (this test binary,
// re-executed with RELAYLOG_HELPER set) so that it can be killed, or be
// given a file size limit, without touching the test process.

// TestMain runs the tests, and then fails the run if a goroutine they
// started (readers waiting for records, appenders) is still running; or it
// runs a helper.
func TestMain(m *testing.M) {
	var err error
	switch os.Getenv("RELAYLOG_HELPER") {
	case "":
		goleak.VerifyTestMain(m)
	case "append":
		err = helperAppend(os.Getenv("RELAYLOG_DIR"))
	case "fsize":
		err = helperFileSize(os.Getenv("RELAYLOG_DIR"))
	case "fsize-held":
		err = helperHeldFileSize(os.Getenv("RELAYLOG_DIR"))
	default:
		err = errors.New("unknown helper")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func helper(t *testing.T, name, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RELAYLOG_HELPER="+name, "RELAYLOG_DIR="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// crashRecord is the record the crash helper appends as index idx. The
// corpus has transactions larger than the write buffer, which take several
// write calls: a kill can tear those.
func crashRecord(recs []Record, idx uint64) Record {
	r := recs[(idx-1)%uint64(len(recs))]
	r.Resume = "r" + strconv.FormatUint(idx, 10)
	return r
}

// helperAppend appends until it is killed, printing each index once
// Append has returned it.
func helperAppend(dir string) error {
	recs, err := loadCorpus()
	if err != nil {
		return err
	}
	l, err := Open(Options{Dir: dir, SegmentBytes: 256 << 10, Sync: SyncNever})
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	for {
		last, _ := l.Last()
		idx, err := l.Append(context.Background(), crashRecord(recs, last+1))
		if err != nil {
			return err
		}
		fmt.Fprintln(out, idx)
		out.Flush()
	}
}

// TestSIGKILL kills an appending process at arbitrary moments: every
// transaction Append acknowledged survives (it reached the kernel), a torn
// record is cut, and the log reopens consistent, several times over.
func TestSIGKILL(t *testing.T) {
	recs := corpusRecords(t)
	dir := t.TempDir()
	for round := range 3 {
		// Read where the log ends before the helper starts: both open the
		// directory, and its lock lets only one of them at a time.
		start := openedLast(t, dir)
		cmd := helper(t, "append", dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it append a few hundred more, then kill it wherever it is.
		want := start + 300 + uint64(round)*397
		var acked uint64
		sc := bufio.NewScanner(stdout)
		for acked < want && sc.Scan() {
			if acked, err = strconv.ParseUint(sc.Text(), 10, 64); err != nil {
				t.Fatal(err)
			}
		}
		cmd.Process.Kill() // SIGKILL
		cmd.Wait()
		if acked < want {
			t.Fatalf("the helper stopped at %d: %v", acked, sc.Err())
		}

		var logged logBuffer
		l, err := Open(Options{Dir: dir, SegmentBytes: 256 << 10, Logger: logged.logger()})
		if err != nil {
			t.Fatal(err)
		}
		last, _ := l.Last()
		if strings.Contains(logged.String(), "cutting") {
			t.Logf("round %d: the kill tore a record; acknowledged %d, kept %d", round, acked, last)
		}
		if last < acked {
			t.Fatalf("round %d: acknowledged %d, Last after the kill %d", round, acked, last)
		}
		if r, _ := l.Resume(); r != "r"+strconv.FormatUint(last, 10) {
			t.Fatalf("round %d: Resume %q with Last %d", round, r, last)
		}
		for i, e := range readAll(t, l, 1, int(last)) {
			checkEntry(t, e, uint64(i+1), crashRecord(recs, uint64(i+1)))
		}
		l.Close()
	}
	if len(segFirsts(t, dir)) < 3 {
		t.Fatal("the crash test did not cross segments")
	}
}

// openedLast is Last of the log in dir, read by opening it (0 before the
// log exists).
func openedLast(t *testing.T, dir string) uint64 {
	if len(segFirsts(t, dir)) == 0 {
		return 0
	}
	l, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	last, _ := l.Last()
	return last
}

// atTheLimit opens a log in dir with opts (SegmentBytes 1 MiB), appends
// the first five of twenty small records and sets RLIMIT_FSIZE just above
// the segment's size: the kernel writes part of the next record and then
// fails with EFBIG (ENOSPC behaves the same for the log). lift restores
// the limit.
func atTheLimit(dir string, opts Options) (l *Log, small []Record, size int64, lift func() error, err error) {
	if small, err = loadSmall(20); err != nil {
		return nil, nil, 0, nil, err
	}
	opts.Dir, opts.SegmentBytes = dir, 1<<20
	if l, err = Open(opts); err != nil {
		return nil, nil, 0, nil, err
	}
	for _, r := range small[:5] {
		if _, err := l.Append(context.Background(), r); err != nil {
			return nil, nil, 0, nil, err
		}
	}
	st, err := os.Stat(segPath(dir, 1))
	if err != nil {
		return nil, nil, 0, nil, err
	}
	signal.Ignore(syscall.SIGXFSZ)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		return nil, nil, 0, nil, err
	}
	lim := old
	lim.Cur = uint64(st.Size()) + 20 // the next record is larger
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return nil, nil, 0, nil, err
	}
	return l, small, st.Size(), func() error { return syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) }, nil
}

// helperFileSize makes an append fail for real (atTheLimit), twice, and
// then appends the rest with the limit lifted.
func helperFileSize(dir string) error {
	l, small, size, lift, err := atTheLimit(dir, Options{Sync: SyncEveryTxn})
	if err != nil {
		return err
	}
	ctx := context.Background()
	path := segPath(dir, 1)
	for range 2 {
		_, err = l.Append(ctx, small[5])
		if !errors.Is(err, syscall.EFBIG) || !strings.Contains(err.Error(), path) {
			return fmt.Errorf("append over the limit: %w", err)
		}
		if last, _ := l.Last(); last != 5 {
			return fmt.Errorf("Last = %d after a failed append", last)
		}
		if st, _ := os.Stat(path); st.Size() != size {
			return fmt.Errorf("partial record not cut: %d bytes, want %d", st.Size(), size)
		}
	}
	if err := lift(); err != nil {
		return err
	}
	for _, r := range small[5:] {
		if _, err := l.Append(ctx, r); err != nil {
			return fmt.Errorf("append after the limit is lifted: %w", err)
		}
	}
	return l.Close()
}

func TestWriteErrorLeavesLogUsable(t *testing.T) { checkAfterLimit(t, "fsize") }

// checkAfterLimit runs helper name, which ends with the twenty small
// records appended around a write that failed, and checks that the log
// holds exactly them.
func checkAfterLimit(t *testing.T, name string) {
	t.Helper()
	dir := t.TempDir()
	if out, err := helper(t, name, dir).Output(); err != nil {
		t.Fatalf("helper: %v %s", err, out)
	}
	small := smallRecords(t, 20)
	l := openLog(t, Options{Dir: dir})
	if last, _ := l.Last(); last != 20 {
		t.Fatalf("Last = %d, want 20", last)
	}
	for i, e := range readAll(t, l, 1, 20) {
		checkEntry(t, e, uint64(i+1), small[i])
	}
}

// TestSyncInterval: the appender syncs itself when the interval has
// passed; Sync and Close sync what is left.
func TestSyncInterval(t *testing.T) {
	recs := smallRecords(t, 4)
	l := openLog(t, Options{Dir: t.TempDir(), Sync: SyncInterval(500 * time.Millisecond)})
	s0 := l.Stats().Syncs // creating the log
	appendAll(t, l, recs[:2])
	if s := l.Stats().Syncs; s != s0 {
		t.Fatalf("%d syncs within the interval", s-s0)
	}
	time.Sleep(550 * time.Millisecond)
	appendAll(t, l, recs[2:3])
	s1 := l.Stats().Syncs
	if s1 != s0+1 {
		t.Fatalf("%d syncs after the interval, want 1", s1-s0)
	}
	// Whether or not the next append syncs (it does if the machine is slow
	// enough for the interval to pass again), Sync leaves it synced once.
	appendAll(t, l, recs[3:])
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats().Syncs; s != s1+1 {
		t.Fatalf("%d syncs after Sync, want %d", s, s1+1)
	}
	if err := l.Sync(); err != nil || l.Stats().Syncs != s1+1 {
		t.Fatalf("Sync with nothing new: %v, %d syncs", err, l.Stats().Syncs)
	}
}
