package applier

import "testing"

// TestPrefixable: a statement takes SET STATEMENT ... FOR in front of it
// when it is DML after plain comments; a versioned comment, which may
// hold anything, or another kind of statement does not.
func TestPrefixable(t *testing.T) {
	for q, want := range map[string]bool{
		"UPDATE t SET a = 1":                                      true,
		"  insert into t values (1)":                              true,
		"/* app=x */ DELETE FROM t WHERE id = 1":                  true,
		"# note\nREPLACE INTO t VALUES (1)":                       true,
		"-- note\nupdate t set a=2":                               true,
		"/*!40000 UPDATE t SET a = 1 */":                          false,
		"/*M!100000 INSERT INTO t VALUES (1) */":                  false,
		"SET STATEMENT max_statement_time=1 FOR UPDATE t SET a=1": false,
		"UPDATEX t": false,
		"INSERTED":  false,
		"CALL p()":  false,
		"WITH c AS (SELECT 1) UPDATE t SET a = 1": false,
		"/* unterminated UPDATE t":                false,
		"LOAD DATA INFILE 'f' INTO TABLE t":       false,
	} {
		if got := prefixable(q); got != want {
			t.Errorf("prefixable(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestStatementPrefix: the clock, the connection id and a forced
// insert_id go in front of the statement; an insert_id of 0 only when an
// earlier statement left another on the session.
func TestStatementPrefix(t *testing.T) {
	own := []assignment{{"@@session.timestamp", "1.5e+09"}, {"@@session.pseudo_thread_id", "7"}, {"@@session.insert_id", "0"}}
	if got, want := statementPrefix(own, ""), "SET STATEMENT timestamp=1.5e+09, pseudo_thread_id=7 FOR "; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := statementPrefix(own, "12"), "SET STATEMENT timestamp=1.5e+09, pseudo_thread_id=7, insert_id=0 FOR "; got != want {
		t.Errorf("with insert_id 12 on the session: got %q, want %q", got, want)
	}
	own[2].value = "41"
	if got, want := statementPrefix(own, "0"), "SET STATEMENT timestamp=1.5e+09, pseudo_thread_id=7, insert_id=41 FOR "; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := statementPrefix(nil, ""); got != "" {
		t.Errorf("nothing to set: got %q", got)
	}
}

// TestOnSession: the clock and the connection id go on the session only
// when they differ from what it holds; a forced insert_id always goes in
// front of its statement.
func TestOnSession(t *testing.T) {
	set := map[string]string{}
	own := []assignment{{"@@session.timestamp", "1.5e+09"}, {"@@session.insert_id", "0"}, {"@@session.pseudo_thread_id", "7"}}
	changed, prefix := onSession(own, set)
	if got, want := setStatement(changed), "SET @@session.timestamp = 1.5e+09, @@session.pseudo_thread_id = 7"; got != want {
		t.Errorf("first statement: got %q, want %q", got, want)
	}
	if len(prefix) != 1 || prefix[0].name != "@@session.insert_id" {
		t.Errorf("first statement: prefix %v, want the insert_id alone", prefix)
	}
	if changed, _ := onSession(own, set); len(changed) != 0 {
		t.Errorf("same clock and connection: got %v, want nothing to set", changed)
	}
	own[2].value = "8"
	if got, want := setStatement(first(onSession(own, set))), "SET @@session.pseudo_thread_id = 8"; got != want {
		t.Errorf("another connection: got %q, want %q", got, want)
	}
	if set["@@session.pseudo_thread_id"] != "8" || set["@@session.timestamp"] != "1.5e+09" {
		t.Errorf("the session's record: %v", set)
	}
}

// first is the first of two results.
func first[T, U any](a T, _ U) T { return a }
