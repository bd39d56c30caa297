package relaylog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/paraply/paraply/internal/binlog"
)

// Log is a relay log open for appending and reading. See the package doc
// for the format, the durability rules and the concurrency contract.
//
// Two mutexes guard it, always taken in the order wmu, then mu:
//   - wmu serializes writers: Append (including its wait for space), Sync
//     and the final flush of Close. It protects w, the segment being
//     written. File I/O of the writer happens under wmu only.
//   - mu protects the published state below it: what readers, Purge and
//     Stats see. It is held briefly, and by Purge while it unlinks files.
type Log struct {
	dir  string
	opts Options
	log  *slog.Logger
	lock *os.File // flock'ed LOCK file; released by Close

	wmu sync.Mutex
	w   writer

	mu     sync.Mutex
	segs   []segment // oldest first; the last one is being written
	bytes  int64     // sum of segs[i].size
	last   uint64    // index of the last transaction appended
	gtid   binlog.GTID
	resume string
	closed bool
	// sealed says nothing more is appended in this run (Seal): a reader
	// past the last transaction gets io.EOF instead of waiting.
	sealed bool
	// purgeUpTo is the highest index Purge was given: segments whose
	// transactions are all at or below it are deleted as soon as they are
	// sealed, without waiting for another Purge.
	purgeUpTo uint64
	// wake is closed, and set to nil, whenever the state changes: an
	// append, a purge, Close. A waiter creates it if it is nil. Waiting on
	// a channel rather than a sync.Cond lets waiters select on ctx.Done().
	wake chan struct{}
	// blockedSince is when the waiting Append started to wait for space
	// (zero when none waits); blocked is the total of finished waits.
	blockedSince time.Time
	blocked      time.Duration
	appended     uint64
	appendedB    int64
	syncs        uint64
	purged       uint64
}

// Stats is a snapshot of a Log's state and counters.
type Stats struct {
	// First and Last are the oldest and newest indexes in the log; First is
	// Last+1 when it holds no transaction.
	First, Last uint64
	// Segments is the number of segment files, Bytes their total size.
	Segments int
	Bytes    int64
	MaxBytes int64
	// Appended and AppendedBytes count transactions appended, and bytes
	// written for them (records and segment preambles), since Open.
	Appended      uint64
	AppendedBytes int64
	// Syncs counts fsyncs of segment files since Open.
	Syncs uint64
	// PurgedSegments counts segments deleted by Purge since Open.
	PurgedSegments uint64
	// Blocked reports whether an Append is waiting for space now.
	Blocked bool
	// BlockedTime is the total time Appends have waited for space since
	// Open, including a wait in progress: back-pressure from the applier.
	BlockedTime time.Duration
}

// Open opens the log in opts.Dir, creating it if needed, and recovers from
// a crash: it checks the last segment and truncates it at the first torn or
// damaged record (logging what it cut). See the package doc. The
// directory it makes and the files it writes are the process user's alone
// (0700, 0600), whatever the umask: the log holds what the source's binlog
// holds, the passwords of account statements among it (docs/security.md).
func Open(opts Options) (*Log, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("relaylog: %w", err)
	}
	lock, err := lockDir(filepath.Join(opts.Dir, "LOCK"))
	if err != nil {
		return nil, err
	}
	l := &Log{dir: opts.Dir, opts: opts, log: opts.Logger.With("component", "relaylog"), lock: lock}
	if err := l.load(); err != nil {
		lock.Close()
		return nil, err
	}
	return l, nil
}

func (l *Log) path(first uint64) string { return filepath.Join(l.dir, segName(first)) }

// load builds the Log's state from the directory.
func (l *Log) load() error {
	firsts, err := listSegments(l.dir)
	if err != nil {
		return err
	}
	if len(firsts) == 0 {
		return l.create(1, position{})
	}
	var t tail
	for {
		first := firsts[len(firsts)-1]
		t, err = recoverSegment(l.path(first), first, l.log)
		if err == nil {
			break
		}
		var bad *badPreambleError
		if !errors.As(err, &bad) {
			return err
		}
		if len(firsts) == 1 {
			// Nothing older says where the log stood: keep the index the
			// name gives, without a GTID or resume position.
			l.log.Warn("rewriting a segment whose preamble is damaged; the resume position is lost",
				"segment", l.path(first), "size", bad.size, "reason", bad.err)
			return l.create(first, position{last: first - 1})
		}
		l.log.Warn("removing the last segment, whose preamble is damaged",
			"segment", l.path(first), "size", bad.size, "reason", bad.err)
		if err := os.Remove(l.path(first)); err != nil {
			return fmt.Errorf("relaylog: %w", err)
		}
		firsts = firsts[:len(firsts)-1]
	}
	for _, first := range firsts[:len(firsts)-1] {
		st, err := os.Stat(l.path(first))
		if err != nil {
			return fmt.Errorf("relaylog: %w", err)
		}
		l.segs = append(l.segs, segment{first: first, size: st.Size()})
		l.bytes += st.Size()
	}
	active := firsts[len(firsts)-1]
	if err := l.w.open(l.path(active), active, t, l.opts.Sync.interval() >= 0); err != nil {
		return fmt.Errorf("relaylog: %w", err)
	}
	l.segs = append(l.segs, segment{first: active, size: t.end})
	l.bytes += t.end
	l.last, l.gtid, l.resume = t.last, t.gtid, t.resume
	l.syncs = l.w.syncs
	return nil
}

// create starts a log whose only segment is new, named first, as at the
// very beginning or when recovery found nothing to trust.
func (l *Log) create(first uint64, pos position) error {
	doSync := l.opts.Sync.interval() >= 0
	f, size, err := createSegment(l.dir, first, pos, doSync)
	if err != nil {
		return fmt.Errorf("relaylog: %w", err)
	}
	l.w.start(f, l.path(first), first, size, pos)
	if doSync {
		l.w.syncs++
	}
	l.syncs = l.w.syncs
	l.segs = []segment{{first: first, size: size}}
	l.bytes = size
	l.last, l.gtid, l.resume = pos.last, pos.gtid, pos.resume
	return nil
}

// Close flushes and syncs the segment being written and closes the log.
// Appends waiting for space return ErrClosed; later calls of Append, Sync,
// Purge and Reader.Next return ErrClosed. Close is idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.wakeLocked()
	l.mu.Unlock()

	l.wmu.Lock()
	err := l.w.repair()
	if err == nil {
		err = l.commit(true)
	}
	if cerr := l.w.f.Close(); err == nil {
		err = cerr
	}
	l.wmu.Unlock()
	if lerr := l.lock.Close(); err == nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("relaylog: close: %w", err)
	}
	return nil
}

// Purge says that the transactions with an index of at most upTo are no
// longer needed, and deletes the segments that hold nothing else, oldest
// first. The segment being written is never deleted; once Append seals it,
// it is deleted then if it qualifies, so a single Purge after the applier
// caught up is enough to let a blocked Append go on. Readers that would
// read a deleted index get ErrPurged.
func (l *Log) Purge(upTo uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.purgeUpTo = max(l.purgeUpTo, upTo)
	return l.purgeLocked()
}

// purgeLocked deletes the sealed segments at or below purgeUpTo. l.mu is
// held: unlinking is quick, and readers must not find a listed segment
// gone.
func (l *Log) purgeLocked() error {
	n := 0
	var err error
	for len(l.segs) > 1 && l.segs[1].first-1 <= l.purgeUpTo {
		s := l.segs[0]
		if rerr := os.Remove(l.path(s.first)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = fmt.Errorf("relaylog: purge: %w", rerr)
			break
		}
		l.segs = l.segs[1:]
		l.bytes -= s.size
		l.purged++
		n++
	}
	if n > 0 {
		l.wakeLocked()
	}
	return err
}

// First is the index of the oldest transaction in the log, or Last()+1 when
// it holds none.
func (l *Log) First() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.segs[0].first
}

// Last is the index and GTID of the last transaction appended; index 0 if
// there was never one.
func (l *Log) Last() (uint64, binlog.GTID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, l.gtid
}

// Resume returns the resume position stored with the last transaction
// appended (Record.Resume), and false when there is none: the receiver then
// starts from the target's checkpoint.
func (l *Log) Resume() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resume, l.resume != ""
}

// Stats returns a snapshot of the log's state and counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Stats{
		First:          l.segs[0].first,
		Last:           l.last,
		Segments:       len(l.segs),
		Bytes:          l.bytes,
		MaxBytes:       l.opts.MaxBytes,
		Appended:       l.appended,
		AppendedBytes:  l.appendedB,
		Syncs:          l.syncs,
		PurgedSegments: l.purged,
		Blocked:        !l.blockedSince.IsZero(),
		BlockedTime:    l.blocked,
	}
	if s.Blocked {
		s.BlockedTime += time.Since(l.blockedSince)
	}
	return s
}

// wakeLocked wakes every goroutine waiting for a change. l.mu is held.
func (l *Log) wakeLocked() {
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}

// Seal says that this run appends nothing more (a producer whose input
// ended: binlog files, all appended). Readers that reach the end of the
// log then return io.EOF: the end of a run flows down the pipeline with
// the data. The seal is not recorded on disk: a log opened again can be
// appended to.
func (l *Log) Seal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sealed = true
	l.wakeLocked()
}

// waitLocked returns a channel closed at the next change. l.mu is held.
func (l *Log) waitLocked() <-chan struct{} {
	if l.wake == nil {
		l.wake = make(chan struct{})
	}
	return l.wake
}

// locate finds the segment that holds index idx and how far its published
// records reach. ok is false when idx has not been appended yet; wait is
// then closed at the next change.
func (l *Log) locate(idx uint64) (seg segment, ok bool, wait <-chan struct{}, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return segment{}, false, nil, ErrClosed
	case idx < l.segs[0].first:
		return segment{}, false, nil, fmt.Errorf("relaylog: index %d: %w (the oldest is %d)", idx, ErrPurged, l.segs[0].first)
	case idx > l.last && l.sealed:
		return segment{}, false, nil, io.EOF
	case idx > l.last:
		return segment{}, false, l.waitLocked(), nil
	}
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].first > idx }) - 1
	return l.segs[i], true, nil, nil
}

// badPreambleError says that a segment's header or POSITION record is
// damaged, so nothing in it can be trusted.
type badPreambleError struct {
	size int64
	err  error
}

func (e *badPreambleError) Error() string { return e.err.Error() }

// tail is what recovery learned from the last segment.
type tail struct {
	end    int64 // end of the last good record
	txns   int   // TXN records kept
	last   uint64
	gtid   binlog.GTID
	resume string
	format *binlog.Format
}

// recoverSegment reads the last segment, truncates it after its last good
// record and returns where the log stands. A damaged preamble is a
// *badPreambleError; I/O errors are returned as they are.
func recoverSegment(path string, first uint64, log *slog.Logger) (tail, error) {
	st, err := os.Stat(path)
	if err != nil {
		return tail{}, fmt.Errorf("relaylog: %w", err)
	}
	size := st.Size()
	c, err := openCursor(path, first, size)
	if err != nil {
		if isCorrupt(err) {
			return tail{}, &badPreambleError{size: size, err: err}
		}
		return tail{}, fmt.Errorf("relaylog: %w", err)
	}
	defer c.Close()
	// The first record is the POSITION record (step enforces it).
	switch _, err := c.step(size); {
	case errors.Is(err, errEnd):
		return tail{}, &badPreambleError{size: size, err: errors.New("no POSITION record")}
	case isCorrupt(err):
		return tail{}, &badPreambleError{size: size, err: err}
	case err != nil:
		return tail{}, err
	}
	t := tail{last: c.pos.last, gtid: c.pos.gtid, resume: c.pos.resume}
	// pieces is where the PART records of a transaction whose last piece
	// is missing begin (-1: none); format the FORMAT in effect there.
	pieces, format := int64(-1), c.format
	for {
		t.end = c.off
		e, err := c.step(size)
		if errors.Is(err, errEnd) {
			break
		}
		if err != nil {
			if !isCorrupt(err) {
				return tail{}, err
			}
			log.Warn("cutting a torn or damaged tail", "segment", path, "offset", c.off,
				"bytes", size-c.off, "last_index", t.last, "reason", err)
			if err := os.Truncate(path, c.off); err != nil {
				return tail{}, fmt.Errorf("relaylog: cutting the tail: %w", err)
			}
			break
		}
		switch {
		case c.part != nil && pieces < 0:
			pieces, format = t.end, c.format
		case e != nil:
			pieces = -1
			t.txns++
			t.last, t.gtid, t.resume = e.Index, e.GTID, e.Resume
		}
	}
	t.format = c.format
	if pieces >= 0 {
		// The source sends the whole transaction again from the resume
		// position of the last one kept.
		log.Warn("cutting the pieces of a transaction whose end was not appended", "segment", path, "offset", pieces,
			"bytes", t.end-pieces, "last_index", t.last)
		if err := os.Truncate(path, pieces); err != nil {
			return tail{}, fmt.Errorf("relaylog: cutting the tail: %w", err)
		}
		t.end, t.format = pieces, format
	}
	return t, nil
}
