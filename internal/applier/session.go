package applier

import (
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// modeNoDirInCreate is sql_mode's NO_DIR_IN_CREATE, which a replica keeps
// its own of (MariaDB and MySQL alike).
const modeNoDirInCreate = 1 << 7

// statementSession returns the SET statement, and its arguments, that
// gives a target session the context of the source session that ran st,
// as MariaDB's replica sets it before it runs a query event
// (Query_log_event::do_apply_event): the statement's clock, time zone,
// locale, auto-increment settings and option flags, and, when source and
// target are of one flavor (sameFlavor: their collation IDs and sql_mode
// bits agree), its character sets and sql_mode. A statement that did not
// use the time zone carries none; it gets the target's default, as on a
// native replica. mariadb says the target is MariaDB.
//
// The session is left with these settings: the caller closes it after the
// statement, or sets them again for the next.
func statementSession(st *binlog.Statement, sameFlavor, mariadb bool) (string, []any) {
	s := &st.Session
	var set []string
	var args []any
	add := func(v string, a ...any) {
		set = append(set, v)
		args = append(args, a...)
	}
	if st.When != 0 {
		// The server keeps the timestamp as a double and truncates its
		// fraction to microseconds: half a microsecond more lands on the
		// source's.
		add("@@session.timestamp = ?", float64(st.When)+(float64(s.Microseconds)+0.5)/1e6)
	}
	if s.TimeZone != "" {
		add("@@session.time_zone = ?", s.TimeZone)
	} else {
		add("@@session.time_zone = @@global.time_zone")
	}
	add("@@session.lc_time_names = ?", int(s.LCTimeNames))
	if s.AutoIncrementIncrement != 0 {
		add("@@session.auto_increment_increment = ?, @@session.auto_increment_offset = ?", int(s.AutoIncrementIncrement), int(s.AutoIncrementOffset))
	}
	if s.HasFlags2 {
		add("@@session.foreign_key_checks = ?, @@session.unique_checks = ?, @@session.sql_auto_is_null = ?",
			flag(s.Flags2&binlog.OptionNoForeignKeyChecks == 0), flag(s.Flags2&binlog.OptionRelaxedUniqueChecks == 0),
			flag(s.Flags2&binlog.OptionAutoIsNull != 0))
	}
	if sameFlavor {
		if s.Server != 0 {
			f := schema.MySQL
			if mariadb {
				f = schema.MariaDB
			}
			if cs := schema.CharsetOfCollationID(f, int(s.Client)); cs != "" {
				add("@@session.character_set_client = ?", cs)
			} else {
				add("@@session.character_set_client = ?", int(s.Client))
			}
			add("@@session.collation_connection = ?, @@session.collation_server = ?", int(s.Connection), int(s.Server))
		}
		if s.CharsetDatabase != 0 {
			add("@@session.collation_database = ?", int(s.CharsetDatabase))
		}
		if s.HasSQLMode {
			add("@@session.sql_mode = ?", s.SQLMode&^modeNoDirInCreate)
		}
		if s.ExplicitDefaultsTS != 0 && !mariadb {
			add("@@session.explicit_defaults_for_timestamp = ?", flag(s.ExplicitDefaultsTS == 2))
		}
	}
	return "SET " + strings.Join(set, ", "), args
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
