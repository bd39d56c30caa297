package clone

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/paraply/paraply/internal/checkpoint"
)

// chunk is the rows one target transaction copies, with its row in
// clone_chunks. Its rows come as parts: one for a chunk of a keyed table,
// read whole; as many as it takes for a table read as one piece, which a
// worker inserts as they come, in one transaction (its memory is bounded
// by the parts, not by the table).
type chunk struct {
	tr  *tableRun
	rec checkpoint.CloneChunk // Rows and Bytes are the totals, set when the last part is
	// clear, if set, deletes the chunk's range on the target first: in a
	// resumed run, a statement brought forward on a table copied whole
	// may have written rows there through a trigger or a multi-table
	// statement, which the chunk's rows replace.
	clear string
	parts chan part
}

// part is some of a chunk's rows: tuples of encoded values, "(1, 'a')",
// laid end to end in data, the end of each at ends.
type part struct {
	data []byte
	ends []int
	// held is what it holds of the memory budget, given back once written.
	held int64
}

// rows is the number of rows in p.
func (p *part) rows() int { return len(p.ends) }

// tuple returns row i's encoded tuple.
func (p *part) tuple(i int) []byte {
	start := 0
	if i > 0 {
		start = p.ends[i-1]
	}
	return p.data[start:p.ends[i]]
}

// budget bounds the bytes of rows read and not yet written (count is
// bounded by the chunks channel's capacity).
type budget struct {
	sem *semaphore.Weighted
	max int64
}

func newBudget(max int64) *budget {
	return &budget{sem: semaphore.NewWeighted(max), max: max}
}

// take waits until n bytes may be held, and returns what it took: a part
// larger than the whole budget takes the whole budget, and so waits until
// it is alone.
func (b *budget) take(ctx context.Context, n int64) (int64, error) {
	n = max(1, min(n, b.max))
	return n, b.sem.Acquire(ctx, n)
}

// give gives back what take took.
func (b *budget) give(n int64) {
	if n > 0 {
		b.sem.Release(n)
	}
}

// throttle keeps the rows read to a rate: each reader waits, after a
// chunk, until the rows read so far are due. The zero rate waits never.
type throttle struct {
	rate  int
	mu    sync.Mutex // guards rows
	began time.Time
	rows  int64
}

// wait counts n rows read and waits until they are due (or ctx ends).
func (t *throttle) wait(ctx context.Context, n int) error {
	if t == nil || t.rate == 0 {
		return nil
	}
	t.mu.Lock()
	if t.began.IsZero() {
		t.began = time.Now()
	}
	t.rows += int64(n)
	due := t.began.Add(time.Duration(float64(t.rows) / float64(t.rate) * float64(time.Second)))
	t.mu.Unlock()
	select {
	case <-time.After(time.Until(due)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
