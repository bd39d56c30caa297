package binlog

import "testing"

func TestParseQuerySession(t *testing.T) {
	status := []byte{
		qFlags2, 0, 0, 0, 0,
		qSQLMode, 1, 2, 3, 4, 5, 6, 7, 8,
		qCatalogNZ, 3, 's', 't', 'd',
		qCharset, 33, 0, 224, 0, 255, 0,
		qTimeZone, 3, 'U', 'T', 'C',
		qInvoker, 4, 'r', 'o', 'o', 't', 1, '%',
		qUpdatedDBNames, 2, 'a', 0, 'b', 'b', 0,
		qDefaultUTF8MB4, 45, 0,
		200, 1, 2, 3, // unknown: reading stops here
		qCharset, 8, 0, 8, 0, 8, 0,
	}
	mode := uint64(0x0807060504030201)
	want := QuerySession{Client: 33, Connection: 224, Server: 255, DefaultUTF8MB4: 45, SQLMode: mode, HasSQLMode: true,
		HasFlags2: true, TimeZone: "UTC", InvokerUser: "root", InvokerHost: "%"}
	if got := parseQuerySession(status); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := parseQuerySession(status[:20]); got != (QuerySession{SQLMode: mode, HasSQLMode: true, HasFlags2: true}) {
		t.Errorf("cut before the charsets: %+v", got)
	}
	if got := parseQuerySession([]byte{qCharset, 1, 2}); got != (QuerySession{}) {
		t.Errorf("a short value: %+v", got)
	}
	// The settings a replica runs a statement with (MariaDB 10.11 writes
	// these for SET time_zone='+03:00', lc_time_names='de_DE',
	// auto_increment_increment=3, foreign_key_checks=0 and a clock with a
	// fraction).
	all := []byte{
		qFlags2, 0, 0, 0, 4, // OPTION_NO_FOREIGN_KEY_CHECKS
		qAutoIncrement, 3, 0, 2, 0,
		qTimeZone, 6, '+', '0', '3', ':', '0', '0',
		qLCTimeNames, 4, 0,
		qCharsetDatabase, 31, 0,
		qHRNow, 0x40, 0xe2, 0x01, // 123456
		qExplicitDefaultsTS, 0,
	}
	want = QuerySession{Flags2: OptionNoForeignKeyChecks, HasFlags2: true, AutoIncrementIncrement: 3, AutoIncrementOffset: 2,
		TimeZone: "+03:00", LCTimeNames: 4, CharsetDatabase: 31, Microseconds: 123456, ExplicitDefaultsTS: 1}
	if got := parseQuerySession(all); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestQuerySessionFromMySQL reads the statements of a file MySQL 9.0.1
// wrote: collation_server utf8mb4_0900_ai_ci (255), client latin1 (8).
func TestQuerySessionFromMySQL(t *testing.T) {
	res := readAll(sharedPath("blackbeam__rust_mysql_common/json-opaque.binlog"))
	if res.err != nil || len(res.txns) == 0 {
		t.Fatal(res.err)
	}
	want := QuerySession{Client: 8, Connection: 8, Server: 255, DefaultUTF8MB4: 255, SQLMode: 1168113696, HasSQLMode: true, HasFlags2: true}
	for _, txn := range res.txns {
		for _, st := range txn.Statements {
			if st.Session != want {
				t.Errorf("%q: %+v, want %+v", st.Query, st.Session, want)
			}
		}
	}
}
