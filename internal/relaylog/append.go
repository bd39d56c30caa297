package relaylog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/paraply/paraply/internal/binlog"
)

// Record is one source transaction to append.
type Record struct {
	// Txn holds the transaction's raw events, all from one source file, and
	// the format description they were read under.
	Txn *binlog.RawTxn
	// GTID is the transaction's GTID, zero if it had none.
	GTID binlog.GTID
	// Resume is where the receiver would resume streaming just after this
	// transaction, in a form only the receiver interprets (e.g. a MariaDB
	// GTID position "0-1-100,1-2-5"). "" when it has none.
	Resume string
}

// writeBuffer is the size of the buffered writer in front of a segment.
const writeBuffer = 128 << 10

// writer is the segment being written. It belongs to Log.wmu.
type writer struct {
	f     *os.File
	bw    *bufio.Writer
	path  string
	first uint64
	size  int64 // end of the last complete record in the file
	txns  int   // TXN records in the segment
	// format is the FORMAT record in effect at the end of the segment.
	format *binlog.Format
	next   uint64   // index the next transaction gets
	pos    position // the last transaction, for the next POSITION record
	// dirty is set when bytes were written since the last fsync; damaged
	// when a failed write may have left bytes past size.
	dirty    bool
	damaged  bool
	lastSync time.Time
	syncs    uint64
	// meta holds the encoded TXN record except the events' bytes: the
	// record header and payload head up to cuts[0], then event i's prefix
	// in meta[cuts[i]:cuts[i+1]].
	meta []byte
	cuts []int
	// partial is where the PART records of the transaction being appended
	// start (-1 when none), and partialFormat the FORMAT in effect there:
	// DiscardPartial cuts back to them.
	partial       int64
	partialFormat *binlog.Format
	// heldBytes and heldTxns count the bytes and transactions of the
	// records written to bw since the last flush (none when heldBytes is
	// 0); pub is the writer's state after the last flushed record, which
	// readers see. A failed flush goes back to it.
	heldBytes int64
	heldTxns  int
	pub       writerState
}

// start makes f, a segment whose complete records end at size, the one
// being written.
func (w *writer) start(f *os.File, path string, first uint64, size int64, pos position) {
	w.f, w.path, w.first, w.size = f, path, first, size
	w.txns, w.format, w.next, w.pos = 0, nil, pos.last+1, pos
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(f, writeBuffer)
	} else {
		w.bw.Reset(f)
	}
	w.dirty, w.damaged, w.lastSync = false, false, time.Now()
	w.partial, w.partialFormat = -1, nil
	w.heldBytes, w.heldTxns, w.pub = 0, 0, w.state()
}

// open continues writing a segment that recovery has checked.
func (w *writer) open(path string, first uint64, t tail, doSync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.Seek(t.end, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	w.start(f, path, first, t.end, position{last: t.last, gtid: t.gtid, resume: t.resume})
	w.txns, w.format = t.txns, t.format
	w.pub = w.state()
	// Recovery may have cut the file: make the new size durable before
	// anything is appended after it.
	w.dirty = doSync
	return w.fsync()
}

// createSegment creates segment first with its header and POSITION record
// and, if doSync, makes both and the directory entry durable. Errors name
// the file.
func createSegment(dir string, first uint64, pos position, doSync bool) (*os.File, int64, error) {
	path := filepath.Join(dir, segName(first))
	b := encodeSegHeader(first, time.Now())
	b = appendRecord(b, recPosition, appendPosition(nil, pos))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, 0, err
	}
	_, err = f.Write(b)
	if err == nil && doSync {
		if err = f.Sync(); err == nil {
			err = syncDir(dir)
		}
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, 0, fmt.Errorf("creating %s: %w", path, err)
	}
	return f, int64(len(b)), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// fsync fsyncs the segment if anything was written to it since the last
// time; the buffer is flushed already (Log.commit). Errors name the file,
// as the writer's all do.
func (w *writer) fsync() error {
	if !w.dirty {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", w.path, err)
	}
	w.dirty, w.lastSync = false, time.Now()
	w.syncs++
	return nil
}

// repair cuts what a failed write left after the last complete record
// (w.size), so the log stays usable after ENOSPC and the like. Readers
// never read past the published size, so they cannot have seen those
// bytes.
func (w *writer) repair() error {
	if !w.damaged {
		return nil
	}
	if err := w.f.Truncate(w.size); err != nil {
		return fmt.Errorf("cutting a failed write from %s: %w", w.path, err)
	}
	if _, err := w.f.Seek(w.size, io.SeekStart); err != nil {
		return fmt.Errorf("cutting a failed write from %s: %w", w.path, err)
	}
	w.bw.Reset(w.f)
	w.damaged = false
	return nil
}

// formatRecord returns the FORMAT record to write before a transaction read
// under fm, or nil when the segment has it in effect already.
func (w *writer) formatRecord(fm *binlog.Format) []byte {
	if w.format != nil && (w.format == fm || sameEvent(w.format.Event, fm.Event)) {
		return nil
	}
	return appendRecord(nil, recFormat, appendFormat(nil, fm.Event))
}

// encodeTxn encodes the TXN record of rec at index idx into w.meta and
// w.cuts and returns its size; the checksum is left out (and ok is false)
// when the record is too large for its length field.
func (w *writer) encodeTxn(typ byte, idx uint64, rec Record) (size int64, ok bool) {
	evs := rec.Txn.Events
	b := append(w.meta[:0], 0, 0, 0, 0, 0, 0, 0, 0, typ)
	b = appendTxnHead(b, idx, rec.GTID, evs[0].Pos.File, rec.Resume, len(evs))
	w.cuts = append(w.cuts[:0], len(b))
	for _, ev := range evs {
		b = appendEventPrefix(b, ev)
		w.cuts = append(w.cuts, len(b))
	}
	w.meta = b
	payload := int64(len(b) - recHeaderSize)
	for _, ev := range evs {
		payload += int64(len(ev.Data))
	}
	if payload > maxPayload {
		return recHeaderSize + payload, false
	}
	crc := crc32.Update(0, castagnoli, b[8:w.cuts[0]])
	for i, ev := range evs {
		crc = crc32.Update(crc, castagnoli, b[w.cuts[i]:w.cuts[i+1]])
		crc = crc32.Update(crc, castagnoli, ev.Data)
	}
	putRecHeader(b, int(payload), crc)
	return recHeaderSize + payload, true
}

// write puts fmtRec (if any) and the encoded TXN record in the buffer.
// The buffer may hand part of them to the kernel; a write that fails there
// is returned by the next Flush (a bufio.Writer keeps its first error).
func (w *writer) write(fmtRec []byte, evs []binlog.Event) {
	w.bw.Write(fmtRec)
	w.bw.Write(w.meta[:w.cuts[0]])
	for i, ev := range evs {
		w.bw.Write(w.meta[w.cuts[i]:w.cuts[i+1]])
		w.bw.Write(ev.Data)
	}
}

// Append appends one transaction and returns its index. It waits while the
// log is full (see Options.MaxBytes) until Purge makes room, ctx is done
// (its error is returned, wrapped) or the log is closed (ErrClosed). A
// transaction that cannot fit is ErrTooLarge. A failed write or fsync is
// returned wrapped with the segment's path; the partial record is cut and
// the log stays usable.
func (l *Log) Append(ctx context.Context, rec Record) (uint64, error) {
	return l.appendTxn(ctx, rec, false)
}

// AppendHeld is Append, except that the transaction may stay in the write
// buffer, with those appended before it, where readers do not see it: the
// buffer is handed to the kernel, and what it holds shown to readers, when
// it holds HeldBytes or more, by the next Append, AppendPart, Flush, Sync
// or Close, when the log is full, or when the sync interval has passed.
// One write system call then serves many transactions. If handing the
// buffer over fails, every transaction it held is dropped (and the call
// doing it returns the error): Last and Resume say what the log holds.
func (l *Log) AppendHeld(ctx context.Context, rec Record) (uint64, error) {
	return l.appendTxn(ctx, rec, true)
}

// HeldBytes is how many bytes of transactions AppendHeld lets the write
// buffer hold before handing them to the kernel.
const HeldBytes = writeBuffer / 2

func (l *Log) appendTxn(ctx context.Context, rec Record, hold bool) (uint64, error) {
	if err := checkRecord(rec); err != nil {
		return 0, err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.isClosed() {
		return 0, ErrClosed
	}
	idx, err := l.append(ctx, recTxn, rec, hold)
	if err != nil {
		return 0, fmt.Errorf("relaylog: appending index %d: %w", idx, err)
	}
	return idx, nil
}

// AppendPart appends a piece of a large transaction (binlog.RawTxn.Part):
// the pieces of one transaction go, in order, before its last piece,
// which Append appends with its GTID and resume position as for any
// transaction. Readers see none of it until then, and the entry they get
// locates the pieces instead of holding them (Entry.Parts). The pieces of
// one transaction stay in one segment, and they do not wait for space: a
// transaction larger than MaxBytes goes beyond it, as MySQL's relay log
// lets one transaction exceed relay_log_space_limit (the alternative is
// to wait for ever). DiscardPartial drops the pieces if the transaction
// will not be completed.
func (l *Log) AppendPart(ctx context.Context, t *binlog.RawTxn) error {
	if err := checkRecord(Record{Txn: t}); err != nil {
		return err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.isClosed() {
		return ErrClosed
	}
	if idx, err := l.append(ctx, recPart, Record{Txn: t}, false); err != nil {
		return fmt.Errorf("relaylog: appending a piece of index %d: %w", idx, err)
	}
	return nil
}

// DiscardPartial drops the pieces appended of a transaction whose last
// piece has not been (the source connection broke in the middle of it:
// the source will send it again, whole).
func (l *Log) DiscardPartial() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	w := &l.w
	if w.partial < 0 || l.isClosed() {
		return nil
	}
	// A flush that fails drops what the buffer held, pieces included (and
	// then partial < 0); the cut below drops the rest.
	_ = l.commit(false)
	if w.partial < 0 {
		return nil
	}
	cut := w.size - w.partial
	w.size, w.format = w.partial, w.partialFormat
	w.partial, w.partialFormat = -1, nil
	w.damaged = true // repair truncates to w.size
	if err := w.repair(); err != nil {
		return fmt.Errorf("relaylog: dropping the pieces of an unfinished transaction: %w", err)
	}
	w.pub = w.state()
	l.mu.Lock()
	l.segs[len(l.segs)-1].size = w.size
	l.bytes -= cut
	l.mu.Unlock()
	l.log.Info("dropped the pieces of an unfinished transaction", "bytes", cut, "index", w.next)
	return nil
}

// append is Append (typ recTxn) and AppendPart (recPart) with l.wmu held,
// holding the record in the buffer if hold (see AppendHeld); it returns
// the index it tried on error too.
func (l *Log) append(ctx context.Context, typ byte, rec Record, hold bool) (uint64, error) {
	w := &l.w
	idx := w.next
	if err := w.repair(); err != nil {
		return idx, err
	}
	size, ok := w.encodeTxn(typ, idx, rec)
	// The record must fit in a log holding nothing else: a new segment
	// with its preamble and FORMAT record. A segment without transactions
	// is never rolled (the next one would have its name), so whatever it
	// holds, e.g. a FORMAT record left by a cut tail, stays.
	base := preambleSize(w.pos)
	if w.txns == 0 {
		base = w.size
	}
	fresh := base + formatRecSize(rec.Txn.Format.Event) + size
	if !ok || (fresh > l.opts.MaxBytes && w.partial < 0 && typ != recPart) {
		return idx, fmt.Errorf("GTID %q: %w: a %d-byte record, MaxBytes %d", rec.GTID, ErrTooLarge, size, l.opts.MaxBytes)
	}
	fmtRec, err := l.makeRoom(ctx, size, rec.Txn.Format)
	if err != nil {
		return idx, err
	}
	w.write(fmtRec, rec.Txn.Events)
	w.dirty = true
	written := int64(len(fmtRec)) + size
	if w.partial < 0 && typ == recPart {
		// The first piece (after makeRoom, which may have rolled to a new
		// segment: the pieces begin where it wrote).
		w.partial, w.partialFormat = w.size, w.format
	}
	w.size += written
	if fmtRec != nil {
		w.format = rec.Txn.Format
	}
	if typ == recTxn {
		w.txns++
		w.next++
		w.pos = position{last: idx, gtid: rec.GTID, resume: rec.Resume}
		w.partial, w.partialFormat = -1, nil
		w.heldTxns++
	}
	w.heldBytes += written
	l.mu.Lock()
	l.bytes += written
	l.mu.Unlock()
	iv := l.opts.Sync.interval()
	doSync := iv == 0 || iv > 0 && time.Since(w.lastSync) >= iv
	if hold && !doSync && w.heldBytes < HeldBytes {
		return idx, nil
	}
	// On error the record is not published: commit cut it (now if
	// possible, or before the next write), with what the buffer held
	// before it. Under SyncInterval, a failed fsync also covers records
	// published earlier; they stay, and if a crash loses them, recovery
	// cuts them as an unsynced tail.
	return idx, l.commit(doSync)
}

// makeRoom starts a new segment when the current one is full and waits
// until the log has room for a TXN record of size bytes read under fm. It
// returns the FORMAT record to write first, nil if the segment has fm in
// effect already. l.wmu is held.
func (l *Log) makeRoom(ctx context.Context, size int64, fm *binlog.Format) ([]byte, error) {
	w := &l.w
	waiting := false
	defer func() {
		if waiting {
			l.mu.Lock()
			waited := time.Since(l.blockedSince)
			l.blocked += waited
			l.blockedSince = time.Time{}
			l.log.Debug("done waiting for space", "waited", waited)
			l.mu.Unlock()
		}
	}()
	for {
		fmtRec := w.formatRecord(fm)
		need := int64(len(fmtRec)) + size
		if w.partial >= 0 {
			// Later pieces of a large transaction, and its end: one
			// segment, no wait (see AppendPart).
			return fmtRec, nil
		}
		if w.txns > 0 && w.size+need > l.opts.SegmentBytes {
			if err := l.roll(); err != nil {
				return nil, err
			}
			continue
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil, ErrClosed
		}
		// Waiting cannot deadlock: once Purge has deleted every sealed
		// segment, what is left is this segment, which with the record
		// fits in SegmentBytes (or it would have been rolled above), and
		// SegmentBytes <= MaxBytes.
		if l.bytes+need <= l.opts.MaxBytes {
			l.mu.Unlock()
			return fmtRec, nil
		}
		if w.heldBytes > 0 {
			// Readers must see what the buffer holds for anything to be
			// purged.
			l.mu.Unlock()
			if err := l.commit(false); err != nil {
				return nil, err
			}
			continue
		}
		if !waiting {
			waiting = true
			l.blockedSince = time.Now()
			l.log.Debug("full, waiting for purge", "bytes", l.bytes, "need", need, "max_bytes", l.opts.MaxBytes)
		}
		wake := l.waitLocked()
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for space: %w", ctx.Err())
		}
	}
}

// roll seals the segment being written and starts the next one. The old
// segment reaches the disk before the new one exists, so only the last
// segment can ever have a torn tail. l.wmu is held.
func (l *Log) roll() error {
	w := &l.w
	doSync := l.opts.Sync.interval() >= 0
	if err := l.commit(doSync); err != nil {
		return err
	}
	f, size, err := createSegment(l.dir, w.next, w.pos, doSync)
	if err != nil {
		return err
	}
	old := w.f
	w.start(f, filepath.Join(l.dir, segName(w.next)), w.next, size, w.pos)
	if doSync {
		w.syncs++
	}
	// The old segment is synced (or SyncNever): a close error loses nothing.
	old.Close()

	l.mu.Lock()
	defer l.mu.Unlock()
	l.segs = append(l.segs, segment{first: w.first, size: size})
	l.bytes += size
	l.appendedB += size
	l.syncs = w.syncs
	if err := l.purgeLocked(); err != nil {
		// The roll itself succeeded; the next Purge retries.
		l.log.Warn("deleting a purged segment failed", "err", err)
	}
	return nil
}

// Sync flushes and fsyncs what was appended, whatever the SyncPolicy: the
// receiver may call it when the stream goes idle. It waits for an Append in
// progress, including one waiting for space.
func (l *Log) Sync() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.isClosed() {
		return ErrClosed
	}
	err := l.w.repair()
	if err == nil {
		err = l.commit(true)
	}
	l.mu.Lock()
	l.syncs = l.w.syncs
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("relaylog: sync: %w", err)
	}
	return nil
}

func (l *Log) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// checkRecord rejects a record that could not be stored and read back as
// it is.
func checkRecord(rec Record) error {
	t := rec.Txn
	switch {
	case t == nil || len(t.Events) == 0:
		return errors.New("relaylog: append: empty transaction")
	case t.Format == nil:
		return errors.New("relaylog: append: transaction without a format description")
	case len(t.Format.Event.Data) < binlog.HeaderSize || t.Format.Event.Pos.Offset < 0:
		return errors.New("relaylog: append: invalid format description event")
	}
	if err := checkGTID(rec.GTID); err != nil {
		return fmt.Errorf("relaylog: append: %w", err)
	}
	file := t.Events[0].Pos.File
	for i, ev := range t.Events {
		switch {
		case len(ev.Data) < binlog.HeaderSize:
			return fmt.Errorf("relaylog: append: event %d has %d bytes, less than an event header", i, len(ev.Data))
		case ev.Pos.File != file:
			return fmt.Errorf("relaylog: append: events from two source files (%s, %s)", file, ev.Pos.File)
		case ev.Pos.Offset < 0:
			return fmt.Errorf("relaylog: append: event %d at negative offset %d", i, ev.Pos.Offset)
		}
	}
	return nil
}
