package applier

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
)

// TestStatementSession: the SET carries what the query event says, as
// literals: character_set_client by name (a collation ID that is not its
// character set's default is refused as a character set), strings in hex,
// the clock half a microsecond up (the server truncates), and the
// target's own time zone when the statement used none.
func TestStatementSession(t *testing.T) {
	st := &binlog.Statement{When: 981194400, Session: binlog.QuerySession{
		Client: 31, Connection: 31, Server: 8, HasSQLMode: true, SQLMode: 1<<7 | 1<<22,
		HasFlags2: true, Flags2: binlog.OptionNoForeignKeyChecks | binlog.OptionNoCheckConstraintChecks, AutoIncrementIncrement: 3, AutoIncrementOffset: 2,
		LCTimeNames: 4, CharsetDatabase: 31, Microseconds: 123456,
	}}
	want := "SET @@session.timestamp = 9.811944001234565e+08, @@session.time_zone = @@global.time_zone, @@session.lc_time_names = 4, " +
		"@@session.auto_increment_increment = 3, @@session.auto_increment_offset = 2, " +
		"@@session.foreign_key_checks = 0, @@session.unique_checks = 1, @@session.sql_auto_is_null = 0, " +
		"@@session.check_constraint_checks = 0, @@session.sql_if_exists = 0, @@session.explicit_defaults_for_timestamp = 0, " +
		"@@session.character_set_client = X'6c6174696e31', @@session.collation_connection = 31, @@session.collation_server = 8, " +
		"@@session.collation_database = 31, @@session.sql_mode = 4194304"
	if got := setStatement(statementSession(st, true, true)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	st.Session.TimeZone = "+03:00"
	st.Session.AutoIncrementIncrement, st.Session.AutoIncrementOffset = 0, 0
	want = "SET @@session.timestamp = 9.811944001234565e+08, @@session.time_zone = X'2b30333a3030', @@session.lc_time_names = 4, " +
		"@@session.auto_increment_increment = 1, @@session.auto_increment_offset = 1, " +
		"@@session.foreign_key_checks = 0, @@session.unique_checks = 1, @@session.sql_auto_is_null = 0"
	if got := setStatement(statementSession(st, false, true)); got != want {
		t.Errorf("another flavor:\ngot  %s\nwant %s", got, want)
	}
	// system_versioning_insert_history only when the bit says ON: a target
	// before 10.11 has no such variable.
	st.Session.Flags2 |= binlog.OptionInsertHistory
	if got := setStatement(statementSession(st, true, true)); !strings.Contains(got, "@@session.system_versioning_insert_history = 1") {
		t.Errorf("insert history: %s", got)
	}
	for v, want := range map[string]bool{"10.11.19-MariaDB-0+deb12u1": true, "11.4.2-MariaDB": true, "10.6.18-MariaDB": false, "8.0.36": false, "junk": false} {
		if got := versionAtLeast(v, 10, 11); got != want {
			t.Errorf("versionAtLeast(%q, 10, 11) = %v", v, got)
		}
	}
}

// TestIdempotentDDL: the errors a replica in slave_ddl_exec_mode=IDEMPOTENT
// goes on after, for the statements that meet them, and CREATE OR REPLACE.
func TestIdempotentDDL(t *testing.T) {
	e := func(n uint16) error { return &mysql.MySQLError{Number: n} }
	for _, c := range []struct {
		q    string
		err  error
		want idempotence
	}{
		{"DROP TABLE t", e(1051), goneOrThere},
		{"/*!40005 DROP TEMPORARY TABLE t */", e(1051), goneOrThere},
		{"DROP DATABASE d", e(1008), goneOrThere},
		{"create schema d", e(1007), goneOrThere},
		{"CREATE TABLE t (a INT)", e(1050), createExists},
		{"CREATE TABLE t (a INT)", e(1051), notIdempotent},
		{"DROP VIEW v", e(1051), notIdempotent},
		{"ALTER TABLE t ADD b INT", e(1060), notIdempotent},
		{"DROP TABLE t", errors.New("bad connection"), notIdempotent},
	} {
		if got := idempotentDDLError(c.q, c.err); got != c.want {
			t.Errorf("%q, %v: %d, want %d", c.q, c.err, got, c.want)
		}
	}
	if got, ok := orReplace("/* c */ CREATE TABLE t (a INT)"); !ok || got != "/* c */ CREATE OR REPLACE TABLE t (a INT)" {
		t.Errorf("orReplace: %q %v", got, ok)
	}
	if !equalReplErrors(1062, 1586) || equalReplErrors(1062, 0) || !equalReplErrors(4092, 4092) || equalReplErrors(4092, 1051) {
		t.Error("equalReplErrors")
	}
}
