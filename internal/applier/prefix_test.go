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
