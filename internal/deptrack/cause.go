package deptrack

// Cause says why a transaction became a barrier or serialized more than its
// rows require. Causes are counted per mode by the tracker.
type Cause uint8

// Causes.
const (
	CauseNone Cause = iota
	// CauseDDL: the transaction contains DDL.
	CauseDDL
	// CauseStatement: rows changed by a statement-format event (or LOAD
	// DATA), so the rows are unknown.
	CauseStatement
	// CauseUnknownTable: no schema is known for a table it writes.
	CauseUnknownTable
	// CauseSchemaMismatch: the row images do not match the known schema
	// (column count), so key columns cannot be located.
	CauseSchemaMismatch
	// CauseMissingKeyColumn: a row image lacks a key column
	// (binlog_row_image=MINIMAL with a secondary unique key).
	CauseMissingKeyColumn
	// CausePartialJSON: a MySQL partial JSON update is part of a key.
	CausePartialJSON
	// CauseUnknownClock: commit-order mode without a usable source clock
	// for this transaction (last_committed 0, first of a file, no clock).
	CauseUnknownClock
	// CauseKeyless: the transaction writes a table without primary or
	// unique key (exclusive table token, not a barrier).
	CauseKeyless
	// CauseCascade: the transaction writes a parent table whose foreign
	// keys cascade (exclusive tokens on the children, not a barrier).
	CauseCascade
	// CauseHistory: a key may have been forgotten by the bounded history,
	// so the transaction waited for the newest forgotten writer.
	CauseHistory
	// CauseLarge: a transaction too large to hold (binlog.Txn.Large): its
	// keys are not known, and not added one by one to the history, as
	// MySQL drops a writeset larger than its history. A barrier keeps the
	// history correct after it: every later transaction waits for it, so
	// no later writer of one of its rows can run before it, whatever the
	// history remembers.
	CauseLarge
	numCauses
)

var causeNames = [...]string{
	CauseNone:             "none",
	CauseDDL:              "ddl",
	CauseStatement:        "statement",
	CauseUnknownTable:     "unknown_table",
	CauseSchemaMismatch:   "schema_mismatch",
	CauseMissingKeyColumn: "missing_key_column",
	CausePartialJSON:      "partial_json",
	CauseUnknownClock:     "unknown_clock",
	CauseKeyless:          "keyless_table",
	CauseCascade:          "fk_cascade",
	CauseHistory:          "history_forgotten",
	CauseLarge:            "large_transaction",
}

func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "unknown"
}

// IsBarrier reports whether the cause makes the transaction a full barrier.
func (c Cause) IsBarrier() bool {
	switch c {
	case CauseDDL, CauseStatement, CauseUnknownTable, CauseSchemaMismatch, CauseMissingKeyColumn, CausePartialJSON, CauseLarge:
		return true
	}
	return false
}

// Causes lists every cause except CauseNone, in a stable order.
func Causes() []Cause {
	out := make([]Cause, 0, numCauses-1)
	for c := CauseNone + 1; c < numCauses; c++ {
		out = append(out, c)
	}
	return out
}
