package main

import (
	"database/sql"
	"strings"
	"testing"
)

// TestRoleCreatorAdministers: a role's creator administers it. On the
// source that is the account that ran CREATE ROLE; paraply runs it as its
// own account, and gives the source's creator (the query event's invoker)
// the administration too, as MariaDB's replica does. Before, a later row
// change of mysql.roles_mapping naming the creator's row (MariaDB's
// suite/roles/set_role-routine-simple at ROW) stopped paraply: "DELETE
// matched 0 rows on the target".
func TestRoleCreatorAdministers(t *testing.T) {
	r := newFidelityRig(t, "roles")
	execAll(t, r.sdb, "CREATE USER dba@'%'", "GRANT ALL ON *.* TO dba@'%' WITH GRANT OPTION")
	dba, err := sql.Open("mysql", strings.Replace(r.src.DSN(""), "root@", "dba@", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer dba.Close()
	execAll(t, dba, "CREATE ROLE analyst", "CREATE ROLE auditor", "CREATE USER app@'%'", "GRANT analyst TO app@'%'",
		"DELETE FROM mysql.roles_mapping WHERE Role = 'auditor' AND User = 'dba'")
	source, _, ours := r.catchUpAndQuery(t, "SELECT Host, User, Role, Admin_option FROM mysql.roles_mapping ORDER BY Role, User, Host")
	// paraply's own account administers the roles it created, besides.
	var extra []string
	for _, line := range strings.SplitAfter(ours, "\n") {
		if !strings.Contains(source, line) {
			extra = append(extra, line)
		}
	}
	for _, line := range strings.SplitAfter(source, "\n") {
		if !strings.Contains(ours, line) {
			t.Errorf("paraply's target lacks the source's role mapping %q:\n%s", line, ours)
		}
	}
	if want := 2; len(extra) != want || !strings.Contains(strings.Join(extra, ""), "\"root\"") {
		t.Errorf("paraply's target has %d mappings the source lacks, want %d of paraply's account (root):\n%s", len(extra), want, strings.Join(extra, ""))
	}
	if !strings.Contains(source, `"%" | "dba" | "analyst" | "Y"`) {
		t.Errorf("the source's creator does not administer the role:\n%s", source)
	}
}
