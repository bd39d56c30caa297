package applier

import (
	"errors"
	"reflect"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
)

// TestStatementSession: the SET statement carries what the query event
// says, character_set_client by name (a collation ID that is not its
// character set's default is refused as a character set), the clock half
// a microsecond up (the server truncates), and the target's own time zone
// when the statement used none.
func TestStatementSession(t *testing.T) {
	st := &binlog.Statement{When: 981194400, Session: binlog.QuerySession{
		Client: 31, Connection: 31, Server: 8, HasSQLMode: true, SQLMode: 1<<7 | 1<<22,
		HasFlags2: true, Flags2: binlog.OptionNoForeignKeyChecks, AutoIncrementIncrement: 3, AutoIncrementOffset: 2,
		LCTimeNames: 4, CharsetDatabase: 31, Microseconds: 123456,
	}}
	q, args := statementSession(st, true, true)
	want := "SET @@session.timestamp = ?, @@session.time_zone = @@global.time_zone, @@session.lc_time_names = ?, " +
		"@@session.auto_increment_increment = ?, @@session.auto_increment_offset = ?, " +
		"@@session.foreign_key_checks = ?, @@session.unique_checks = ?, @@session.sql_auto_is_null = ?, " +
		"@@session.character_set_client = ?, @@session.collation_connection = ?, @@session.collation_server = ?, " +
		"@@session.collation_database = ?, @@session.sql_mode = ?"
	if q != want {
		t.Errorf("got  %s\nwant %s", q, want)
	}
	wantArgs := []any{981194400.1234565, 4, 3, 2, 0, 1, 0, "latin1", 31, 8, 31, uint64(1 << 22)}
	if !reflect.DeepEqual(args, wantArgs) {
		t.Errorf("args %v, want %v", args, wantArgs)
	}
	st.Session.TimeZone = "+03:00"
	q, args = statementSession(st, false, true)
	if want := "SET @@session.timestamp = ?, @@session.time_zone = ?, @@session.lc_time_names = ?, " +
		"@@session.auto_increment_increment = ?, @@session.auto_increment_offset = ?, " +
		"@@session.foreign_key_checks = ?, @@session.unique_checks = ?, @@session.sql_auto_is_null = ?"; q != want || args[1] != "+03:00" {
		t.Errorf("another flavor: %s %v", q, args)
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
