package replicate

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/source"
)

// positionEvery is how often the source's position is read for the
// status: where the source is now (not where it was at the start), and so
// how fast it writes, apart from how fast paraply receives.
const positionEvery = time.Second

// positionWait bounds one read of it: a source that does not answer
// leaves the last position read, dated, in the status.
const positionWait = 2 * time.Second

// livePosition is the source's position as last read. It is safe for
// concurrent use; mu guards the fields.
type livePosition struct {
	mu  sync.Mutex
	pos string
	at  time.Time // when it was read; zero before the first read
}

func (p *livePosition) set(pos string, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pos, p.at = pos, at
}

// get returns the position and when it was read (zero: never).
func (p *livePosition) get() (string, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pos, p.at
}

// followPosition reads the source's position every positionEvery until
// ctx is done. A failed read leaves the last one: the receiver's
// connection says whether the source is reachable.
func (n network) followPosition(ctx context.Context, db *sql.DB, f binlog.Flavor) {
	tick := time.NewTicker(positionEvery)
	defer tick.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, positionWait)
		pos, err := source.ReadPosition(rctx, db, f)
		cancel()
		if err == nil {
			n.pos.set(pos, time.Now())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
