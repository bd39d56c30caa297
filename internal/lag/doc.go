// Package lag measures how far a replica is behind its source: the time
// since the source committed the oldest transaction the target does not
// have yet (0 when it has everything received). With --delay that
// includes the delay, which holds each transaction until its source
// commit time plus the delay: the target is that far behind on purpose.
// Status reports the part beyond it apart (replicate.Status.LagBeyondDelay,
// paraply_lag_beyond_delay_seconds), and only that part counts as lagging.
// It is true to a few
// milliseconds while paraply receives the stream live, whatever the
// source's timestamps' resolution, by one of two methods.
//
// receive-time (the default): the receiver notes when each transaction
// arrives (Tracker.Received). Received live, a transaction arrives within a
// network delay of its commit, so its arrival time, on paraply's own clock,
// is its commit time. A transaction received long after it committed (a
// backlog, a reconnect, the relay log of an earlier run) is dated by the
// source's own timestamp instead: MariaDB stamps events in whole seconds,
// so that date is the middle of its second (±0.5 s), on paraply's clock
// through the source's clock offset, which Tracker.MeasureOffset measures
// from the source's NOW(6). Arrival is "live" when it is no later than the
// end of the event's second.
//
// heartbeat (--heartbeat-table, opt-in: it writes on the source, as
// pt-heartbeat does): paraply also commits a row on the source every
// interval and notes when (Tracker.Wrote) and under which GTID. The
// heartbeats bracket every transaction: one committed after the newest
// heartbeat applied and before the oldest heartbeat not applied, so its
// commit time is known to an interval even when it was received late, and
// a heartbeat written but not yet received shows a stream that stopped
// delivering while the connection looks fine.
package lag
