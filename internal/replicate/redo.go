package replicate

import (
	"context"
	"database/sql"
	"sync"
)

// RedoLog is what the target's InnoDB says of its redo log, read every
// second by the target's probe (pingTarget). A redo log too small for the
// rate paraply applies at fills within seconds: InnoDB must then write
// dirty pages out before it can reuse the log, and holds commits back
// meanwhile (docs/benchmark.md, "The target's redo log", has what that
// cost the benchmark's targets). The workers see only slow statements;
// this is what tells the cause.
type RedoLog struct {
	// Known: the target reported its checkpoint age (MariaDB does; MySQL
	// has no such status variable, and its redo log is never reported).
	Known bool
	// FileBytes is innodb_log_file_size. AgeBytes and MaxAgeBytes are the
	// last Innodb_checkpoint_age (redo written since the last checkpoint)
	// and Innodb_checkpoint_max_age (how much it may reach).
	FileBytes, AgeBytes, MaxAgeBytes int64
	// Samples is how many of the last redoSamples reads returned the age;
	// FullShare the share of them in which it was at redoFull of its
	// maximum or above.
	Samples   int
	FullShare float64
}

const (
	// redoSamples is how many reads FullShare covers: ten seconds at the
	// probe's pace, about the status window.
	redoSamples = 10
	// redoFull is where InnoDB starts writing pages out at once, as
	// MariaDB 10.5 and later do from 7/8 of the maximum checkpoint age
	// (log_sys.max_modified_age_async); a log that reaches it stays there
	// while the pages go out.
	redoFull = 7.0 / 8
)

// redoWatch keeps the target's last redo log reads. It is safe for
// concurrent use; mu guards the fields.
type redoWatch struct {
	mu   sync.Mutex
	last RedoLog
	full [redoSamples]bool // ring of the last reads: at redoFull or above
	n    int               // reads in the ring, up to redoSamples
	next int               // where the next read goes
}

// read records a read of the target: its log file size, checkpoint age
// and maximum age.
func (w *redoWatch) read(file, age, maxAge int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.full[w.next] = maxAge > 0 && float64(age) >= redoFull*float64(maxAge)
	w.next = (w.next + 1) % redoSamples
	w.n = min(w.n+1, redoSamples)
	full := 0
	for i := range w.n {
		if w.full[i] {
			full++
		}
	}
	w.last = RedoLog{Known: true, FileBytes: file, AgeBytes: age, MaxAgeBytes: maxAge,
		Samples: w.n, FullShare: float64(full) / float64(w.n)}
}

// state is the last reads' summary.
func (w *redoWatch) state() RedoLog {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// redoQuery reads the three values in one round trip. GLOBAL_STATUS is
// MariaDB's (MySQL 8 moved it to performance_schema and has no checkpoint
// age there): on a target without it the query fails or returns NULLs,
// and the redo log stays unknown.
const redoQuery = "SELECT @@GLOBAL.innodb_log_file_size, " +
	"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_CHECKPOINT_AGE'), " +
	"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_CHECKPOINT_MAX_AGE')"

// readRedo reads the target's redo log into w. A target that has no
// checkpoint age to report (NULLs) leaves w as it was.
func readRedo(ctx context.Context, db *sql.DB, w *redoWatch) error {
	var file, age, maxAge sql.NullInt64
	err := db.QueryRowContext(ctx, redoQuery).Scan(&file, &age, &maxAge)
	if err != nil {
		return err
	}
	if file.Valid && age.Valid && maxAge.Valid {
		w.read(file.Int64, age.Int64, maxAge.Int64)
	}
	return nil
}
