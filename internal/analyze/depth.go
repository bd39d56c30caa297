package analyze

import "slices"

// depthRingSize bounds how far back exact chain lengths are remembered; an
// older predecessor is assumed to end the longest chain of anything that
// old, which can only overestimate the critical path.
const depthRingSize = 1 << 18

// chains computes the critical path: the longest chain of transactions each
// of which waits for the previous one, counted in transactions.
type chains struct {
	depth  []int32 // chain length ending at seq, by seq % depthRingSize
	prefix []int32 // longest chain among 1..seq, by seq % depthRingSize
	last   uint64
	best   int32
}

func newChains() *chains {
	return &chains{depth: make([]int32, depthRingSize), prefix: make([]int32, depthRingSize)}
}

// add records transaction seq waiting for 1..wait and each of on, and
// returns the length of the longest chain ending at it.
func (c *chains) add(seq, wait uint64, on []uint64) int32 {
	d := c.prefixAt(wait)
	for _, o := range on {
		d = max(d, c.depthAt(o))
	}
	d++
	c.best = max(c.best, d)
	c.last = seq
	c.depth[seq%depthRingSize] = d
	c.prefix[seq%depthRingSize] = c.best
	return d
}

func (c *chains) inRing(seq uint64) bool { return seq+depthRingSize > c.last }

func (c *chains) oldest() int32 { return c.prefix[(c.last+1)%depthRingSize] }

func (c *chains) depthAt(seq uint64) int32 {
	switch {
	case seq == 0:
		return 0
	case c.inRing(seq):
		return c.depth[seq%depthRingSize]
	}
	return c.oldest()
}

func (c *chains) prefixAt(seq uint64) int32 {
	switch {
	case seq == 0:
		return 0
	case c.inRing(seq):
		return c.prefix[seq%depthRingSize]
	}
	return c.oldest()
}

// clone returns a copy of c that goes on on its own.
func (c *chains) clone() *chains {
	d := *c
	d.depth, d.prefix = slices.Clone(c.depth), slices.Clone(c.prefix)
	return &d
}
