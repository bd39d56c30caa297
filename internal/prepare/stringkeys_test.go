package prepare

import "testing"

// TestStringKeysFromMixed: on a MIXED source, a statement by a VARCHAR
// primary key (a session id, a UUID as text) is keyed by its rows, folded
// by the column's collation as the same rows logged as row images are: an
// UPDATE of 'SESS-A' waits for the row image that changed 'Sess-A' under
// utf8mb4_general_ci (UUID() makes MIXED log rows), and statements on
// other rows do not.
func TestStringKeysFromMixed(t *testing.T) {
	got := preparedFromSource(t, "prepare-strings", nil,
		"SET SESSION binlog_format = MIXED",
		"CREATE DATABASE ss",
		"CREATE TABLE ss.t (id VARCHAR(40) PRIMARY KEY, v VARCHAR(40)) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
		"INSERT INTO ss.t (id, v) VALUES ('Sess-A', 'a'), ('sess-b', 'b')",                // 0-1-3
		"UPDATE ss.t SET v = UUID() WHERE id = 'sess-a'",                                  // 0-1-4: rows
		"UPDATE ss.t SET v = 'c' WHERE id = 'SESS-A'",                                     // 0-1-5
		"UPDATE ss.t SET v = 'd' WHERE id = 'sess-b'",                                     // 0-1-6
		"INSERT INTO ss.t (id, v) VALUES ('sess-c', 'x') ON DUPLICATE KEY UPDATE v = 'y'", // 0-1-7
		"DELETE FROM ss.t WHERE id = 'sess-c'",                                            // 0-1-8
	)
	if r := byGTID(t, got, "0-1-4").Txn.Txn.Rows; len(r) != 1 {
		t.Fatalf("0-1-4: want its rows logged as row images, got %+v", r)
	}
	checkWaits(t, got, []waitCase{
		{"0-1-4", "0-1-3", true}, // 'Sess-A'
		{"0-1-5", "0-1-4", true}, // the same row, in other case
		{"0-1-6", "0-1-3", true}, // 'sess-b'
		{"0-1-6", "0-1-4", false},
		{"0-1-6", "0-1-5", false},
		{"0-1-7", "0-1-6", false},
		{"0-1-8", "0-1-7", true}, // 'sess-c'
		{"0-1-8", "0-1-6", false},
	})
}
