package clone

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/verify"
)

// awkward are tables that do not chunk by an integer primary key, and
// values that do not travel as plain text, each with what must come across.
var awkward = []string{
	"CREATE DATABASE odd",
	// No key at all: one piece; duplicate rows, NULL and '' kept apart.
	"CREATE TABLE odd.nokey (a INT, b VARCHAR(10))",
	"INSERT INTO odd.nokey VALUES (1, 'x'), (1, 'x'), (NULL, ''), (2, NULL), (2, '')",
	// A unique key only, of a string in a case-insensitive collation:
	// chunked by it, in the server's order of it.
	"CREATE TABLE odd.ukonly (code VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, n INT, UNIQUE KEY code (code), KEY n (n))",
	"INSERT INTO odd.ukonly SELECT CONCAT(CHAR(65 + seq % 26), LPAD(seq, 5, '0'), IF(seq % 3 = 0, 'ä', 'b')), seq FROM odd.seq_1_to_350",
	// Partitioned, by a key whose first part is not the partitioning.
	"CREATE TABLE odd.parts (id INT NOT NULL, region INT NOT NULL, v VARCHAR(10), PRIMARY KEY (id, region)) PARTITION BY HASH (region) PARTITIONS 4",
	"INSERT INTO odd.parts SELECT seq, seq % 7, CONCAT('r', seq) FROM odd.seq_1_to_420",
	// Generated columns, virtual and stored, one indexed; an invisible one.
	"CREATE TABLE odd.gen (id INT PRIMARY KEY, a INT, b INT AS (a * 2) VIRTUAL, c VARCHAR(20) AS (CONCAT('c', a)) STORED, h INT INVISIBLE DEFAULT 7, KEY c (c))",
	"INSERT INTO odd.gen (id, a, h) SELECT seq, seq * 3, seq FROM odd.seq_1_to_250",
	// Values: every kind of column, and bytes that need escaping.
	"CREATE TABLE odd.vals (id INT PRIMARY KEY, f FLOAT, d DOUBLE, m DECIMAL(30, 10), bt BIT(10), e ENUM('a', 'b', 'c'), s SET('x', 'y', 'z'), " +
		"dt DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME(3), y YEAR, dz DATE, l1 VARCHAR(20) CHARACTER SET latin1, u VARCHAR(20) CHARACTER SET utf8mb4, " +
		"bin VARBINARY(20), j JSON, g POINT, ip INET6, big BIGINT UNSIGNED)",
	"INSERT INTO odd.vals VALUES (1, 1.2345678, 0.1, 12345678901234567890.0123456789, b'1010101010', 'b', 'x,z', '2024-02-29 12:34:56.789012', " +
		"'2024-03-31 01:30:00.5', '-838:59:58.999', 2155, '0000-00-00', _latin1 X'E9E8274E5C', 'h\\'e\\\\y \U0001F600', X'00270A5C0D1A22FF', " +
		"'{\"k\": [1, \"é\"]}', POINT(1.5, -2.25), 'abcd:ef01::23:45', 18446744073709551615)",
	"INSERT INTO odd.vals (id) VALUES (2)",
	"INSERT INTO odd.vals (id, f, u, bin) VALUES (3, -0.0000001234, '', '')",
	// Rows larger than the default max_allowed_packet of 16 MiB.
	"CREATE TABLE odd.blobs (id INT PRIMARY KEY, b LONGBLOB, t LONGTEXT)",
	"INSERT INTO odd.blobs VALUES (1, REPEAT(X'00FF5C27', 4500000), REPEAT('é', 10)), (2, 'small', NULL), (3, REPEAT('z', 17000000), REPEAT('ü', 100))",
	// System-versioned, with history.
	"CREATE TABLE odd.hist (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING",
	"INSERT INTO odd.hist VALUES (1, 1), (2, 1)",
	"UPDATE odd.hist SET v = 2 WHERE id = 1",
	"UPDATE odd.hist SET v = 3 WHERE id = 1",
	"DELETE FROM odd.hist WHERE id = 2",
	// A sequence, advanced.
	"CREATE SEQUENCE odd.seq1 START WITH 100 INCREMENT BY 5",
	"SELECT NEXTVAL(odd.seq1)",
	// Objects: a trigger (not fired by the copy), a view on a view, a
	// function, a procedure, an event.
	"CREATE TABLE odd.audit (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))",
	"CREATE TRIGGER odd.gen_ins AFTER INSERT ON odd.gen FOR EACH ROW INSERT INTO odd.audit (what) VALUES (CONCAT('gen ', NEW.id))",
	"CREATE FUNCTION odd.twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
	"CREATE VIEW odd.v1 AS SELECT id, odd.twice(a) AS a2 FROM odd.gen",
	"CREATE VIEW odd.v2 AS SELECT COUNT(*) AS n FROM odd.v1",
	"CREATE PROCEDURE odd.p() SELECT 1",
	"CREATE EVENT odd.ev ON SCHEDULE EVERY 1 DAY DO DELETE FROM odd.audit WHERE id < 0",
}

// TestCloneAwkwardTables clones tables without a primary key, with a
// unique key only, partitioned, with generated and invisible columns,
// with rows larger than 16 MiB, system-versioned with history, and
// values of every type, with their triggers, views, routines and events
// and a sequence; verify finds the target equal, the history is there,
// the objects are, and replication goes on from the clone's position. The
// rows go by LOAD DATA LOCAL, and by INSERT to a target without it.
func TestCloneAwkwardTables(t *testing.T) {
	t.Run("load", func(t *testing.T) { cloneAwkward(t, nil) })
	t.Run("insert", func(t *testing.T) { cloneAwkward(t, []string{"--local-infile=0"}) })
}

func cloneAwkward(t *testing.T, targetArgs []string) {
	ctx := context.Background()
	p := newPair(t, sandbox.Options{}, targetArgs...)
	exec(t, p.sdb, awkward...)
	cfg := p.config(t)
	cfg.ChunkRows = 40
	res, err := New(cfg).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.equal(t, verify.Options{})
	sameRows(t, p, "SELECT id, v, ROW_START, ROW_END FROM odd.hist FOR SYSTEM_TIME ALL ORDER BY id, ROW_END")
	sameRows(t, p, "SELECT COUNT(*) FROM odd.audit") // the copy fired no trigger
	sameRows(t, p, "SELECT * FROM odd.v2")
	// As on a native replica, the next value is the first the source
	// has not cached.
	sameRows(t, p, "SELECT next_not_cached_value, increment, cycle_count FROM odd.seq1")
	var status string
	if err := p.tdb.QueryRow("SELECT STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = 'odd' AND EVENT_NAME = 'ev'").Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != "SLAVESIDE_DISABLED" {
		t.Errorf("event odd.ev on the target: %s, want SLAVESIDE_DISABLED (a replica does not run the source's events)", status)
	}
	// Replication starts at the clone's position: what the source writes
	// after the clone comes, and the trigger fires on the target only
	// for statements (rows come as rows).
	exec(t, p.sdb, "INSERT INTO odd.gen (id, a) VALUES (1000, 1)", "UPDATE odd.nokey SET b = 'y' WHERE a = 2 AND b IS NULL",
		"UPDATE odd.hist SET v = 4 WHERE id = 1", "UPDATE odd.blobs SET t = 'changed' WHERE id = 3", "DELETE FROM odd.ukonly WHERE n < 10")
	rcfg := cfg.Stream
	if err := replicate.New(rcfg).Run(ctx); err != nil {
		t.Fatal(err)
	}
	p.equal(t, verify.Options{})
	sameRows(t, p, "SELECT id, v, ROW_START, ROW_END FROM odd.hist FOR SYSTEM_TIME ALL ORDER BY id, ROW_END")
	sameRows(t, p, "SELECT COUNT(*) FROM odd.audit")
	t.Logf("cloned at %s", res.Position)
}

// sameRows fails t unless q reads the same rows on both servers.
func sameRows(t *testing.T, p pair, q string) {
	t.Helper()
	a, b := rowsText(t, p.sdb, q), rowsText(t, p.tdb, q)
	if a != b {
		t.Errorf("%s:\nsource:\n%s\ntarget:\n%s", q, a, b)
	}
}

// rowsText reads q's rows as text.
func rowsText(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out strings.Builder
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			fmt.Fprintf(&out, "%q ", v.String)
		}
		out.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
