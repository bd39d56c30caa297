package applier

import (
	"errors"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// MariaDB/MySQL error numbers of a missing privilege.
const (
	erDBAccessDenied       = 1044 // Access denied for user '%s'@'%s' to database '%s'
	erTableAccessDenied    = 1142 // %s command denied to user '%s'@'%s' for table '%s'
	erColumnAccessDenied   = 1143 // %s command denied to user '%s'@'%s' for column '%s' in table '%s'
	erSpecificAccessDenied = 1227 // Access denied; you need (at least one of) the %s privilege(s) for this operation
	erProcAccessDenied     = 1370 // %s command denied to user '%s'@'%s' for routine '%s'
)

// The parts of the messages of those errors that name what is missing.
var (
	deniedUser     = regexp.MustCompile(`to user '([^']*)'@'([^']*)'|for user '([^']*)'@'([^']*)'`)
	deniedDatabase = regexp.MustCompile(`to database '([^']*)'`)
	deniedTable    = regexp.MustCompile(`^(\w[\w ]*?) command denied .* for (?:table|routine) (.+)$`)
	deniedNeed     = regexp.MustCompile(`you need \(at least one of\) the (.+?) privilege`)
)

// ReplicatedDatabasePrivileges are the privileges paraply's target account needs on
// a database it replicates (docs/security.md, the narrow grants; the
// start-time check in package replicate asks for the same).
const ReplicatedDatabasePrivileges = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX"

// privilegeHint says, for an error of the target's that a privilege is
// missing, which privilege and on what, and the GRANT that gives it; ""
// for any other error. paraply's target account needs, beyond the narrow
// grants on the replicated databases, what the source's DDL does: a
// CREATE DATABASE needs CREATE on the new database, a CREATE USER the
// CREATE USER privilege (docs/security.md).
func privilegeHint(err error) string {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return ""
	}
	user := "<paraply's target account>"
	if m := deniedUser.FindStringSubmatch(me.Message); m != nil {
		name, host := m[1], m[2]
		if name == "" && host == "" {
			name, host = m[3], m[4]
		}
		user = "'" + name + "'@'" + host + "'"
		if !strings.Contains(host, "%") {
			// The server names the client's address in most of these
			// messages, not the account's host pattern, to which a
			// GRANT must go.
			user += " (or the host pattern of paraply's account, such as '%')"
		}
	}
	const broad = "; or give the account the grants of a general-purpose replica (README Security, docs/security.md); then restart paraply"
	var priv, on string
	switch me.Number {
	case erDBAccessDenied:
		// The server names the database, not the privilege: it is the
		// statement's, and a database the account may not touch at all is
		// most often a new one the narrow grants do not cover.
		db := "<database>"
		if m := deniedDatabase.FindStringSubmatch(me.Message); m != nil {
			db = m[1]
		}
		on = "`" + db + "`.*"
		return "the target account lacks a privilege on " + on + " that the statement needs (CREATE for a CREATE DATABASE, " +
			"DROP for a DROP DATABASE, CREATE TEMPORARY TABLES for a temporary table, GRANT OPTION for a GRANT): " +
			"to replicate `" + db + "` as the other databases, GRANT " + ReplicatedDatabasePrivileges + " ON " + on + " TO " + user + broad
	case erTableAccessDenied, erColumnAccessDenied, erProcAccessDenied:
		priv, on = "the privilege the statement needs", "<object>"
		if m := deniedTable.FindStringSubmatch(me.Message); m != nil {
			// MariaDB quotes the object `db`.`t`, MySQL 't'.
			priv, on = strings.ToUpper(m[1]), strings.TrimSpace(m[2])
			if strings.HasPrefix(on, "'") {
				on = "`" + strings.Trim(on, "'") + "`"
			}
		}
	case erSpecificAccessDenied:
		priv, on = "the privilege the statement needs", "*.*"
		if m := deniedNeed.FindStringSubmatch(me.Message); m != nil {
			priv = m[1]
		}
	default:
		return ""
	}
	return "the target account lacks " + priv + " on " + on + ": GRANT " + grantable(priv) + " ON " + on + " TO " + user + broad
}

// grantable is priv as a GRANT names it, or a placeholder when the error
// did not name one.
func grantable(priv string) string {
	if strings.HasPrefix(priv, "the ") {
		return "<privilege>"
	}
	return priv
}
