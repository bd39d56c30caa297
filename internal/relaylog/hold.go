package relaylog

import (
	"errors"
	"fmt"

	"github.com/paraply/paraply/internal/binlog"
)

// Records appended are shown to readers only once they are in the file:
// readers read the file, up to the published size. Append hands each
// record to the kernel at once; AppendHeld lets the write buffer gather
// records first, so that a receiver streaming a backlog makes one write
// system call for many transactions. The writer then runs ahead of what
// readers see, and a failed write drops what was held: commit goes back to
// writer.pub, the state after the last record handed over.

// writerState is where a writer stands: what a failed commit restores.
type writerState struct {
	size          int64
	txns          int
	format        *binlog.Format
	next          uint64
	pos           position
	partial       int64
	partialFormat *binlog.Format
}

func (w *writer) state() writerState {
	return writerState{w.size, w.txns, w.format, w.next, w.pos, w.partial, w.partialFormat}
}

func (w *writer) restore(st writerState) {
	w.size, w.txns, w.format, w.next, w.pos, w.partial, w.partialFormat =
		st.size, st.txns, st.format, st.next, st.pos, st.partial, st.partialFormat
}

// Flush hands the transactions AppendHeld holds to the kernel and shows
// them to readers. If that fails they are dropped and the error returned;
// the log stays usable.
func (l *Log) Flush() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.isClosed() {
		return ErrClosed
	}
	if err := l.commit(false); err != nil {
		return fmt.Errorf("relaylog: flush: %w", err)
	}
	return nil
}

// commit hands the buffer to the kernel, fsyncs the segment if doSync,
// and then publishes the records it held. On error it drops them, cutting
// the segment back to the last record published. l.wmu is held.
func (l *Log) commit(doSync bool) error {
	w := &l.w
	err := w.bw.Flush() // an *os.PathError
	if err == nil && doSync {
		err = w.fsync()
	}
	if err != nil {
		l.mu.Lock()
		l.bytes -= w.heldBytes
		l.mu.Unlock()
		w.restore(w.pub)
		w.heldBytes, w.heldTxns = 0, 0
		w.damaged = true
		if rerr := w.repair(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return err
	}
	if w.heldBytes == 0 {
		return nil
	}
	l.mu.Lock()
	l.segs[len(l.segs)-1].size = w.size
	l.appendedB += w.heldBytes
	l.appended += uint64(w.heldTxns)
	l.syncs = w.syncs
	if w.heldTxns > 0 {
		l.last, l.gtid, l.resume = w.pos.last, w.pos.gtid, w.pos.resume
		l.wakeLocked()
	}
	l.mu.Unlock()
	w.heldBytes, w.heldTxns, w.pub = 0, 0, w.state()
	return nil
}
