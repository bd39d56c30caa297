package analyze

import (
	"sync"
	"sync/atomic"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/deptrack"
)

// Transactions go to the modes in batches: enough to make the hand-over
// cheap, and few in flight, so that what is held in memory is bounded
// (batchBytes bounds a batch of large transactions).
const (
	batchTxns       = 256
	batchBytes      = 8 << 20
	batchesInFlight = 4
)

// item is one transaction as the modes see it: its writeset, extracted
// once for all of them, and what the simulation prices.
type item struct {
	txn  *binlog.Txn
	ws   deptrack.Writeset
	cost txnCost
}

// txnBatch is transactions in stream order, read by every mode's
// goroutine; the last one done with it gives it back for reuse.
type txnBatch struct {
	items []item
	n     int
	bytes int
	left  atomic.Int32
}

// modeRunner runs each mode in a goroutine of its own: the modes measure
// the same stream independently, so they share the cores while the
// reading goroutine decodes what comes next. Each mode sees every
// transaction in order, so the results are those of a single goroutine.
//
// The goroutine that calls next and send owns the batch being filled;
// once sent, a batch belongs to the modes until the last of them puts it
// back on free.
type modeRunner struct {
	in   []chan *txnBatch
	free chan *txnBatch
	wg   sync.WaitGroup
	cur  *txnBatch
}

func newModeRunner(modes []*modeState) *modeRunner {
	r := &modeRunner{free: make(chan *txnBatch, batchesInFlight)}
	for range batchesInFlight {
		r.free <- &txnBatch{items: make([]item, batchTxns)}
	}
	for _, st := range modes {
		if st.follows != nil {
			continue // measured by the goroutine of the mode it follows
		}
		var followers []*modeState
		for _, f := range modes {
			if f.follows == st {
				followers = append(followers, f)
			}
		}
		ch := make(chan *txnBatch, batchesInFlight)
		r.in = append(r.in, ch)
		r.wg.Add(1)
		go r.run(append([]*modeState{st}, followers...), ch)
	}
	return r
}

// run measures the transactions of in in the mode sts[0], and in the
// modes that follow it (see modeState.follows).
func (r *modeRunner) run(sts []*modeState, in <-chan *txnBatch) {
	defer r.wg.Done()
	for b := range in {
		for i := range b.items[:b.n] {
			it := &b.items[i]
			for _, st := range sts[1:] {
				st.follow(it.txn)
			}
			for _, st := range sts {
				st.add(it.txn, &it.ws, it.cost)
			}
		}
		if b.left.Add(-1) == 0 {
			for i := range b.items[:b.n] {
				b.items[i].txn = nil
			}
			b.n, b.bytes = 0, 0
			r.free <- b
		}
	}
}

// next returns the item to fill for the next transaction.
func (r *modeRunner) next() *item {
	if r.cur == nil {
		r.cur = <-r.free
	}
	return &r.cur.items[r.cur.n]
}

// added counts the item next returned as filled with txn.
func (r *modeRunner) added(txn *binlog.Txn) {
	b := r.cur
	b.n++
	if b.bytes += txn.Bytes; b.n == len(b.items) || b.bytes >= batchBytes {
		r.send()
	}
}

// send hands the batch being filled to every mode.
func (r *modeRunner) send() {
	b := r.cur
	if b == nil || b.n == 0 {
		return
	}
	r.cur = nil
	b.left.Store(int32(len(r.in)))
	for _, ch := range r.in {
		ch <- b
	}
}

// close sends what is left and waits for the modes to finish it.
func (r *modeRunner) close() {
	r.send()
	for _, ch := range r.in {
		close(ch)
	}
	r.wg.Wait()
}
