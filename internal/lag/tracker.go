package lag

import (
	"sort"
	"sync"
	"time"
)

// Methods, as status and /metrics name them.
const (
	MethodReceiveTime = "receive-time"
	MethodHeartbeat   = "heartbeat"
)

const (
	// markEvery is the resolution of arrival times: a mark is kept when
	// arrival time moved on by this much (or the source's second changed),
	// so that a burst of transactions costs few marks.
	markEvery = 5 * time.Millisecond
	// maxMarks bounds the marks kept (the oldest half goes when full: their
	// transactions are then dated by the source's second).
	maxMarks = 1 << 17
	// liveSlack is how far past the end of its second an arrival may be and
	// still count as live (network delay, and the offset's own error).
	liveSlack = 50 * time.Millisecond
	// maxBeats bounds the heartbeats remembered while none is received.
	maxBeats = 4096
	// recentGTIDs is how many received GTIDs are remembered for heartbeats
	// whose writer learns their GTID after they arrived.
	recentGTIDs = 1024
	// beatStale is how many heartbeat intervals may pass without a write
	// before the heartbeat method stops being used.
	beatStale = 5
	// offsetSamples is how many offset measurements are kept; the one with
	// the shortest round trip is used.
	offsetSamples = 8
)

// mark is what the receiver noted about the transaction at index and the
// ones after it, up to the next mark: when they arrived (µs since the
// epoch, paraply's clock) and the source's timestamp in seconds.
type mark struct {
	index      uint64
	arrived    int64
	sourceSecs int64
}

// beat is a heartbeat written on the source: its GTID, when it committed
// (µs, paraply's clock), and its relay log index once received (0 before).
type beat struct {
	gtid      string
	committed int64
	index     uint64
}

type offsetSample struct {
	offset, rtt time.Duration
}

// Tracker gathers what dates transactions: arrivals, the source's clock
// offset and heartbeats. Its methods are safe for concurrent use; mu
// guards every field.
type Tracker struct {
	mu      sync.Mutex
	marks   []mark
	offsets []offsetSample // newest last

	interval time.Duration // heartbeat interval; 0 when heartbeats are off
	beats    []beat        // oldest first: the newest applied one, then the rest
	byGTID   map[string]int
	lastBeat time.Time // last successful write
	beatErr  string
	received int64 // heartbeats received
	// recent maps the GTIDs of the last transactions received to their
	// index (with heartbeats on): a heartbeat may arrive before its
	// writer has learnt its GTID.
	recent     map[string]uint64
	recentRing []string
	recentNext int
}

// NewTracker returns a tracker; heartbeat is the interval of the heartbeat
// writer, 0 if there is none.
func NewTracker(heartbeat time.Duration) *Tracker {
	return &Tracker{interval: heartbeat, byGTID: map[string]int{}}
}

// Received notes that the transaction at relay log index, with the given
// GTID and source timestamp (whole seconds since the epoch), arrived at
// at. Indexes must increase from call to call.
func (t *Tracker) Received(index uint64, gtid string, sourceSecs uint32, at time.Time) {
	us := at.UnixMicro()
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.marks); n == 0 || us-t.marks[n-1].arrived >= markEvery.Microseconds() || int64(sourceSecs) != t.marks[n-1].sourceSecs || index < t.marks[n-1].index {
		if index < t.lastIndex() {
			t.marks = t.marks[:0] // a new relay log: numbering starts again
		}
		if len(t.marks) == maxMarks {
			t.marks = append(t.marks[:0], t.marks[maxMarks/2:]...)
		}
		t.marks = append(t.marks, mark{index: index, arrived: us, sourceSecs: int64(sourceSecs)})
	}
	if t.interval == 0 {
		return
	}
	i, ok := t.byGTID[gtid]
	if !ok {
		t.remember(gtid, index)
		return
	}
	t.arrived(i, index)
}

// remember keeps gtid's index among the recent ones.
func (t *Tracker) remember(gtid string, index uint64) {
	if t.recent == nil {
		t.recent, t.recentRing = map[string]uint64{}, make([]string, recentGTIDs)
	}
	if old := t.recentRing[t.recentNext]; old != "" {
		delete(t.recent, old)
	}
	t.recentRing[t.recentNext] = gtid
	t.recentNext = (t.recentNext + 1) % recentGTIDs
	t.recent[gtid] = index
}

// arrived records that heartbeat i was received at index.
func (t *Tracker) arrived(i int, index uint64) {
	t.received++
	t.beats[i].index = index
	// Heartbeats arrive in the order they committed: one written before
	// this one and still not received never will be (it was not logged).
	if i > 0 {
		for _, b := range t.beats[:i] {
			if b.index == 0 {
				delete(t.byGTID, b.gtid)
			}
		}
		kept := t.beats[:0]
		for _, b := range t.beats[:i] {
			if b.index != 0 {
				kept = append(kept, b)
			}
		}
		t.beats = append(kept, t.beats[i:]...)
		t.reindex()
	}
}

func (t *Tracker) lastIndex() uint64 {
	if n := len(t.marks); n > 0 {
		return t.marks[n-1].index
	}
	return 0
}

func (t *Tracker) reindex() {
	clear(t.byGTID)
	for i, b := range t.beats {
		t.byGTID[b.gtid] = i
	}
}

// Wrote notes a heartbeat committed on the source under gtid at committed
// (paraply's clock).
func (t *Tracker) Wrote(gtid string, committed time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastBeat, t.beatErr = committed, ""
	if _, ok := t.byGTID[gtid]; ok {
		return
	}
	if len(t.beats) == maxBeats {
		// None is being received: the oldest ones, which bound the lag,
		// are what matters; forget the newest.
		return
	}
	t.beats = append(t.beats, beat{gtid: gtid, committed: committed.UnixMicro()})
	t.byGTID[gtid] = len(t.beats) - 1
	if index, ok := t.recent[gtid]; ok {
		t.arrived(len(t.beats)-1, index)
	}
}

// BeatFailed notes why the heartbeat could not be written.
func (t *Tracker) BeatFailed(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.beatErr = err.Error()
}

// AddOffset records one measurement of the source's clock offset (paraply's
// clock minus the source's) taken with a round trip of rtt.
func (t *Tracker) AddOffset(offset, rtt time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.offsets) == offsetSamples {
		t.offsets = append(t.offsets[:0], t.offsets[1:]...)
	}
	t.offsets = append(t.offsets, offsetSample{offset, rtt})
}

// ClockOffset is paraply's clock minus the source's, as best measured
// (false until measured).
func (t *Tracker) ClockOffset() (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.offset()
}

// offset is the measurement with the shortest round trip: its error is at
// most half that round trip.
func (t *Tracker) offset() (time.Duration, bool) {
	if len(t.offsets) == 0 {
		return 0, false
	}
	best := t.offsets[0]
	for _, o := range t.offsets[1:] {
		if o.rtt < best.rtt {
			best = o
		}
	}
	return best.offset, true
}

// Reading is a lag measurement and how it was made.
type Reading struct {
	// Lag is how long ago the source committed the oldest transaction the
	// target does not have (0 when it has everything).
	Lag time.Duration
	// Method is MethodReceiveTime or MethodHeartbeat.
	Method string
	// ClockOffset is paraply's clock minus the source's, when measured.
	ClockOffset      time.Duration
	ClockOffsetKnown bool
	// HeartbeatError says why heartbeats are not in use, when they were
	// asked for.
	HeartbeatError string
	// Heartbeats is how many heartbeat transactions were received (they
	// are paraply's own writes, not the source's load).
	Heartbeats int64
}

// Lag reads the lag at now. applied is the relay log index up to which
// every transaction is applied, received the newest index received;
// sourceMicros is the source's commit timestamp of transaction applied+1
// (µs since the epoch, whole seconds on MariaDB), 0 if unknown: it dates
// a transaction this run did not receive (the relay log of an earlier
// run). It forgets what only concerns transactions up to applied.
func (t *Tracker) Lag(now time.Time, applied, received uint64, sourceMicros int64) Reading {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forget(applied)
	off, offKnown := t.offset()
	r := Reading{Method: MethodReceiveTime, ClockOffset: off, ClockOffsetKnown: offKnown, Heartbeats: t.received}
	heartbeat := false
	if t.interval > 0 {
		switch {
		case t.beatErr != "":
			r.HeartbeatError = t.beatErr
		case t.lastBeat.IsZero() || now.Sub(t.lastBeat) > beatStale*t.interval:
			r.HeartbeatError = "no heartbeat written lately"
		default:
			heartbeat = true
			r.Method = MethodHeartbeat
		}
	}
	nowUS := now.UnixMicro()
	u := applied + 1
	var committed int64
	known := false
	if u <= received {
		committed, known = t.dated(u, sourceMicros, off)
	}
	if heartbeat {
		prev, next, hasPrev, hasNext := t.bracket(u)
		switch {
		case !known && hasNext:
			// Nothing dates the transaction (or everything received is
			// applied) but a heartbeat written since is not applied: the
			// target is behind by at least its age.
			committed, known = next, true
		case known:
			if hasPrev && committed < prev {
				committed = prev
			}
			if hasNext && committed > next {
				committed = next
			}
		}
	}
	if known && committed < nowUS {
		r.Lag = time.Duration(nowUS-committed) * time.Microsecond
	}
	return r
}

// dated estimates when transaction u committed, in µs on paraply's clock.
func (t *Tracker) dated(u uint64, sourceMicros int64, off time.Duration) (int64, bool) {
	offUS := off.Microseconds()
	i := sort.Search(len(t.marks), func(i int) bool { return t.marks[i].index > u }) - 1
	if i >= 0 {
		m := t.marks[i]
		// The transaction committed within its second; it arrived at most
		// markEvery after m.arrived.
		start := m.sourceSecs*1e6 + offUS
		if m.arrived <= start+1e6+liveSlack.Microseconds() {
			return m.arrived, true // received live
		}
		return start + 5e5, true
	}
	if sourceMicros > 0 {
		if sourceMicros%1e6 == 0 {
			return sourceMicros + offUS + 5e5, true
		}
		return sourceMicros + offUS, true // MySQL's original_commit_timestamp: exact
	}
	return 0, false
}

// bracket finds the heartbeats around transaction u: the commit time of the
// newest one applied before it and of the oldest one not applied.
func (t *Tracker) bracket(u uint64) (prev, next int64, hasPrev, hasNext bool) {
	for _, b := range t.beats {
		if b.index != 0 && b.index < u {
			prev, hasPrev = b.committed, true
			continue
		}
		return prev, b.committed, hasPrev, true
	}
	return prev, 0, hasPrev, false
}

// forget drops the marks and heartbeats that only date transactions up to
// applied, keeping the newest heartbeat applied (it bounds what follows).
func (t *Tracker) forget(applied uint64) {
	i := sort.Search(len(t.marks), func(i int) bool { return t.marks[i].index > applied+1 }) - 1
	if i > 0 {
		t.marks = append(t.marks[:0], t.marks[i:]...)
	}
	n := 0
	for n < len(t.beats) && t.beats[n].index != 0 && t.beats[n].index <= applied {
		n++
	}
	if n > 1 {
		for _, b := range t.beats[:n-1] {
			delete(t.byGTID, b.gtid)
		}
		t.beats = append(t.beats[:0], t.beats[n-1:]...)
		t.reindex()
	}
}
