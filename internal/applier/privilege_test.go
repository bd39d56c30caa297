package applier

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestPrivilegeHint: each kind of access-denied error names the missing
// privilege, the object and the GRANT, with the server's own wording.
func TestPrivilegeHint(t *testing.T) {
	for _, c := range []struct {
		err  error
		want []string
	}{
		{&mysql.MySQLError{Number: 1044, Message: "Access denied for user 'paraply'@'%' to database 'legacy'"},
			[]string{"on `legacy`.*", "TO 'paraply'@'%'", "README Security"}},
		{&mysql.MySQLError{Number: 1227, Message: "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation"},
			[]string{"lacks CREATE USER on *.*", "GRANT CREATE USER ON *.*"}},
		{&mysql.MySQLError{Number: 1142, Message: "INSERT command denied to user 'paraply'@'localhost' for table `app`.`t`"},
			[]string{"lacks INSERT on `app`.`t`", "GRANT INSERT ON `app`.`t` TO 'paraply'@'localhost'"}},
		{&mysql.MySQLError{Number: 1142, Message: "CREATE VIEW command denied to user 'p'@'h' for table 'v1'"},
			[]string{"lacks CREATE VIEW on `v1`", "GRANT CREATE VIEW ON `v1` TO 'p'@'h'"}},
	} {
		got := privilegeHint(c.err)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: %q does not say %q", c.err, got, w)
			}
		}
	}
	if privilegeHint(&mysql.MySQLError{Number: 1062}) != "" || privilegeHint(errors.New("x")) != "" {
		t.Error("a hint for an error that is not about privileges")
	}
}
