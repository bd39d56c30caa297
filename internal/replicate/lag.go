package replicate

import (
	"context"
	"database/sql"
	"time"

	"github.com/paraply/paraply/internal/lag"
)

// offsetEvery is how often the source's clock offset is measured again
// (clocks drift slowly; NTP steps are rare).
const offsetEvery = 30 * time.Second

// probeSource measures the source's clock offset and, with
// HeartbeatTable, writes heartbeats there, until ctx is done. Neither can
// fail the pipeline: without them the lag is dated less precisely.
func (n network) probeSource(ctx context.Context, db *sql.DB) {
	log := n.log.With("component", "lag")
	if n.cfg.HeartbeatTable == "" {
		n.lag.RunOffset(ctx, db, offsetEvery, log)
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.lag.RunOffset(ctx, db, offsetEvery, log)
	}()
	lag.Heartbeat{Table: n.cfg.HeartbeatTable, ServerID: n.cfg.ServerID, Interval: n.cfg.heartbeatInterval(), Logger: log}.Run(ctx, db, n.lag)
	<-done
}

// readLag fills st's lag from the tracker: the oldest transaction not
// applied is the one after the sequencer's prefix (read now, not from the
// coordinator's last snapshot, which may be 200 ms old).
func (r *Replica) readLag(st *Status) {
	applied := st.Scheduler.LowWaterMark
	if r.seq != nil {
		applied = r.seq.Prefix()
	}
	received := st.Relay.Last
	if received > applied {
		st.Backlog = int64(received - applied)
	}
	rd := r.lag.Lag(st.Now, applied, received, st.Scheduler.OldestPending)
	st.Lag, st.LagMethod, st.HeartbeatError, st.Heartbeats = rd.Lag, rd.Method, rd.HeartbeatError, rd.Heartbeats
	if rd.ClockOffsetKnown {
		st.ClockOffset = &rd.ClockOffset
	}
}
