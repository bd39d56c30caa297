package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// settleTimeout bounds the wait for the source to settle; past it the
// runs go ahead and the backlog records what was left.
const settleTimeout = 5 * time.Minute

// settleStatus is what settle waits for to reach zero: the pages the
// workload left dirty in the buffer pool, and the row versions InnoDB's
// purge has not removed yet.
var settleStatus = []string{"INNODB_BUFFER_POOL_PAGES_DIRTY", "INNODB_HISTORY_LIST_LENGTH"}

// settle waits until source s has finished the background work that
// building a backlog leaves it: flushing the dirty pages and purging old
// row versions. Left to itself the server does that during the first
// runs after the build, which are native ones, and takes the two cores'
// time from them: native single measured 9,272 and 12,784 tps as the
// first run after two builds of one backlog. (Settling does not remove
// every slow first run: with it, write_only's native single measured
// 9,938 tps in the first round, 13,913 and 13,280 in the next two.) It
// returns how long it waited and, if it gave up at settleTimeout, what was
// left.
func settle(ctx context.Context, s *sandbox.Server) (time.Duration, string, error) {
	pct, err := queryString(ctx, s, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct")
	if err != nil {
		return 0, "", err
	}
	// With no dirty pages allowed, the page cleaner flushes them all
	// instead of keeping a share for later.
	if err := s.Exec(ctx, "SET GLOBAL innodb_max_dirty_pages_pct = 0"); err != nil {
		return 0, "", err
	}
	began := time.Now()
	left, err := waitSettled(ctx, s, began.Add(settleTimeout))
	if rerr := s.Exec(context.WithoutCancel(ctx), "SET GLOBAL innodb_max_dirty_pages_pct = "+pct); err == nil {
		err = rerr
	}
	return time.Since(began), left, err
}

// waitSettled polls s's status until every settleStatus counter is zero
// or deadline passes; it returns "" or the counters left at the deadline.
func waitSettled(ctx context.Context, s *sandbox.Server, deadline time.Time) (string, error) {
	for {
		left := ""
		for _, name := range settleStatus {
			v, err := queryString(ctx, s, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = "+quote(name))
			if err != nil {
				return "", err
			}
			if n, err := strconv.ParseInt(v, 10, 64); err != nil {
				return "", fmt.Errorf("%s: status %s is %q, not a number", s.Name, name, v)
			} else if n != 0 {
				left += fmt.Sprintf(" %s=%d", name, n)
			}
		}
		if left == "" {
			return "", nil
		}
		if time.Now().After(deadline) {
			return left[1:], nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
