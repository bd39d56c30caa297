package schema

import "testing"

func TestReplicaEvent(t *testing.T) {
	for q, want := range map[string]string{
		"CREATE EVENT ev ON SCHEDULE EVERY 1 SECOND DO INSERT INTO t VALUES (1)":                                "CREATE EVENT ev ON SCHEDULE EVERY 1 SECOND DISABLE ON SLAVE DO INSERT INTO t VALUES (1)",
		"CREATE DEFINER=`root`@`localhost` EVENT ev ON SCHEDULE EVERY 1 SECOND STARTS NOW() ENABLE DO SELECT 1": "CREATE DEFINER=`root`@`localhost` EVENT ev ON SCHEDULE EVERY 1 SECOND STARTS NOW() DISABLE ON SLAVE DO SELECT 1",
		"create or replace event `e v` on schedule at now() + interval 1 hour comment 'x' do begin do 1; end":   "create or replace event `e v` on schedule at now() + interval 1 hour DISABLE ON SLAVE comment 'x' do begin do 1; end",
		"CREATE EVENT ev ON SCHEDULE EVERY 1 DAY DISABLE DO DELETE FROM t":                                      "CREATE EVENT ev ON SCHEDULE EVERY 1 DAY DISABLE DO DELETE FROM t",
		"ALTER EVENT ev ENABLE": "ALTER EVENT ev DISABLE ON SLAVE",
		"ALTER EVENT ev ON SCHEDULE EVERY 2 SECOND DO SELECT 'ENABLE'":                             "ALTER EVENT ev ON SCHEDULE EVERY 2 SECOND DO SELECT 'ENABLE'",
		"/* c */ CREATE EVENT ev ON SCHEDULE EVERY 1 SECOND DO INSERT INTO t VALUES ('DO ENABLE')": "CREATE EVENT ev ON SCHEDULE EVERY 1 SECOND DISABLE ON SLAVE DO INSERT INTO t VALUES ('DO ENABLE')",
	} {
		got, ok := ReplicaEvent(q)
		if !ok || got != want {
			t.Errorf("ReplicaEvent(%q) = %q, %t\nwant %q", q, got, ok, want)
		}
	}
	for _, q := range []string{"CREATE TABLE event (id INT)", "CREATE DEFINER=root@localhost PROCEDURE p() SELECT 1", "DROP EVENT ev", "ALTER TABLE t ENABLE KEYS"} {
		if got, ok := ReplicaEvent(q); ok {
			t.Errorf("ReplicaEvent(%q) = %q, want not an event", q, got)
		}
	}
}
