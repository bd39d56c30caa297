package bench

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

// appLua is the app workload's sysbench script.
//
//go:embed app.lua
var appLua []byte

// appScript names app.lua among the workloads' scripts; sysbench gets the
// path it is written to (scriptPath).
const appScript = "app.lua"

// appSchema creates and seeds the app workload's tables in the sbtest
// database, as Laravel's migrations create them: BIGINT UNSIGNED
// AUTO_INCREMENT keys, a unique email, foreign keys without a cascade.
// app.lua's users and posts say how many rows it seeds.
var appSchema = []string{
	"USE sbtest", // seq_1_to_N is a table of the current database
	"CREATE TABLE sbtest.users (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255) NOT NULL, " +
		"email VARCHAR(255) NOT NULL, email_verified_at TIMESTAMP NULL, password VARCHAR(255) NOT NULL, " +
		"remember_token VARCHAR(100) NULL, created_at TIMESTAMP NULL, updated_at TIMESTAMP NULL, " +
		"UNIQUE KEY users_email_unique (email)) DEFAULT CHARSET utf8mb4 COLLATE utf8mb4_unicode_ci",
	"CREATE TABLE sbtest.posts (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id BIGINT UNSIGNED NULL, " +
		"title VARCHAR(255) NOT NULL, body TEXT NOT NULL, created_at TIMESTAMP NULL, updated_at TIMESTAMP NULL, " +
		"CONSTRAINT posts_user_id_foreign FOREIGN KEY (user_id) REFERENCES sbtest.users (id)) " +
		"DEFAULT CHARSET utf8mb4 COLLATE utf8mb4_unicode_ci",
	"CREATE TABLE sbtest.comments (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, post_id BIGINT UNSIGNED NOT NULL, " +
		"user_id BIGINT UNSIGNED NULL, body TEXT NOT NULL, created_at TIMESTAMP NULL, updated_at TIMESTAMP NULL, " +
		"CONSTRAINT comments_post_id_foreign FOREIGN KEY (post_id) REFERENCES sbtest.posts (id), " +
		"CONSTRAINT comments_user_id_foreign FOREIGN KEY (user_id) REFERENCES sbtest.users (id)) " +
		"DEFAULT CHARSET utf8mb4 COLLATE utf8mb4_unicode_ci",
	"INSERT INTO sbtest.users (name, email, password, created_at, updated_at) " +
		"SELECT CONCAT('Seed ', seq), CONCAT('seed', seq, '@example.org'), 'x', NOW(), NOW() FROM seq_1_to_10000",
	"INSERT INTO sbtest.posts (user_id, title, body, created_at, updated_at) " +
		"SELECT seq % 10000 + 1, CONCAT('Seed post ', seq), REPEAT('b', 120), NOW(), NOW() FROM seq_1_to_50000",
}

// appWarm reads the app workload's tables into the buffer pool (see warm).
var appWarm = []string{
	"SELECT SUM(LENGTH(email)) FROM sbtest.users FORCE INDEX (users_email_unique)",
	"SELECT SUM(CRC32(title)) FROM sbtest.posts",
	"SELECT SUM(user_id) FROM sbtest.posts FORCE INDEX (posts_user_id_foreign)",
	"SELECT COUNT(*) FROM sbtest.comments",
}

// usesApp reports whether ws holds the app workload.
func usesApp(ws []Workload) bool {
	for _, w := range ws {
		if w.Script == appScript {
			return true
		}
	}
	return false
}

// scriptPath is what sysbench is given for script: for the app workload,
// the path app.lua is written to in dir (the cluster's work directory,
// removed with the benchmark's), the name of one of sysbench's own
// scripts otherwise.
func scriptPath(dir, script string) (string, error) {
	if script != appScript {
		return script, nil
	}
	path := filepath.Join(dir, appScript)
	if err := os.WriteFile(path, appLua, 0o600); err != nil {
		return "", fmt.Errorf("writing the app workload's script: %w", err)
	}
	return path, nil
}
