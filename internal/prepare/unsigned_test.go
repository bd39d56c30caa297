package prepare

import "testing"

// TestUnsignedKeysFromMixed: on a MIXED source with MariaDB's default
// binlog_row_metadata (NO_LOG), a statement by an UNSIGNED primary key is
// keyed by its rows, and keys as the same rows logged as row images do,
// though those images decode the upper half of an INT UNSIGNED's range
// negative. So a statement UPDATE of row 4294967290 waits for the row
// image that changed it (UUID() makes MIXED log rows), and statements on
// other rows, or on a BIGINT UNSIGNED AUTO_INCREMENT table (Laravel's
// default key), do not.
func TestUnsignedKeysFromMixed(t *testing.T) {
	got := preparedFromSource(t, "prepare-unsigned", nil,
		"SET GLOBAL binlog_row_metadata = NO_LOG",
		"SET SESSION binlog_format = MIXED",
		"CREATE DATABASE us",
		"CREATE TABLE us.t (id INT UNSIGNED PRIMARY KEY, v VARCHAR(40))",
		"CREATE TABLE us.b (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO us.t (id, v) VALUES (4294967290, 'a'), (7, 'b')", // 0-1-4
		"UPDATE us.t SET v = UUID() WHERE id = 4294967290",            // 0-1-5: rows
		"UPDATE us.t SET v = 'c' WHERE id = 4294967290",               // 0-1-6
		"UPDATE us.t SET v = 'd' WHERE id = 7",                        // 0-1-7
		"INSERT INTO us.b (v) VALUES (1), (2)",                        // 0-1-8: rows 1 and 2
		"UPDATE us.b SET v = 3 WHERE id = 2",                          // 0-1-9
	)
	rowsTxn := byGTID(t, got, "0-1-5")
	if r := rowsTxn.Txn.Txn.Rows; len(r) != 1 || len(r[0].Images) != 2 || r[0].Images[0][0] != any(int32(-6)) {
		t.Fatalf("0-1-5: want one row image pair whose id decodes as int32(-6) (no signedness in the table map), got %+v", r)
	}
	checkWaits(t, got, []waitCase{
		{"0-1-5", "0-1-4", true}, // row 4294967290
		{"0-1-6", "0-1-5", true}, // the same row, as a literal
		{"0-1-7", "0-1-5", false},
		{"0-1-7", "0-1-6", false},
		{"0-1-7", "0-1-4", true}, // row 7
		{"0-1-8", "0-1-7", false},
		{"0-1-9", "0-1-8", true}, // row 2, generated
		{"0-1-9", "0-1-7", false},
	})
}
