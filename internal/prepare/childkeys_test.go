package prepare

import "testing"

// TestChildKeysFromMixed: on a MIXED source, Laravel's inserts into a
// child table name only the attributes set, leaving a nullable foreign
// key out. Such a row references no parent row, so the INSERT is keyed by
// its own row alone and waits for no parent; one that names its parent
// waits for the last change of the parent's row, and a later change of
// either row waits for it. The parent's own INSERTs and DELETEs (no
// foreign key cascades, no other unique key) are keyed by their rows.
func TestChildKeysFromMixed(t *testing.T) {
	got := preparedFromSource(t, "prepare-childkeys", nil,
		"SET SESSION binlog_format = MIXED",
		"CREATE DATABASE lv",
		"CREATE TABLE lv.users (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40))",
		"CREATE TABLE lv.posts (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id BIGINT UNSIGNED NULL, "+
			"title VARCHAR(40), CONSTRAINT posts_user_id_foreign FOREIGN KEY (user_id) REFERENCES lv.users (id))",
		"INSERT INTO lv.users (name) VALUES ('a'), ('b')",       // 0-1-4: users 1 and 2
		"INSERT INTO lv.posts (title) VALUES ('x')",             // 0-1-5: post 1, no user
		"UPDATE lv.users SET name = UUID() WHERE id = 2",        // 0-1-6: rows
		"INSERT INTO lv.posts (title) VALUES ('v')",             // 0-1-7: post 2, no user
		"INSERT INTO lv.posts (user_id, title) VALUES (2, 'y')", // 0-1-8: post 3 of user 2
		"UPDATE lv.posts SET title = 'z' WHERE id = 1",          // 0-1-9
		"UPDATE lv.users SET name = 'c' WHERE id = 1",           // 0-1-10
		"INSERT INTO lv.posts (title, user_id) VALUES ('w', 1)", // 0-1-11: post 4 of user 1
		"INSERT INTO lv.users (name) VALUES ('d')",              // 0-1-12: user 3
		"DELETE FROM lv.users WHERE id = 3",                     // 0-1-13
	)
	if r := byGTID(t, got, "0-1-6").Txn.Txn.Rows; len(r) != 1 {
		t.Fatalf("0-1-6: want one rows event (UUID() makes MIXED log rows), got %+v", r)
	}
	checkWaits(t, got, []waitCase{
		{"0-1-5", "0-1-4", false}, // references no user
		{"0-1-7", "0-1-6", false}, // references no user
		{"0-1-7", "0-1-5", false}, // another post
		{"0-1-8", "0-1-6", true},  // user 2
		{"0-1-8", "0-1-7", false},
		{"0-1-9", "0-1-5", true}, // post 1
		{"0-1-9", "0-1-8", false},
		{"0-1-10", "0-1-9", false},
		{"0-1-10", "0-1-6", false},
		{"0-1-11", "0-1-10", true}, // user 1
		{"0-1-11", "0-1-9", false},
		{"0-1-12", "0-1-11", false}, // a parent's INSERT: user 3
		{"0-1-13", "0-1-12", true},
		{"0-1-13", "0-1-11", false},
	})
}
