package deptrack

import (
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// TestStatementKeys: a statement whose text fixes the rows it writes, on
// a table whose rows nothing else ties, gets the keys a row-format change
// of those rows gets; any other is a barrier.
func TestStatementKeys(t *testing.T) {
	cat, _, err := schema.Parse(strings.NewReader(`CREATE DATABASE d; USE d;
CREATE TABLE s (id INT PRIMARY KEY, k INT, c VARCHAR(10), KEY k (k));
CREATE TABLE s2 (a INT, b BIGINT, v INT, PRIMARY KEY (a, b));
CREATE TABLE uq (id INT PRIMARY KEY, u INT, UNIQUE KEY u (u));
CREATE TABLE un (id INT PRIMARY KEY, u INT NOT NULL, UNIQUE KEY u (u));
CREATE TABLE us (id INT UNSIGNED PRIMARY KEY, n INT);
CREATE TABLE ub (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT);
CREATE TABLE sm (id SMALLINT PRIMARY KEY, n INT);
CREATE TABLE sk (id VARCHAR(40) PRIMARY KEY, n INT) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
CREATE TABLE sb (id VARBINARY(16) PRIMARY KEY, n INT);
CREATE TABLE sx (id BINARY(16) PRIMARY KEY, n INT);
CREATE TABLE su (id VARCHAR(40) PRIMARY KEY, n INT) CHARACTER SET ucs2;
CREATE TABLE sp (id VARCHAR(40) PRIMARY KEY) CHARACTER SET utf8mb4;
CREATE TABLE sc (id INT PRIMARY KEY, sid VARCHAR(40), FOREIGN KEY (sid) REFERENCES sp (id)) CHARACTER SET utf8mb4;
CREATE TABLE tr (id INT PRIMARY KEY);
CREATE TRIGGER tr_ai AFTER INSERT ON tr FOR EACH ROW SET @x = 1;
CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(50), n INT, UNIQUE KEY email (email));
CREATE TABLE ug (id INT PRIMARY KEY, n INT, g INT AS (n * 2) PERSISTENT, UNIQUE KEY g (g));
CREATE TABLE pa (id INT PRIMARY KEY, name VARCHAR(10));
CREATE TABLE ch (id INT PRIMARY KEY, pid INT, n INT, FOREIGN KEY (pid) REFERENCES pa (id) ON DELETE CASCADE);
CREATE TABLE cn (id INT PRIMARY KEY, pid INT, n INT, FOREIGN KEY (pid) REFERENCES pa (id));
CREATE TABLE po (id INT PRIMARY KEY, n INT);
CREATE TABLE li (id INT PRIMARY KEY, oid INT, FOREIGN KEY (oid) REFERENCES po (id));
CREATE TABLE cd (id INT PRIMARY KEY, pid INT DEFAULT 1, qid INT NOT NULL, n INT,
  FOREIGN KEY (pid) REFERENCES pa (id), FOREIGN KEY (qid) REFERENCES pa (id));
CREATE TABLE pc (id INT PRIMARY KEY, code INT, name VARCHAR(10), KEY code (code));
CREATE TABLE ch2 (id INT PRIMARY KEY, code INT, FOREIGN KEY (code) REFERENCES pc (code));
`), "test.sql")
	if err != nil {
		t.Fatal(err)
	}
	x := NewExtractor(cat)
	stmtIn := func(mode uint64, qs ...string) *Writeset {
		txn := &binlog.Txn{StatementDML: true}
		for _, q := range qs {
			txn.Statements = append(txn.Statements, binlog.Statement{Schema: "d", Query: q, Kind: binlog.StmtDML,
				Session: binlog.QuerySession{SQLMode: mode, HasSQLMode: mode != 0}})
		}
		ws := &Writeset{}
		x.Extract(txn, ws)
		return ws
	}
	stmt := func(qs ...string) *Writeset { return stmtIn(0, qs...) }
	const strictMode = binlog.ModeStrictTransTables
	row5 := extract(x, rows(cat, "s", binlog.Insert, []any{int32(5), int32(1), "a"}))
	for _, q := range []string{"UPDATE s SET k = k + 1 WHERE id = 5", "DELETE FROM s WHERE id IN (4, 5)",
		"INSERT INTO s (id, k, c) VALUES (5, 1, 'x') ON DUPLICATE KEY UPDATE k = k + 1", "REPLACE INTO d.s (c, id) VALUES ('y', 5)"} {
		ws := stmt(q)
		if ws.Barrier != CauseNone || !intersects(ws.Keys, row5.Keys) {
			t.Errorf("%s: barrier %v, keys %v; want the key of row 5 (%v)", q, ws.Barrier, ws.Keys, row5.Keys)
		}
	}
	if ws := stmt("UPDATE s SET k = 2 WHERE id = 6"); ws.Barrier != CauseNone || intersects(ws.Keys, row5.Keys) {
		t.Errorf("row 6: barrier %v, keys %v", ws.Barrier, ws.Keys)
	}
	// An UPDATE that keeps the row's other unique keys: the row's key.
	user5 := extract(x, rows(cat, "users", binlog.Insert, []any{int32(5), "a@b", int32(1)}))
	if ws := stmt("UPDATE users SET n = n + 1 WHERE id = 5"); ws.Barrier != CauseNone || !intersects(ws.Keys, user5.Keys) {
		t.Errorf("UPDATE of a column outside the unique keys: barrier %v, keys %v; want row 5's (%v)", ws.Barrier, ws.Keys, user5.Keys)
	}
	// An INSERT that gives the other unique keys' values takes them: their
	// keys, which a row image of another row holding them has (a DELETE
	// that frees one, say); one that leaves them NULL takes none.
	user7 := extract(x, rows(cat, "users", binlog.Insert, []any{int32(7), "c@d", int32(1)}))
	if ws := stmtIn(strictMode, "INSERT INTO users (id, email, n) VALUES (6, 'a@b', 1)"); ws.Barrier != CauseNone || len(ws.Keys) != 2 ||
		!intersects(ws.Keys, user5.Keys) || intersects(ws.Keys, user7.Keys) {
		t.Errorf("INSERT of a row with another unique key: barrier %v, keys %v; want its own and email a@b's (of %v)", ws.Barrier, ws.Keys, user5.Keys)
	}
	uq2 := extract(x, rows(cat, "uq", binlog.Delete, []any{int32(3), int32(2)}))
	if ws := stmt("INSERT INTO uq (id, u) VALUES (1, 2)"); ws.Barrier != CauseNone || len(ws.Keys) != 2 || !intersects(ws.Keys, uq2.Keys) {
		t.Errorf("INSERT taking u = 2: barrier %v, keys %v; want its own and u = 2's (of %v)", ws.Barrier, ws.Keys, uq2.Keys)
	}
	if ws := stmt("INSERT INTO users (id, n) VALUES (6, 1), (8, 2)"); ws.Barrier != CauseNone || len(ws.Keys) != 2 ||
		intersects(ws.Keys, user5.Keys) || intersects(ws.Keys, user7.Keys) {
		t.Errorf("INSERT leaving another unique key NULL: barrier %v, keys %v; want the rows' own", ws.Barrier, ws.Keys)
	}
	// An UPDATE of a parent that keeps what its children reference.
	parent1 := extract(x, rows(cat, "pa", binlog.Insert, []any{int32(1), "a"}))
	child := extract(x, rows(cat, "ch", binlog.Insert, []any{int32(9), int32(1), int32(0)}))
	if ws := stmt("UPDATE pa SET name = 'b' WHERE id = 1"); ws.Barrier != CauseNone || !intersects(ws.Keys, parent1.Keys) {
		t.Errorf("UPDATE of a parent's unreferenced column: barrier %v, keys %v; want row 1's (%v)", ws.Barrier, ws.Keys, parent1.Keys)
	} else if !intersects(ws.Keys, child.Keys) {
		t.Errorf("UPDATE of a parent: keys %v, none of them the key its child row references (%v)", ws.Keys, child.Keys)
	}
	// UNSIGNED keys: a literal keys as the row does, whether the row image
	// came with signedness (uint32) or without it (the upper half of the
	// range negative).
	for _, c := range []struct {
		q, table string
		image    []any
	}{
		{"UPDATE us SET n = 1 WHERE id = 7", "us", []any{uint32(7), int32(0)}},
		{"UPDATE us SET n = 1 WHERE id = 7", "us", []any{int32(7), int32(0)}},
		{"DELETE FROM us WHERE id = 4294967294", "us", []any{int32(-2), int32(0)}},
		{"DELETE FROM us WHERE id = 4294967294", "us", []any{uint32(4294967294), int32(0)}},
		{"INSERT INTO ub (id, n) VALUES (9, 1)", "ub", []any{int64(9), int32(1)}},
		{"INSERT INTO ub (id, n) VALUES (9, 1)", "ub", []any{uint64(9), int32(1)}},
	} {
		row := extract(x, rows(cat, c.table, binlog.Insert, c.image))
		if ws := stmt(c.q); ws.Barrier != CauseNone || !intersects(ws.Keys, row.Keys) {
			t.Errorf("%s: barrier %v, keys %v; want the key of the row %T(%v) (%v)", c.q, ws.Barrier, ws.Keys, c.image[0], c.image[0], row.Keys)
		}
	}
	// A child whose parent's foreign key does not cascade: an UPDATE that
	// keeps its references gets its row's key, an INSERT its row's and
	// the key of the parent row it names.
	childRow := extract(x, rows(cat, "cn", binlog.Insert, []any{int32(3), int32(1), int32(0)}))
	if ws := stmt("UPDATE cn SET n = n + 1 WHERE id = 3"); ws.Barrier != CauseNone || !intersects(ws.Keys, childRow.Keys) || intersects(ws.Keys, parent1.Keys) {
		t.Errorf("UPDATE of a child row that keeps its reference: barrier %v, keys %v; want the row's (%v), not its parent's", ws.Barrier, ws.Keys, childRow.Keys)
	}
	if ws := stmt("INSERT INTO cn (id, pid, n) VALUES (3, 1, 0)"); ws.Barrier != CauseNone || !intersects(ws.Keys, childRow.Keys) || !intersects(ws.Keys, parent1.Keys) {
		t.Errorf("INSERT of a child row: barrier %v, keys %v; want the row's (%v) and its parent's (%v)", ws.Barrier, ws.Keys, childRow.Keys, parent1.Keys)
	}
	if ws := stmt("INSERT INTO cn (id, pid, n) VALUES (4, NULL, 0)"); ws.Barrier != CauseNone || len(ws.Keys) != 1 || intersects(ws.Keys, parent1.Keys) {
		t.Errorf("INSERT of a child row that references nothing: barrier %v, keys %v; want its own key alone", ws.Barrier, ws.Keys)
	}
	// A parent whose children reference its primary key: an INSERT names
	// the row a child's reference to it carries the key of; so does a
	// DELETE or REPLACE where no child's foreign key cascades.
	if ws := stmt("INSERT INTO pa (id, name) VALUES (2, 'c')"); ws.Barrier != CauseNone || len(ws.Keys) != 1 {
		t.Errorf("INSERT of a parent row: barrier %v, keys %v; want the row's key", ws.Barrier, ws.Keys)
	} else if child2 := extract(x, rows(cat, "cn", binlog.Insert, []any{int32(8), int32(2), int32(0)})); !intersects(ws.Keys, child2.Keys) {
		t.Errorf("INSERT of a parent row: keys %v, not the key its child row references (%v)", ws.Keys, child2.Keys)
	}
	if ws := stmt("INSERT INTO pa (id, name) VALUES (2, 'c')", "UPDATE pa SET name = 'd' WHERE id = 2"); len(ws.Statements) != 1 ||
		ws.Statements[0].Index != 1 || ws.Statements[0].Column != "id" {
		t.Errorf("a parent's INSERT and UPDATE: mergeable %+v; want the UPDATE alone, by id", ws.Statements)
	}
	order := extract(x, rows(cat, "po", binlog.Insert, []any{int32(4), int32(0)}))
	line := extract(x, rows(cat, "li", binlog.Insert, []any{int32(1), int32(4)}))
	for _, q := range []string{"DELETE FROM po WHERE id = 4", "REPLACE INTO po (id, n) VALUES (4, 1)", "INSERT INTO po (id, n) VALUES (4, 1)"} {
		if ws := stmt(q); ws.Barrier != CauseNone || !intersects(ws.Keys, order.Keys) || !intersects(ws.Keys, line.Keys) {
			t.Errorf("%s (children RESTRICT): barrier %v, keys %v; want the row's (%v), which its child's change carries (%v)", q, ws.Barrier, ws.Keys, order.Keys, line.Keys)
		}
	}
	if ws := stmt("INSERT INTO cn (id, n) VALUES (4, 0)"); ws.Barrier != CauseNone || len(ws.Keys) != 1 || intersects(ws.Keys, parent1.Keys) {
		t.Errorf("INSERT of a child row that leaves its reference out (NULL): barrier %v, keys %v; want its own key alone", ws.Barrier, ws.Keys)
	}
	// String keys: a plain string keys as the row's value does, folded by
	// the column's collation, in a session that reads strings as the
	// parser does (and for an INSERT a strict one, which cuts nothing).
	abc := extract(x, rows(cat, "sk", binlog.Insert, []any{"AbC", int32(0)}))
	if ws := stmtIn(binlog.ModeStrictAllTables, "INSERT INTO sk (id, n) VALUES ('x', 1), ('abc', 2)"); ws.Barrier != CauseNone || !intersects(ws.Keys, abc.Keys) {
		t.Errorf("INSERT of two rows under STRICT_ALL_TABLES: barrier %v, keys %v; want row 'AbC''s (%v)", ws.Barrier, ws.Keys, abc.Keys)
	}
	for _, q := range []string{"UPDATE sk SET n = 1 WHERE id = 'abc'", "DELETE FROM sk WHERE id IN ('x', 'ABC')",
		`UPDATE sk SET n = 2 WHERE id = "abc"`, "INSERT INTO sk (id, n) VALUES ('abc', 1) ON DUPLICATE KEY UPDATE n = n + 1"} {
		if ws := stmtIn(strictMode, q); ws.Barrier != CauseNone || !intersects(ws.Keys, abc.Keys) {
			t.Errorf("%s: barrier %v, keys %v; want the key of row 'AbC' (%v)", q, ws.Barrier, ws.Keys, abc.Keys)
		}
	}
	bin := extract(x, rows(cat, "sb", binlog.Insert, []any{[]byte("k-1"), int32(0)}))
	if ws := stmtIn(strictMode, "UPDATE sb SET n = 1 WHERE id = 'k-1'"); ws.Barrier != CauseNone || !intersects(ws.Keys, bin.Keys) {
		t.Errorf("VARBINARY key: barrier %v, keys %v; want %v", ws.Barrier, ws.Keys, bin.Keys)
	}
	if ws := stmtIn(strictMode, "UPDATE sk SET n = 1 WHERE id = 'abd'"); ws.Barrier != CauseNone || intersects(ws.Keys, abc.Keys) {
		t.Errorf("another string key: barrier %v, keys %v", ws.Barrier, ws.Keys)
	}
	parentABC := extract(x, rows(cat, "sp", binlog.Insert, []any{"ABC"}))
	if ws := stmtIn(strictMode, "INSERT INTO sc (id, sid) VALUES (1, 'abc')"); ws.Barrier != CauseNone || !intersects(ws.Keys, parentABC.Keys) {
		t.Errorf("a child row naming its parent by a string: barrier %v, keys %v; want the parent's (%v)", ws.Barrier, ws.Keys, parentABC.Keys)
	}
	for _, c := range []struct {
		mode uint64
		q    string
	}{
		{0, "UPDATE sk SET n = 1 WHERE id = 'abc'"},                                        // sql_mode unknown
		{strictMode | binlog.ModeANSIQuotes, `UPDATE sk SET n = 1 WHERE id = "abc"`},       // a column named abc
		{strictMode | binlog.ModeNoBackslashEscapes, "UPDATE sk SET n = 1 WHERE id = 'a'"}, // read otherwise
		{binlog.ModeNoAutoValueOnZero, "INSERT INTO sk (id, n) VALUES ('abc', 1)"},         // not strict: may be cut
		{binlog.ModeNoAutoValueOnZero, "INSERT INTO sc (id, sid) VALUES (2, 'abc')"},
		{strictMode, "INSERT INTO sk (id, n) VALUES ('abc', 1), ('abd', 2)"}, // a MyISAM table's second row is cut
		{strictMode, "UPDATE sk SET n = 1 WHERE id = 'a\\nb'"},               // not plain
		{strictMode, "UPDATE sk SET n = 1 WHERE id = 'abc '"},
		{strictMode, "UPDATE sk SET n = 1 WHERE id = 5"},   // compared as numbers
		{strictMode, "UPDATE s SET k = 1 WHERE id = '5'"},  // likewise
		{strictMode, "UPDATE sx SET n = 1 WHERE id = 'a'"}, // BINARY(16) pads
		{strictMode, "UPDATE su SET n = 1 WHERE id = 'a'"}, // UCS-2 bytes
	} {
		if ws := stmtIn(c.mode, c.q); ws.Barrier != CauseStatement || len(ws.Keys) != 0 {
			t.Errorf("%s (sql_mode %#x): barrier %v, keys %v; want a barrier", c.q, c.mode, ws.Barrier, ws.Keys)
		}
	}
	composite := extract(x, rows(cat, "s2", binlog.Insert, []any{int32(1), int64(2), int32(0)}))
	if ws := stmt("UPDATE s2 SET v = 3 WHERE b = 2 AND a = 1"); ws.Barrier != CauseNone || !intersects(ws.Keys, composite.Keys) {
		t.Errorf("composite key: barrier %v, keys %v, want %v", ws.Barrier, ws.Keys, composite.Keys)
	}
	for _, q := range []string{
		"UPDATE s SET k = 1 WHERE k = 5",                     // not by its key
		"UPDATE s SET id = 7 WHERE id = 5",                   // moves the key
		"INSERT INTO s (k) VALUES (1)",                       // AUTO_INCREMENT or default key
		"UPDATE uq SET u = 1 WHERE id = 1",                   // another unique key
		"UPDATE users SET email = 'c@d', n = 2 WHERE id = 5", // changes another unique key
		"DELETE FROM users WHERE id = 5",                     // frees the row's other unique values
		"INSERT INTO users (id, email) VALUES (6, 'a@b')",    // not strict: the server may cut the string
		"INSERT INTO users (id, email) VALUES (6, LOWER('a@b'))",
		"INSERT INTO users (id, email, n) VALUES (6, 'a@b', 1) ON DUPLICATE KEY UPDATE n = 2", // may change row 5
		"INSERT INTO ug (id, n) VALUES (6, 1)",                                                // takes a generated unique value
		"INSERT INTO un (id, u) VALUES (6, 1), (7, NULL)",                                     // the NULL becomes 0 where not strict
		"INSERT INTO cd (id, pid, qid, n) VALUES (5, 1, NULL, 0), (6, 1, 1, 0)",
		"REPLACE INTO uq (id, u) VALUES (1, 2)", // deletes the row holding u = 2
		"INSERT INTO uq (id, u) VALUES (1, 2) ON DUPLICATE KEY UPDATE u = u",
		"DELETE FROM uq WHERE id = 1",                        // frees its u
		"UPDATE ug SET n = 1 WHERE id = 5",                   // a generated column of a unique key follows n
		"UPDATE pc SET name = 'b' WHERE id = 1",              // ch2 references code, whose value the statement does not say
		"DELETE FROM pa WHERE id = 1",                        // ch's rows reference it
		"DELETE FROM pa WHERE id = 2",                        // ch's rows reference it, and cascade
		"REPLACE INTO pa (id, name) VALUES (2, 'c')",         // so does REPLACE's delete
		"INSERT INTO pc (id, code, name) VALUES (2, 3, 'c')", // ch2 references code, not the key
		"UPDATE ch SET n = 1 WHERE id = 1",                   // a cascade from pa may change the row
		"DELETE FROM cn WHERE id = 1",                        // frees the parent row it references
		"UPDATE cn SET pid = 2 WHERE id = 1",                 // so does a change of the reference
		"REPLACE INTO cn (id, pid, n) VALUES (1, 1, 0)",      // and a REPLACE, which deletes
		"INSERT INTO cd (id, qid, n) VALUES (5, 1, 0)",       // a reference left to its default, 1
		"INSERT INTO cd (id, pid, n) VALUES (5, 1, 0)",       // one left out NOT NULL: refused, or 0 where not strict
		"INSERT INTO cn (id, pid, n) VALUES (5, 1, 0) ON DUPLICATE KEY UPDATE pid = 2",
		"INSERT INTO us (id) VALUES (4294967296)",   // above INT UNSIGNED: clipped or refused
		"UPDATE sm SET n = 1 WHERE id = 40000",      // above SMALLINT
		"INSERT INTO sm (id, n) VALUES (-32769, 1)", // below it
		"INSERT INTO tr (id) VALUES (1)",            // triggers
		"INSERT INTO s SELECT * FROM s2",            // reads another table
		"UPDATE s SET k = 1 WHERE id = 1 AND k = (SELECT 1)",
	} {
		if ws := stmt(q); ws.Barrier != CauseStatement || len(ws.Keys) != 0 {
			t.Errorf("%s: barrier %v, keys %v; want a barrier", q, ws.Barrier, ws.Keys)
		}
	}
	if ws := stmt("UPDATE s SET k = 1 WHERE id = 1", "UPDATE s SET k = 1"); ws.Barrier != CauseStatement {
		t.Errorf("a transaction with one statement that is a barrier: %v", ws.Barrier)
	}
}

// TestStatementReadsConnectionID: a statement with keys reads its
// session's connection id only through its text or a column default or
// generation expression of its table, each of which the writeset says.
func TestStatementReadsConnectionID(t *testing.T) {
	cat, _, err := schema.Parse(strings.NewReader(`CREATE DATABASE d; USE d;
CREATE TABLE plain (id INT PRIMARY KEY, c BIGINT DEFAULT 7, g BIGINT AS (c + 1) VIRTUAL);
CREATE TABLE dflt (id INT PRIMARY KEY, c BIGINT DEFAULT (CONNECTION_ID()));
CREATE TABLE gen (id INT PRIMARY KEY, c BIGINT AS (connection_id()) VIRTUAL);
CREATE TABLE altered (id INT PRIMARY KEY, c BIGINT);
ALTER TABLE altered ALTER COLUMN c SET DEFAULT (Connection_Id() + 1);
`), "test.sql")
	if err != nil {
		t.Fatal(err)
	}
	x := NewExtractor(cat)
	for _, c := range []struct {
		q     string
		reads bool
	}{
		{"INSERT INTO plain (id) VALUES (1)", false},
		{"UPDATE plain SET c = c + 1 WHERE id = 1", false},
		{"UPDATE plain SET c = CONNECTION_ID() WHERE id = 1", true},
		{"UPDATE plain SET c = @@pseudo_thread_id WHERE id = 1", true},
		{"insert into plain (id, c) values (2, connection_id())", true},
		{"INSERT INTO dflt (id) VALUES (1)", true},
		{"DELETE FROM dflt WHERE id = 1", true},
		{"INSERT INTO gen (id) VALUES (1)", true},
		{"INSERT INTO altered (id) VALUES (1)", true},
	} {
		txn := &binlog.Txn{StatementDML: true, Statements: []binlog.Statement{{Schema: "d", Query: c.q, Kind: binlog.StmtDML}}}
		ws := &Writeset{}
		x.Extract(txn, ws)
		if ws.Barrier != CauseNone {
			t.Errorf("%s: barrier %v, want keys", c.q, ws.Barrier)
		}
		if ws.ReadsConnectionID != c.reads {
			t.Errorf("%s: ReadsConnectionID %v, want %v", c.q, ws.ReadsConnectionID, c.reads)
		}
		// The next transaction starts afresh.
		x.Extract(&binlog.Txn{StatementDML: true, Statements: []binlog.Statement{{Schema: "d", Query: "DELETE FROM plain WHERE id = 9", Kind: binlog.StmtDML}}}, ws)
		if ws.ReadsConnectionID {
			t.Errorf("after %s: a plain DELETE reads the connection id", c.q)
		}
	}
}
