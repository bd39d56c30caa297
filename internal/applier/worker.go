package applier

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/replay"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// worker applies the work of one channel, one at a time, in a target
// session of its own; its buffers and session stay warm across works.
type worker struct {
	id     int
	p      *Pool
	log    *slog.Logger
	conn   *sql.Conn
	batch  sqlgen.Batch
	replay replay.Builder
	// format is the format description the session was given for BINLOG
	// statements (nil: none yet).
	format *binlog.Format
	// maxPacket is the target's max_allowed_packet, read with conn.
	maxPacket int
	// compound: the target runs each packet of SQL as a compound
	// statement (see runBatch).
	compound bool
	// mariadb: the target is MariaDB, read with conn; insertHistory: it
	// has system_versioning_insert_history (10.11 and later).
	mariadb, insertHistory bool
	// names is the session's character set and collation as the driver
	// set them ("utf8mb4 COLLATE utf8mb4_general_ci"), which a statement
	// run with the source session's changes (see restoreSession).
	names string
	// account is the session's account, user@host (CURRENT_USER()).
	account string
	// logsStatements: the target logs statements to its binlog
	// (binlog_format STATEMENT or MIXED), each under the session's
	// pseudo_thread_id, by which a replica of the target finds that
	// connection's temporary tables: the id is then set for every
	// statement, read or not (stage.Txn.ConnectionIDUnread).
	logsStatements bool
}

// run applies each work from in and sends it to done once committed: its
// only report of the commit (see Pool.Run).
func (w *worker) run(ctx context.Context, in <-chan *stage.Work, done chan<- *stage.Work) error {
	defer w.closeConn()
	for {
		select {
		case <-ctx.Done():
			return nil
		case work, ok := <-in:
			if !ok {
				return nil
			}
			if err := w.apply(ctx, work); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				work.Err = err
				return err
			}
			work.Worker = w.id
			select {
			case done <- work:
			case <-ctx.Done():
				return nil
			}
		}
	}
}
