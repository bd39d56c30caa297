package scheduler

import (
	"cmp"
	"slices"
)

// Progress is the low-water mark to save: every transaction up to
// RelayIndex has committed; Position is the source position after it;
// Covered are the keys of the checkpoint rows (in paraply.applied) that
// the mark passed since the previous Progress: those rows can go.
type Progress struct {
	RelayIndex uint64
	Position   string
	Covered    []string
	// Reached is the source position after the newest transaction that,
	// with everything before it, is applied or held (an XA PREPARE waiting
	// for its XA COMMIT): how far applying has come, though a restart
	// starts again from Position.
	Reached string
	// OldestPending is the source commit time (µs since the epoch) of the
	// oldest transaction admitted and not yet committed when the mark was
	// taken, 0 when none was: how far behind the stream was then.
	OldestPending int64
}

// seqGTID is the key of a checkpoint row, by the sequence number of its
// transaction (the newest of its work, or one skipped after a restart): a
// slice of them, appended to at each commit, costs no allocation per
// transaction as a map of slices did.
type seqGTID struct {
	seq  uint64
	gtid string
}

// lwm is the low-water mark to save: every transaction up to it has
// committed (as the sequencer knows), short of the oldest XA PREPARE still
// held, which a restart must read again.
func (c *Coordinator) lwm() uint64 {
	lwm := c.seq.Prefix()
	for s := range c.holds {
		lwm = min(lwm, s-1)
	}
	return lwm
}

// progress collects the low-water mark and the GTIDs it now covers.
func (c *Coordinator) progress() Progress {
	lwm, reached := c.lwm(), c.seq.Prefix()
	p := Progress{RelayIndex: lwm, Position: c.resumeAt(lwm), Reached: c.resumeAt(reached)}
	p.OldestPending = c.oldestPending()
	kept := c.gtids[:0]
	for _, g := range c.gtids {
		if g.seq <= lwm {
			p.Covered = append(p.Covered, g.gtid)
		} else {
			kept = append(kept, g)
		}
	}
	clear(c.gtids[len(kept):])
	c.gtids = kept
	// Positions below the low-water mark are never asked for again.
	i, _ := slices.BinarySearchFunc(c.resume, lwm, bySeq)
	n := copy(c.resume, c.resume[i:])
	clear(c.resume[n:])
	c.resume = c.resume[:n]
	return p
}

// seqResume is the resume position after a transaction.
type seqResume struct {
	seq    uint64
	resume string
}

func bySeq(r seqResume, s uint64) int { return cmp.Compare(r.seq, s) }

// addResume records the resume position after transaction s. Transactions
// are admitted in stream order, so it goes at the end.
func (c *Coordinator) addResume(s uint64, resume string) {
	if n := len(c.resume); n == 0 || c.resume[n-1].seq < s {
		c.resume = append(c.resume, seqResume{s, resume})
		return
	}
	i, found := slices.BinarySearchFunc(c.resume, s, bySeq)
	if found {
		c.resume[i].resume = resume
		return
	}
	c.resume = slices.Insert(c.resume, i, seqResume{s, resume})
}

// resumeAt is the resume position after transaction s, "" if s was not
// admitted.
func (c *Coordinator) resumeAt(s uint64) string {
	i, ok := slices.BinarySearchFunc(c.resume, s, bySeq)
	if !ok {
		return ""
	}
	return c.resume[i].resume
}

// oldestPending is the source commit time (µs since the epoch) of the
// oldest transaction admitted and not yet committed, 0 when none is.
func (c *Coordinator) oldestPending() int64 {
	if e := c.core.entry(c.seq.Prefix() + 1); e != nil && e.item.Txn != nil {
		return e.item.Txn.Timestamp
	}
	return 0
}
