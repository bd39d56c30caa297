package clone

import (
	"encoding/json"
	"fmt"

	"github.com/paraply/paraply/internal/checkpoint"
)

// A table is copied by key ranges. One run reads a segment, a key range,
// chunk after chunk in key order: chunk 1 holds the rows after the
// segment's lower bound up to the key of its last row, chunk 2 the rows
// after that up to its own last, and so on; the last chunk reaches the
// segment's upper bound. The first run's segment 0 is the whole table.
// Chunks commit in any order (several workers write them), so a run
// killed leaves holes: a run of chunk numbers not committed, whose range
// is from the upper bound of the committed chunk before them to the lower
// bound of the committed chunk after them, or to the segment's end. The
// next run reads each hole as a segment of its own, which it records with
// its first chunk; holes in those are found the same way.
//
// Bounds are compared only for equality, as the exact text the server
// gave (verify.Keys.Raw), never ordered by paraply: the order of keys is
// the server's, under the key's collation, and only the server knows it.

// bound is a key value, the raw text of each key column; nil is no bound.
type bound []string

// encodeBound is b as clone_chunks stores it: JSON, NULL for none.
func encodeBound(b bound) *string {
	if b == nil {
		return nil
	}
	j, _ := json.Marshal([]string(b)) // strings always marshal
	s := string(j)
	return &s
}

// decodeBound reads a bound clone_chunks stored.
func decodeBound(s *string) (bound, error) {
	if s == nil {
		return nil, nil
	}
	var b []string
	if err := json.Unmarshal([]byte(*s), &b); err != nil {
		return nil, fmt.Errorf("a key bound in the clone's progress: %w", err)
	}
	return b, nil
}

// span is a key range to read, (lower, upper], as stored (encodeBound).
type span struct{ lower, upper *string }

func sameBound(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// rangeKey identifies a range for a map.
func rangeKey(lower, upper *string) string {
	k := func(s *string) string {
		if s == nil {
			return "-"
		}
		return "+" + *s
	}
	return k(lower) + "\x00" + k(upper)
}

// holes returns the key ranges of one table that no committed chunk
// holds, given its segments and chunks (both sorted by segment, and the
// chunks by number, as CloneStore.Load returns them). A table without a
// segment has not begun: its hole is the whole table.
func holes(segs []checkpoint.CloneSegment, chunks []checkpoint.CloneChunk) []span {
	bySeg := map[int][]checkpoint.CloneChunk{}
	for _, c := range chunks {
		bySeg[c.Segment] = append(bySeg[c.Segment], c)
	}
	byRange := map[string]checkpoint.CloneSegment{}
	var root *checkpoint.CloneSegment
	for i, s := range segs {
		if s.Segment == 0 {
			root = &segs[i]
			continue
		}
		byRange[rangeKey(s.Lower, s.Upper)] = s
	}
	if root == nil {
		return []span{{}}
	}
	var out []span
	seen := map[int]bool{}
	var walk func(s checkpoint.CloneSegment)
	hole := func(lower, upper *string) {
		if child, ok := byRange[rangeKey(lower, upper)]; ok && !seen[child.Segment] {
			walk(child)
			return
		}
		out = append(out, span{lower, upper})
	}
	walk = func(s checkpoint.CloneSegment) {
		seen[s.Segment] = true
		cursor, last := s.Lower, false
		for _, c := range bySeg[s.Segment] {
			if !sameBound(cursor, c.Lower) {
				hole(cursor, c.Lower)
			}
			cursor, last = c.Upper, c.Last
		}
		if !last {
			hole(cursor, s.Upper)
		}
	}
	walk(*root)
	return out
}
