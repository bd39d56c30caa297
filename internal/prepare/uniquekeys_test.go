package prepare

import "testing"

// TestUniqueKeysFromMixed: on a MIXED source, an INSERT into a table with
// another unique key (users' email) is keyed by its row and by the unique
// value it takes, folded by the column's collation: it waits for the row
// image that freed the value, and for nothing else.
func TestUniqueKeysFromMixed(t *testing.T) {
	got := preparedFromSource(t, "prepare-uniquekeys", nil,
		"SET SESSION binlog_format = MIXED",
		"CREATE DATABASE lv",
		"CREATE TABLE lv.users (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, email VARCHAR(100) NOT NULL, "+
			"name VARCHAR(40), UNIQUE KEY users_email_unique (email)) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
		"INSERT INTO lv.users (email, name) VALUES ('a@x.org', 'a')",      // 0-1-3: user 1
		"INSERT INTO lv.users (email, name) VALUES ('b@x.org', 'b')",      // 0-1-4: user 2
		"UPDATE lv.users SET email = CONCAT('old-', UUID()) WHERE id = 1", // 0-1-5: rows, frees a@x.org
		"INSERT INTO lv.users (email, name) VALUES ('A@x.org', 'c')",      // 0-1-6: user 3 takes it
		"UPDATE lv.users SET name = 'bb' WHERE id = 2",                    // 0-1-7
	)
	if r := byGTID(t, got, "0-1-5").Txn.Txn.Rows; len(r) != 1 {
		t.Fatalf("0-1-5: want one rows event (UUID() makes MIXED log rows), got %+v", r)
	}
	checkWaits(t, got, []waitCase{
		{"0-1-4", "0-1-3", false}, // another user, another email
		{"0-1-5", "0-1-3", true},  // user 1
		{"0-1-6", "0-1-5", true},  // a@x.org, as unicode_ci compares it
		{"0-1-6", "0-1-4", false},
		{"0-1-7", "0-1-4", true}, // user 2
		{"0-1-7", "0-1-6", false},
	})
}
