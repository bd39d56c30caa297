package applier

import (
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// assignment is one session variable of a SET: its name and its value
// as an SQL literal (or expression).
type assignment struct{ name, value string }

// setStatement is the SET statement of as.
func setStatement(as []assignment) string {
	var b strings.Builder
	b.WriteString("SET ")
	for i, a := range as {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.name + " = " + a.value)
	}
	return b.String()
}

// statementSession returns the session variables, with their values as
// literals, that give a target session the context of the source session
// that ran st, as MariaDB's replica sets it before it runs a query event
// (Query_log_event::do_apply_event): the statement's clock, time zone,
// locale, auto-increment settings and option flags, and, when source and
// target are of one flavor (sameFlavor: their collation IDs and sql_mode
// bits agree), its character sets and sql_mode. A statement that did not
// use the time zone carries none; it gets the target's default, as on a
// native replica. mariadb says the target is MariaDB.
//
// The session is left with these settings: the caller closes it after the
// statement, or sets them again for the next, or restores its own.
func statementSession(st *binlog.Statement, sameFlavor, mariadb bool) []assignment {
	s := &st.Session
	var as []assignment
	add := func(name string, v any) { as = append(as, assignment{name, literal(v)}) }
	if st.When != 0 {
		add("@@session.timestamp", statementTime(st))
	}
	if s.TimeZone != "" {
		add("@@session.time_zone", s.TimeZone)
	} else {
		as = append(as, assignment{"@@session.time_zone", "@@global.time_zone"})
	}
	add("@@session.lc_time_names", int(s.LCTimeNames))
	// The event carries them when they are not 1 (a replica sets them for
	// every statement, 1 when absent).
	add("@@session.auto_increment_increment", max(int(s.AutoIncrementIncrement), 1))
	add("@@session.auto_increment_offset", max(int(s.AutoIncrementOffset), 1))
	if s.HasFlags2 {
		add("@@session.foreign_key_checks", flag(s.Flags2&binlog.OptionNoForeignKeyChecks == 0))
		add("@@session.unique_checks", flag(s.Flags2&binlog.OptionRelaxedUniqueChecks == 0))
		add("@@session.sql_auto_is_null", flag(s.Flags2&binlog.OptionAutoIsNull != 0))
		if sameFlavor && mariadb {
			// MariaDB's own bits: a source of MySQL's never sets them.
			add("@@session.check_constraint_checks", flag(s.Flags2&binlog.OptionNoCheckConstraintChecks == 0))
			add("@@session.sql_if_exists", flag(s.Flags2&binlog.OptionIfExists != 0))
			// An option bit since 10.10, applied as the bit says
			// whatever the source's version, as MariaDB's replica does.
			add("@@session.explicit_defaults_for_timestamp", flag(s.Flags2&binlog.OptionExplicitDefaultsTS != 0))
			if s.Flags2&binlog.OptionInsertHistory != 0 {
				// Only when set: targets before 10.11 lack the
				// variable, and cannot take such a statement anyway.
				add("@@session.system_versioning_insert_history", 1)
			}
		}
	}
	if sameFlavor {
		if s.Server != 0 {
			f := schema.MySQL
			if mariadb {
				f = schema.MariaDB
			}
			if cs := schema.CharsetOfCollationID(f, int(s.Client)); cs != "" {
				add("@@session.character_set_client", cs)
			} else {
				add("@@session.character_set_client", int(s.Client))
			}
			add("@@session.collation_connection", int(s.Connection))
			add("@@session.collation_server", int(s.Server))
		}
		if s.CharsetDatabase != 0 {
			add("@@session.collation_database", int(s.CharsetDatabase))
		}
		if s.HasSQLMode {
			// NO_DIR_IN_CREATE: a replica keeps its own (MariaDB and MySQL alike).
			add("@@session.sql_mode", s.SQLMode&^binlog.ModeNoDirInCreate)
		}
		if s.ExplicitDefaultsTS != 0 && !mariadb {
			add("@@session.explicit_defaults_for_timestamp", flag(s.ExplicitDefaultsTS == 2))
		}
	}
	return as
}

// statementTime is st's start on the source as @@session.timestamp takes
// it. The server keeps the timestamp as a double and truncates its
// fraction to microseconds: half a microsecond more lands on the source's.
func statementTime(st *binlog.Statement) float64 {
	return float64(st.When) + (float64(st.Session.Microseconds)+0.5)/1e6
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
