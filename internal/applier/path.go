package applier

import "fmt"

// Path is how workers apply row changes.
type Path uint8

// The apply paths.
const (
	// SQLPath turns row changes into SQL statements (sqlgen): any MySQL
	// or MariaDB target, with row compaction; not exact for tables whose
	// target fires triggers, system-versioned tables or sequences.
	SQLPath Path = iota
	// BinlogPath sends the row events themselves for the target's own row
	// applier (package replay): exact as a native replica, needs the
	// BINLOG REPLAY privilege on a MariaDB target. It costs the target
	// more (one BINLOG statement, one round trip and one table open per
	// source transaction; docs/benchmark.md, "The measurements behind the
	// defaults").
	BinlogPath
	// AutoPath applies work with SQL, and with the binlog path when one
	// of its tables is one SQL cannot apply exactly (triggers on the
	// target, system versioning, a sequence) or whose definition does not
	// match the binlog's (the target's row applier takes what a replica
	// takes, extra columns at the end for one).
	AutoPath
)

// String is the path's name, as --apply spells it.
func (p Path) String() string {
	switch p {
	case BinlogPath:
		return "binlog"
	case AutoPath:
		return "auto"
	}
	return "sql"
}

// ParsePath reads a path as --apply spells it.
func ParsePath(s string) (Path, error) {
	for _, p := range []Path{SQLPath, BinlogPath, AutoPath} {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%q: want auto, binlog or sql", s)
}
