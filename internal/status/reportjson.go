package status

import (
	"encoding/json"
	"time"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/replicate"
)

// A worker row as /status.json has it (docs/status-json.md): the worker's
// counters and its shares, flat, the time of its last commit null before
// the first, and no large transaction null.
type workerRowWire struct {
	Worker          int                    `json:"worker"`
	Transactions    int64                  `json:"transactions"`
	Works           int64                  `json:"target_transactions"`
	Retries         int64                  `json:"retries"`
	TurnWaits       int64                  `json:"turn_waits"`
	ExecSeconds     float64                `json:"exec_seconds"`
	TurnSeconds     float64                `json:"turn_seconds"`
	CommitSeconds   float64                `json:"commit_seconds"`
	LastApplied     *time.Time             `json:"last_commit_time"`
	Large           *applier.LargeProgress `json:"large_transaction"`
	ExecShare       float64                `json:"exec_share"`
	TurnShare       float64                `json:"turn_share"`
	CommitShare     float64                `json:"commit_share"`
	TargetWaitShare float64                `json:"target_wait_share"`
	IdleShare       float64                `json:"idle_share"`
}

// MarshalJSON writes the row as docs/status-json.md describes it.
func (r WorkerRow) MarshalJSON() ([]byte, error) {
	w := workerRowWire{
		Worker: r.Worker, Transactions: r.Transactions, Works: r.Works, Retries: r.Retries, TurnWaits: r.TurnWaits,
		ExecSeconds: r.ExecSeconds, TurnSeconds: r.TurnSeconds, CommitSeconds: r.CommitSeconds, Large: r.Large,
		ExecShare: r.ExecShare, TurnShare: r.TurnShare, CommitShare: r.CommitShare, TargetWaitShare: r.TargetWaitShare, IdleShare: r.IdleShare,
	}
	if !r.LastApplied.IsZero() {
		w.LastApplied = &r.LastApplied
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *WorkerRow) UnmarshalJSON(b []byte) error {
	var w workerRowWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = WorkerRow{ExecShare: w.ExecShare, TurnShare: w.TurnShare, CommitShare: w.CommitShare, TargetWaitShare: w.TargetWaitShare, IdleShare: w.IdleShare}
	s := &r.WorkerStats
	s.Worker, s.Transactions, s.Works, s.Retries, s.TurnWaits = w.Worker, w.Transactions, w.Works, w.Retries, w.TurnWaits
	s.ExecSeconds, s.TurnSeconds, s.CommitSeconds, s.Large = w.ExecSeconds, w.TurnSeconds, w.CommitSeconds, w.Large
	if w.LastApplied != nil {
		s.LastApplied = *w.LastApplied
	}
	return nil
}

// positionCount counts the transactions of st's source position as read
// at SourcePositionTime (binlog.Count); false when there is none.
func positionCount(st replicate.Status) (int64, bool) {
	if st.SourcePosition == "" || st.SourcePositionTime.IsZero() {
		return 0, false
	}
	f := binlog.FlavorMariaDB
	if st.Flavor == binlog.FlavorMySQL.String() {
		f = binlog.FlavorMySQL
	}
	n, err := binlog.Count(f, st.SourcePosition)
	return n, err == nil
}
