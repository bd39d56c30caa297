package binlog

import "testing"

func TestClassifyStatement(t *testing.T) {
	for q, want := range map[string]StmtKind{
		"ALTER TABLE t ADD u INT":                                             StmtDDL,
		"/*!80013 ALTER TABLE t ADD UNIQUE KEY (u) */":                        StmtDDL,
		"/*M!100100 CREATE TABLE t (a INT) */":                                StmtDDL,
		"/* app */ /*!40101 DROP TABLE t */":                                  StmtDDL,
		"SET STATEMENT max_statement_time=10 FOR ALTER TABLE t ADD u INT":     StmtDDL,
		"SET STATEMENT sql_mode='a,b', foreign_key_checks=0 FOR DROP TABLE t": StmtDDL,
		"SET STATEMENT max_statement_time=1 FOR INSERT INTO t VALUES (1)":     StmtDML,
		"SET STATEMENT x='for ' FOR UPDATE t SET a = 1":                       StmtDML,
		"SELECT `d`.`f`(1)":                                                   StmtDML,
		"DO d.f()":                                                            StmtDML,
		"INSERT INTO t VALUES (1)":                                            StmtDML,
		"SET PASSWORD FOR u = 'x'":                                            StmtOther,
		"SET STATEMENT x=1":                                                   StmtOther,
		"SAVEPOINT a":                                                         StmtSavepoint,
		"/*!50003 SAVEPOINT a */":                                             StmtSavepoint,
	} {
		if got := ClassifyStatement(q); got != want {
			t.Errorf("%q: %d, want %d", q, got, want)
		}
	}
}
