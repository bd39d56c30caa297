package replicate

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/paraply/paraply/internal/deptrack"
)

// Status as JSON: the "status" object of /status.json, an API documented
// field by field in docs/status-json.md (TestStatusJSONDocumented keeps
// the two in step). Names are snake_case and say their unit (durations in
// seconds, never nanoseconds); a time, an error or a position that is not
// there (never connected, no error since the start) is null, never
// 0001-01-01 or ""; counts by cause are objects keyed by the cause's name.
// UnmarshalJSON reads it back (paraply status, from another process).

// MarshalJSON writes s as docs/status-json.md describes it.
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(s.wire()) }

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *Status) UnmarshalJSON(b []byte) error {
	var w statusWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = w.status()
	return nil
}

type statusWire struct {
	Now                   time.Time      `json:"now"`
	Stream                string         `json:"stream"`
	Flavor                string         `json:"flavor"`
	Dependency            string         `json:"dependency"`
	Workers               int            `json:"workers"`
	AutoWorkers           bool           `json:"auto_workers"`
	PreserveOrder         bool           `json:"preserve_commit_order"`
	Started               *time.Time     `json:"started"`
	Source                sourceWire     `json:"source"`
	Target                targetWire     `json:"target"`
	Relay                 relayWire      `json:"relay"`
	Scheduler             schedulerWire  `json:"scheduler"`
	Dependencies          dependencyWire `json:"dependencies"`
	Checkpoint            checkpointWire `json:"checkpoint"`
	Shared                []string       `json:"shared_tables"`
	LagSeconds            float64        `json:"lag_seconds"`
	LagBeyondDelaySeconds float64        `json:"lag_beyond_delay_seconds"`
	LagMethod             *string        `json:"lag_method"`
	ClockOffsetSeconds    *float64       `json:"clock_offset_seconds"`
	HeartbeatError        *string        `json:"heartbeat_error"`
	Heartbeats            int64          `json:"heartbeats"`
	Backlog               int64          `json:"backlog"`
	DelaySeconds          float64        `json:"delay_seconds"`
	Filters               *filterWire    `json:"filters"`
}

type sourceWire struct {
	Endpoint         string     `json:"endpoint"`
	Connected        bool       `json:"connected"`
	Since            *time.Time `json:"since"`
	Reconnects       int64      `json:"reconnects"`
	LastError        *string    `json:"last_error"`
	LastErrorTime    *time.Time `json:"last_error_time"`
	Position         *string    `json:"position"`
	PositionTime     *time.Time `json:"position_time"`
	ReceivedPosition *string    `json:"received_position"`
	BinlogFile       *string    `json:"binlog_file"`
	BinlogOffset     int64      `json:"binlog_offset"`
	Transactions     int64      `json:"received_transactions"`
	Events           int64      `json:"received_events"`
	Bytes            int64      `json:"received_bytes"`
	LastEvent        *time.Time `json:"last_event_time"`
	LastTxn          *time.Time `json:"last_transaction_time"`
	InputReadBytes   int64      `json:"input_read_bytes"`
	InputBytes       int64      `json:"input_bytes"`
	FilesRead        int        `json:"files_read"`
	Files            int        `json:"files"`
}

type targetWire struct {
	Endpoint      string     `json:"endpoint"`
	Connected     bool       `json:"connected"`
	Since         *time.Time `json:"since"`
	LastError     *string    `json:"last_error"`
	LastErrorTime *time.Time `json:"last_error_time"`
	DownSeconds   float64    `json:"down_seconds"`
	LockHeld      bool       `json:"lock_held"`
	RedoLog       *redoWire  `json:"redo_log"`
}

type redoWire struct {
	FileBytes             int64   `json:"file_bytes"`
	CheckpointAgeBytes    int64   `json:"checkpoint_age_bytes"`
	CheckpointMaxAgeBytes int64   `json:"checkpoint_max_age_bytes"`
	Samples               int     `json:"samples"`
	FullShare             float64 `json:"full_share"`
}

// wire is the redo log's JSON form: null when the target never reported it.
func (r RedoLog) wire() *redoWire {
	if !r.Known {
		return nil
	}
	return &redoWire{FileBytes: r.FileBytes, CheckpointAgeBytes: r.AgeBytes, CheckpointMaxAgeBytes: r.MaxAgeBytes,
		Samples: r.Samples, FullShare: r.FullShare}
}

// redo reads the wire form back.
func (w *redoWire) redo() RedoLog {
	if w == nil {
		return RedoLog{}
	}
	return RedoLog{Known: true, FileBytes: w.FileBytes, AgeBytes: w.CheckpointAgeBytes, MaxAgeBytes: w.CheckpointMaxAgeBytes,
		Samples: w.Samples, FullShare: w.FullShare}
}

type relayWire struct {
	FirstIndex     uint64  `json:"first_index"`
	LastIndex      uint64  `json:"last_index"`
	Segments       int     `json:"segments"`
	Bytes          int64   `json:"bytes"`
	MaxBytes       int64   `json:"max_bytes"`
	Appended       uint64  `json:"appended_transactions"`
	AppendedBytes  int64   `json:"appended_bytes"`
	Syncs          uint64  `json:"syncs"`
	PurgedSegments uint64  `json:"purged_segments"`
	Blocked        bool    `json:"blocked"`
	BlockedSeconds float64 `json:"blocked_seconds"`
}

type schedulerWire struct {
	Assigned      int64               `json:"assigned_transactions"`
	Works         int64               `json:"target_transactions"`
	Skipped       int64               `json:"skipped_transactions"`
	Committed     int64               `json:"applied_transactions"`
	Pending       int                 `json:"queued_transactions"`
	Ready         int                 `json:"ready_transactions"`
	LowWaterMark  uint64              `json:"low_water_mark"`
	LastCommitted *time.Time          `json:"last_commit_time"`
	OldestPending *time.Time          `json:"oldest_pending_commit_time"`
	Limit         int                 `json:"workers_limit"`
	LimitReason   *string             `json:"workers_limit_reason"`
	Waits         map[string]waitWire `json:"waits"`
	HotTables     map[string]int64    `json:"hot_tables"`
}

type waitWire struct {
	Count   int64   `json:"count"`
	Seconds float64 `json:"seconds"`
}

type dependencyWire struct {
	Transactions  int64               `json:"transactions"`
	Statements    int64               `json:"statement_transactions"`
	Causes        map[string]int64    `json:"causes"`
	ForgottenKeys int64               `json:"forgotten_keys"`
	BarrierTables map[string][]string `json:"barrier_tables"`
	DelayedUntil  *time.Time          `json:"delayed_until"`
}

type checkpointWire struct {
	RelayIndex    uint64     `json:"relay_index"`
	Position      *string    `json:"position"`
	Reached       *string    `json:"reached"`
	OldestPending *time.Time `json:"oldest_pending_commit_time"`
	Saved         *time.Time `json:"saved"`
}

type filterWire struct {
	Rules        string `json:"rules"`
	Transactions int64  `json:"transactions"`
	Rows         int64  `json:"rows"`
	Statements   int64  `json:"statements"`
}

// The coordinator's waits by reason, as /status.json names them (the
// reasons of paraply_coordinator_waits_total).
const (
	waitDependency  = "dependency"
	waitBarrier     = "barrier"
	waitWorkersBusy = "workers_busy"
	waitQueueFull   = "queue_full"
	waitSource      = "source"
)

func (s Status) wire() statusWire {
	rcv, sch, deps := s.Receiver, s.Scheduler, s.Dependencies
	w := statusWire{
		Now: s.Now, Stream: s.Stream, Flavor: s.Flavor, Dependency: s.Dependency, Workers: s.Workers,
		AutoWorkers: s.AutoWorkers, PreserveOrder: s.PreserveOrder, Started: optTime(s.Started),
		Source: sourceWire{
			Endpoint: s.Source, Connected: rcv.Connected, Since: optTime(rcv.Since), Reconnects: rcv.Reconnects,
			LastError: optString(rcv.LastError), LastErrorTime: optTime(rcv.LastErrorTime),
			Position: optString(s.SourcePosition), PositionTime: optTime(s.SourcePositionTime),
			ReceivedPosition: optString(rcv.Position), BinlogFile: optString(rcv.SourceFile), BinlogOffset: rcv.SourceOffset,
			Transactions: rcv.Transactions, Events: rcv.Events, Bytes: rcv.Bytes,
			LastEvent: optTime(rcv.LastEvent), LastTxn: optTime(rcv.LastTxn),
			InputReadBytes: rcv.InputRead, InputBytes: rcv.InputBytes, FilesRead: rcv.FilesRead, Files: rcv.Files,
		},
		Target: targetWire{
			Endpoint: s.Target, Connected: s.TargetConnection.Connected, Since: optTime(s.TargetConnection.Since),
			LastError: optString(s.TargetConnection.LastError), LastErrorTime: optTime(s.TargetConnection.LastErrorTime),
			DownSeconds: s.TargetConnection.DownTime.Seconds(), LockHeld: s.LockHeld,
			RedoLog: s.TargetRedo.wire(),
		},
		Relay: relayWire{
			FirstIndex: s.Relay.First, LastIndex: s.Relay.Last, Segments: s.Relay.Segments, Bytes: s.Relay.Bytes,
			MaxBytes: s.Relay.MaxBytes, Appended: s.Relay.Appended, AppendedBytes: s.Relay.AppendedBytes, Syncs: s.Relay.Syncs,
			PurgedSegments: s.Relay.PurgedSegments, Blocked: s.Relay.Blocked, BlockedSeconds: s.Relay.BlockedTime.Seconds(),
		},
		Scheduler: schedulerWire{
			Assigned: sch.Assigned, Works: sch.Works, Skipped: sch.Skipped, Committed: sch.Committed,
			Pending: sch.Pending, Ready: sch.Ready, LowWaterMark: sch.LowWaterMark,
			LastCommitted: optTime(sch.LastCommitted), OldestPending: optMicros(sch.OldestPending),
			Limit: sch.Limit, LimitReason: optString(sch.LimitReason),
			Waits: map[string]waitWire{
				waitDependency:  {sch.DepWaits, sch.DepWaitTime.Seconds()},
				waitBarrier:     {sch.BarrierWaits, sch.BarrierWaitTime.Seconds()},
				waitWorkersBusy: {sch.BusyWaits, sch.BusyWaitTime.Seconds()},
				waitQueueFull:   {sch.FullWaits, sch.FullWaitTime.Seconds()},
				waitSource:      {sch.SourceWaits, sch.SourceWaitTime.Seconds()},
			},
			HotTables: orEmpty(sch.HotTables),
		},
		Dependencies: dependencyWire{
			Transactions: deps.Tracker.Transactions, Statements: deps.Tracker.Statements, Causes: map[string]int64{},
			ForgottenKeys: deps.Tracker.Forgotten, BarrierTables: map[string][]string{}, DelayedUntil: optTime(deps.DelayedUntil),
		},
		Checkpoint: checkpointWire{
			RelayIndex: s.Checkpoint.RelayIndex, Position: optString(s.Checkpoint.Position), Reached: optString(s.Checkpoint.Reached),
			OldestPending: optMicros(s.Checkpoint.OldestPending), Saved: optTime(s.CheckpointSaved),
		},
		Shared:     append([]string{}, s.Shared...),
		LagSeconds: s.Lag.Seconds(), LagBeyondDelaySeconds: s.LagBeyondDelay().Seconds(), LagMethod: optString(s.LagMethod),
		HeartbeatError: optString(s.HeartbeatError), Heartbeats: s.Heartbeats, Backlog: s.Backlog, DelaySeconds: s.Delay.Seconds(),
	}
	for _, c := range deptrack.Causes() {
		w.Dependencies.Causes[c.String()] = deps.Tracker.Causes[c]
	}
	for cause, tables := range deps.BarrierTables {
		names := make([]string, 0, len(tables))
		for t := range tables {
			names = append(names, t)
		}
		slices.Sort(names)
		w.Dependencies.BarrierTables[cause] = names
	}
	if s.ClockOffset != nil {
		off := s.ClockOffset.Seconds()
		w.ClockOffsetSeconds = &off
	}
	if f := s.Filters; f != nil {
		w.Filters = &filterWire{Rules: f.Rules, Transactions: f.Transactions, Rows: f.Rows, Statements: f.Statements}
	}
	return w
}

// status reads the wire form back: what `paraply status` prints from.
func (w statusWire) status() Status {
	s := Status{
		Now: w.Now, Stream: w.Stream, Source: w.Source.Endpoint, Target: w.Target.Endpoint, Flavor: w.Flavor,
		Dependency: w.Dependency, Workers: w.Workers, AutoWorkers: w.AutoWorkers, PreserveOrder: w.PreserveOrder,
		Started: timeOf(w.Started), SourcePosition: stringOf(w.Source.Position), SourcePositionTime: timeOf(w.Source.PositionTime),
		TargetConnection: Connection{
			Connected: w.Target.Connected, Since: timeOf(w.Target.Since), LastError: stringOf(w.Target.LastError),
			LastErrorTime: timeOf(w.Target.LastErrorTime), DownTime: duration(w.Target.DownSeconds),
		},
		TargetRedo: w.Target.RedoLog.redo(),
		LockHeld:   w.Target.LockHeld, CheckpointSaved: timeOf(w.Checkpoint.Saved), Shared: w.Shared,
		Lag: duration(w.LagSeconds), LagMethod: stringOf(w.LagMethod), HeartbeatError: stringOf(w.HeartbeatError),
		Heartbeats: w.Heartbeats, Backlog: w.Backlog, Delay: duration(w.DelaySeconds),
	}
	if len(s.Shared) == 0 {
		s.Shared = nil
	}
	src := w.Source
	s.Receiver.Connected, s.Receiver.Since, s.Receiver.Reconnects = src.Connected, timeOf(src.Since), src.Reconnects
	s.Receiver.LastError, s.Receiver.LastErrorTime = stringOf(src.LastError), timeOf(src.LastErrorTime)
	s.Receiver.Position, s.Receiver.SourceFile, s.Receiver.SourceOffset = stringOf(src.ReceivedPosition), stringOf(src.BinlogFile), src.BinlogOffset
	s.Receiver.Transactions, s.Receiver.Events, s.Receiver.Bytes = src.Transactions, src.Events, src.Bytes
	s.Receiver.LastEvent, s.Receiver.LastTxn = timeOf(src.LastEvent), timeOf(src.LastTxn)
	s.Receiver.InputRead, s.Receiver.InputBytes, s.Receiver.FilesRead, s.Receiver.Files = src.InputReadBytes, src.InputBytes, src.FilesRead, src.Files

	r := w.Relay
	s.Relay.First, s.Relay.Last, s.Relay.Segments, s.Relay.Bytes, s.Relay.MaxBytes = r.FirstIndex, r.LastIndex, r.Segments, r.Bytes, r.MaxBytes
	s.Relay.Appended, s.Relay.AppendedBytes, s.Relay.Syncs, s.Relay.PurgedSegments = r.Appended, r.AppendedBytes, r.Syncs, r.PurgedSegments
	s.Relay.Blocked, s.Relay.BlockedTime = r.Blocked, duration(r.BlockedSeconds)

	c, sch := w.Scheduler, &s.Scheduler
	sch.Assigned, sch.Works, sch.Skipped, sch.Committed = c.Assigned, c.Works, c.Skipped, c.Committed
	sch.Pending, sch.Ready, sch.LowWaterMark = c.Pending, c.Ready, c.LowWaterMark
	sch.LastCommitted, sch.OldestPending = timeOf(c.LastCommitted), micros(c.OldestPending)
	sch.Limit, sch.LimitReason = c.Limit, stringOf(c.LimitReason)
	if len(c.HotTables) > 0 {
		sch.HotTables = c.HotTables
	}
	wait := func(reason string, count *int64, d *time.Duration) {
		*count, *d = c.Waits[reason].Count, duration(c.Waits[reason].Seconds)
	}
	wait(waitDependency, &sch.DepWaits, &sch.DepWaitTime)
	wait(waitBarrier, &sch.BarrierWaits, &sch.BarrierWaitTime)
	wait(waitWorkersBusy, &sch.BusyWaits, &sch.BusyWaitTime)
	wait(waitQueueFull, &sch.FullWaits, &sch.FullWaitTime)
	wait(waitSource, &sch.SourceWaits, &sch.SourceWaitTime)

	d, deps := w.Dependencies, &s.Dependencies
	deps.Tracker.Transactions, deps.Tracker.Statements, deps.Tracker.Forgotten = d.Transactions, d.Statements, d.ForgottenKeys
	for _, cause := range deptrack.Causes() {
		deps.Tracker.Causes[cause] = d.Causes[cause.String()]
	}
	deps.BarrierTables = map[string]map[string]bool{}
	for cause, tables := range d.BarrierTables {
		deps.BarrierTables[cause] = map[string]bool{}
		for _, t := range tables {
			deps.BarrierTables[cause][t] = true
		}
	}
	deps.DelayedUntil = timeOf(d.DelayedUntil)

	cp := w.Checkpoint
	s.Checkpoint.RelayIndex, s.Checkpoint.Position, s.Checkpoint.Reached = cp.RelayIndex, stringOf(cp.Position), stringOf(cp.Reached)
	s.Checkpoint.OldestPending = micros(cp.OldestPending)
	if w.ClockOffsetSeconds != nil {
		off := duration(*w.ClockOffsetSeconds)
		s.ClockOffset = &off
	}
	if f := w.Filters; f != nil {
		s.Filters = &FilterStatus{Rules: f.Rules}
		s.Filters.Transactions, s.Filters.Rows, s.Filters.Statements = f.Transactions, f.Rows, f.Statements
		deps.Filtered = s.Filters.Counts
	}
	return s
}

// optTime is t, or nil for the zero time: never.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// optMicros is a time in microseconds since the epoch, nil for 0: none.
func optMicros(us int64) *time.Time {
	if us == 0 {
		return nil
	}
	return optTime(time.UnixMicro(us).UTC())
}

func micros(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixMicro()
}

// optString is s, or nil for "": none.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func stringOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// duration reads seconds back, to the nanosecond they were written from.
func duration(secs float64) time.Duration {
	return time.Duration(math.Round(secs * float64(time.Second)))
}

// orEmpty is m, or an empty map for nil: an object, never null.
func orEmpty(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}
