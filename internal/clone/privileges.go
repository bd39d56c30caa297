package clone

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/replicate"
)

// checkSource refuses a source account that would not see all the clone
// copies: the server hides the triggers of a table from an account
// without TRIGGER on it, and the events of a database from one without
// EVENT there, so a clone would leave them out without a word; without
// SHOW VIEW, a view's definition cannot be read.
func (c *Cloner) checkSource(ctx context.Context, src *sql.DB, cat *catalog) error {
	dbs := slices.Clone(cat.databases)
	views := map[string]bool{}
	for _, t := range cat.tables {
		dbs = append(dbs, t.src.Schema)
	}
	for _, o := range cat.objects {
		if o.kind == "VIEW" {
			views[o.schema] = true
		}
	}
	slices.Sort(dbs)
	for _, db := range slices.Compact(dbs) {
		need := []string{"TRIGGER", "EVENT"}
		if views[db] {
			need = append(need, "SHOW VIEW")
		}
		miss, err := replicate.MissingPrivileges(ctx, src, db, need)
		if err != nil {
			c.log.Warn("cannot read the source account's privileges: triggers and events it may not see would not be copied", "err", err)
			return nil
		}
		if len(miss) > 0 {
			return fmt.Errorf("source %s: the account lacks %s on `%s`.*: the server hides triggers and events from an account without TRIGGER and EVENT, "+
				"so the clone would leave them out, and SHOW VIEW shows a view's definition: GRANT %s ON `%s`.* TO the source account (docs/security.md)",
				c.cfg.Stream.Source, strings.Join(miss, ", "), db, strings.Join(miss, ", "), db)
		}
	}
	return nil
}
