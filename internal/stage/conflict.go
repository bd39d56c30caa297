package stage

// ConflictError stops replication: the target does not hold what the
// source's binlog says it held (a row to change is missing, a row to insert
// already exists, a table is missing or different). It names the
// transaction, table and key, and nothing after it is applied, so that the
// target can be fixed and replication resumed.
type ConflictError struct {
	GTID  string
	Table string
	Key   string
	What  string
	Err   error
}

// Error names the transaction, table and key, and says what to do.
func (e *ConflictError) Error() string {
	s := "GTID " + e.GTID
	if e.Table != "" {
		s += ": " + e.Table
	}
	if e.Key != "" {
		s += " " + e.Key
	}
	s += ": " + e.What
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s + " (the target was left as it was; fix it and restart paraply to resume)"
}

// Unwrap returns the target's error, if any.
func (e *ConflictError) Unwrap() error { return e.Err }
