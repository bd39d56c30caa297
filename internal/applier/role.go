package applier

import (
	"context"
	"database/sql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/stage"
)

// roleAdmin gives the account that ran a CREATE ROLE on the source (the
// query event's invoker) the administration of the role that the source
// gave it. paraply runs the statement as its own account, which then
// administers the role, as it must to apply the source's later GRANTs of
// it (granting a role takes its ADMIN OPTION, whatever else an account
// may do). MariaDB's replica, which checks no privileges, makes the
// invoker its administrator; paraply adds the invoker, so that the
// source's later changes of mysql.roles_mapping find its rows, and the
// creator can grant the role after a failover. The target then holds one
// mapping more, paraply's account's (docs/known-gaps.md).
//
// With --preserve-gtids the GRANT would need a GTID of its own, which the
// source never gave: the invoker is left out, as the known gap says.
func (w *worker) roleAdmin(ctx context.Context, conn *sql.Conn, t *stage.Txn, st *binlog.Statement, q string) error {
	s := st.Session
	role, ok := schema.CreatedRole(q)
	if !ok || s.InvokerUser == "" || s.InvokerUser+"@"+s.InvokerHost == w.account || w.p.cfg.PreserveGTIDs {
		return nil
	}
	g := "GRANT " + schema.QuoteIdent(role) + " TO " + schema.QuoteIdent(s.InvokerUser) + "@" + schema.QuoteIdent(s.InvokerHost) + " WITH ADMIN OPTION"
	if _, err := conn.ExecContext(ctx, g); err != nil {
		if retryable(err) {
			return err
		}
		// An invoker the target does not know: the role stays paraply's
		// alone, as without this step.
		w.log.Warn("CREATE ROLE: the role's creator on the source cannot administer it on the target",
			"gtid", t.GTID, "role", role, "creator", s.InvokerUser+"@"+s.InvokerHost, "err", redacted{err})
	}
	return nil
}
