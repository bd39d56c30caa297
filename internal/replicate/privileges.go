package replicate

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/schema"
)

// The privileges paraply's target account needs: on its bookkeeping
// schema to run at all, on each replicated database for its rows and the
// DDL the stream may hold there (docs/security.md).
var (
	bookkeepingPrivileges = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE"}
	databasePrivileges    = strings.Split(applier.ReplicatedDatabasePrivileges, ", ")
	// broadPrivileges are what the source's DDL outside the replicated
	// databases needs: a CREATE DATABASE, an account statement. Narrow
	// grants lack them, and such a statement then stops replication.
	broadPrivileges = []string{"CREATE", "DROP", "CREATE USER"}
)

// grants are the privileges the target account holds, from
// information_schema: global ones and those per database name pattern.
type grants struct {
	global  map[string]bool
	schemas map[string]map[string]bool // by GRANT's database pattern (% and _ wildcards)
}

// readGrants reads the current account's privileges on tgt.
func readGrants(ctx context.Context, tgt *sql.DB) (*grants, error) {
	var user string
	if err := tgt.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil {
		return nil, err
	}
	name, host, _ := strings.Cut(user, "@")
	grantee := "'" + name + "'@'" + host + "'"
	g := &grants{global: map[string]bool{}, schemas: map[string]map[string]bool{}}
	if err := readGlobalGrants(ctx, tgt, grantee, g.global); err != nil {
		return nil, err
	}
	rows, err := tgt.QueryContext(ctx, "SELECT TABLE_SCHEMA, PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ?", grantee)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var db, p string
		if err := rows.Scan(&db, &p); err != nil {
			return nil, err
		}
		if g.schemas[db] == nil {
			g.schemas[db] = map[string]bool{}
		}
		g.schemas[db][p] = true
	}
	return g, rows.Err()
}

// readGlobalGrants adds grantee's global privileges to global.
func readGlobalGrants(ctx context.Context, tgt *sql.DB, grantee string, global map[string]bool) error {
	rows, err := tgt.QueryContext(ctx, "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?", grantee)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return err
		}
		global[p] = true
	}
	return rows.Err()
}

// missing returns those of privs the account lacks on database db.
func (g *grants) missing(db string, privs []string) []string {
	var out []string
	for _, p := range privs {
		if g.global[p] {
			continue
		}
		held := false
		for pattern, ps := range g.schemas {
			if ps[p] && likeDatabase(pattern, db) {
				held = true
				break
			}
		}
		if !held {
			out = append(out, p)
		}
	}
	return out
}

// likeDatabase reports whether a GRANT's database pattern (% any
// characters, _ one, \ escapes) covers database db.
func likeDatabase(pattern, db string) bool {
	p, s := []rune(pattern), []rune(db)
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for i < len(p) {
			switch c := p[i]; {
			case c == '%':
				for k := j; k <= len(s); k++ {
					if match(i+1, k) {
						return true
					}
				}
				return false
			case j >= len(s):
				return false
			case c == '\\' && i+1 < len(p):
				if p[i+1] != s[j] {
					return false
				}
				i += 2
			case c == '_' || c == s[j]:
				i++
			default:
				return false
			}
			j++
		}
		return j == len(s)
	}
	return match(0, 0)
}

// checkPrivileges reads the target account's privileges before anything
// is applied: without those on paraply's bookkeeping schema it refuses to
// start; for the replicated databases the target holds (cat), it warns with
// the GRANT of each missing privilege, and once, when the grants are
// narrow, says what DDL will stop replication. A target whose grants it
// cannot read is not refused: applying tells.
func (r *Replica) checkPrivileges(ctx context.Context, tgt *sql.DB, cat *schema.Catalog) error {
	g, err := readGrants(ctx, tgt)
	if err != nil {
		r.log.Warn("cannot read the target account's privileges; a missing one stops replication when a statement needs it", "err", err)
		return nil
	}
	book := checkpoint.SchemaOf(r.cfg.Name)
	if miss := g.missing(book, bookkeepingPrivileges); len(miss) > 0 {
		return fmt.Errorf("target %s: the account lacks %s on `%s`.*, where paraply keeps its checkpoint: GRANT %s ON `%s`.* TO the account (docs/security.md)",
			r.cfg.Target, strings.Join(miss, ", "), book, strings.Join(miss, ", "), book)
	}
	for _, db := range databases(cat) {
		if !r.cfg.Filter.WholeDatabase(db) {
			continue
		}
		if miss := g.missing(db, databasePrivileges); len(miss) > 0 {
			r.log.Warn("the target account lacks privileges on a replicated database: a transaction that needs one stops replication",
				"database", db, "missing", strings.Join(miss, ", "),
				"remedy", "GRANT "+strings.Join(miss, ", ")+" ON "+schema.QuoteIdent(db)+".* TO the target account")
		}
	}
	if miss := g.missing("", broadPrivileges); len(miss) > 0 {
		r.log.Info("the target account has narrow grants: DDL in the stream outside the databases it may change (a CREATE DATABASE, an account statement) will stop replication with the GRANT it needs",
			"missing_globally", strings.Join(miss, ", "))
	}
	return nil
}

// databases lists the databases of the catalog's tables, sorted.
func databases(cat *schema.Catalog) []string {
	var out []string
	for _, t := range cat.Tables() {
		if !checkpoint.IsBookkeeping(t.Schema) && !slices.Contains(out, t.Schema) {
			out = append(out, t.Schema)
		}
	}
	slices.Sort(out)
	return out
}

// MissingPrivileges returns those of privs that db's account lacks on
// database (package clone checks the source account's with it).
func MissingPrivileges(ctx context.Context, db *sql.DB, database string, privs []string) ([]string, error) {
	g, err := readGrants(ctx, db)
	if err != nil {
		return nil, err
	}
	return g.missing(database, privs), nil
}
