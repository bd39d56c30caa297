package scheduler

import (
	"maps"

	"github.com/paraply/paraply/internal/stage"
)

// hotTables counts, per table, transactions that were admitted while an
// earlier writer of one of their rows in that table had not committed:
// the conflicts that make a transaction wait. A conflict with a writer
// that committed long before is no wait (on a uniform sysbench load most
// rows were written before, by transactions applied long ago).
//
// The coordinator is the one place that knows, at admission, whether the
// writer is still running (core.isDone); the preparer that finds the
// conflicts does not. The counts are published by copy, at most once per
// snapshot after a change, so that admission costs a map update only for
// the rare transactions that do wait.
type hotTables struct {
	counts map[string]int64
	copy   map[string]int64 // what the last snapshot returned; never written
	dirty  bool
}

// count records the tables of cs whose writer isDone says has not
// committed, once per table.
func (h *hotTables) count(cs []stage.Conflict, isDone func(uint64) bool) {
	var counted [4]string
	n := 0
next:
	for _, c := range cs {
		if isDone(c.Writer) {
			continue
		}
		for _, t := range counted[:n] {
			if t == c.Table {
				continue next
			}
		}
		if n < len(counted) {
			counted[n] = c.Table
			n++
		}
		if h.counts == nil {
			h.counts = map[string]int64{}
		}
		if _, ok := h.counts[c.Table]; ok || len(h.counts) < maxHotTables {
			h.counts[c.Table]++
			h.dirty = true
		}
	}
}

// maxHotTables bounds the tables counted hot.
const maxHotTables = 1000

// snapshot returns the counts; the caller must not change the map.
func (h *hotTables) snapshot() map[string]int64 {
	if h.dirty {
		h.copy, h.dirty = maps.Clone(h.counts), false
	}
	return h.copy
}
