package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// erAccessDenied is the server's "Access denied for user ... (using
// password: NO)", which it also gives an account created REQUIRE SSL
// that logs in without TLS: it does not say which of the two is missing.
const erAccessDenied = 1045

// ExplainDenied returns err with the likely remedy first when it is the
// server refusing e's login (ER_ACCESS_DENIED_ERROR) and e was given no
// password or no TLS: the settings that give them, named for role
// ("source" or "target") as the flags and the config file name them.
// Any other error, and a refusal with both a password and TLS (a wrong
// password, or a host the account does not allow), is returned as is.
func (e Endpoint) ExplainDenied(role string, err error) error {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != erAccessDenied {
		return err
	}
	var missing []string
	if !e.HasPassword() {
		missing = append(missing, fmt.Sprintf("no password was given (set %s-password-file, in --config or as --%[1]s-password-file, or PARAPLY_%s_PASSWORD)",
			role, strings.ToUpper(role)))
	}
	if e.tls == nil {
		missing = append(missing, fmt.Sprintf("TLS is off, and an account created REQUIRE SSL (as docs/security.md creates paraply's) "+
			"refuses a login without it (set %s-tls = on and %[1]s-tls-ca, in --config or as flags)", role))
	}
	if len(missing) == 0 {
		return err
	}
	return fmt.Errorf("the %s refused the login: %s: %w", role, strings.Join(missing, "; and "), err)
}
