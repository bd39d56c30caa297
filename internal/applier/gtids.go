package applier

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/stage"
)

// sourceGTID makes the next transaction conn commits carry t's source GTID
// (Config.PreserveGTIDs): MariaDB logs it under the session's
// gtid_domain_id, server_id and gtid_seq_no, as a native replica logs what
// it applies. The variables are set before every attempt: a failed one
// does not consume gtid_seq_no, a reconnection loses it.
//
// A source transaction that becomes several target transactions (a CREATE
// TABLE ... SELECT: the DDL commits on its own, then the rows) logs its
// GTID once for each; a target with gtid_strict_mode=ON refuses the
// second, which the error then says.
func (w *worker) sourceGTID(ctx context.Context, conn *sql.Conn, t *stage.Txn) error {
	if !w.p.cfg.PreserveGTIDs {
		return nil
	}
	g := t.Txn.GTID
	if g.Flavor != binlog.FlavorMariaDB {
		return &stage.ConflictError{GTID: t.GTID, What: "--preserve-gtids: not a MariaDB GTID", Err: fmt.Errorf("%q", t.GTID)}
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION gtid_domain_id = ?, server_id = ?, gtid_seq_no = ?", g.Domain, g.Server, g.Seq); err != nil {
		return fmt.Errorf("giving the target session the source's GTID %s: %w", t.GTID, err)
	}
	return nil
}
