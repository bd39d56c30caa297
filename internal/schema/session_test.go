package schema

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestApplyDDLInSession: a database created without a character set gets
// the collation_server of the session that created it, as its query event
// says, and CHARACTER SET utf8mb4 means that session's
// default_collation_for_utf8mb4. The session does not outlive the
// statement; a collation ID the catalog cannot name makes tables Unknown.
func TestApplyDDLInSession(t *testing.T) {
	c := NewCatalog()
	c.SetFlavor(MySQL)
	mysql8 := Session{CollationServer: 255, DefaultUTF8MB4: 255}
	apply := func(s Session, cur, q string) error {
		t.Helper()
		_, err := c.ApplyDDLIn(s, cur, q)
		return err
	}
	for _, q := range []string{"CREATE DATABASE app", "CREATE TABLE u (id INT PRIMARY KEY, email VARCHAR(50) NOT NULL UNIQUE)"} {
		if err := apply(mysql8, "app", q); err != nil {
			t.Fatal(err)
		}
	}
	if col := c.Table("app", "u").Columns[1]; col.Charset != "utf8mb4" || col.Collation != "utf8mb4_0900_ai_ci" {
		t.Errorf("app.u.email: %s/%s, want utf8mb4/utf8mb4_0900_ai_ci", col.Charset, col.Collation)
	}
	if err := apply(Session{CollationServer: 8, DefaultUTF8MB4: 45}, "", "CREATE DATABASE old CHARACTER SET utf8mb4"); err != nil {
		t.Fatal(err)
	}
	if s, _ := c.Schema("old"); s.Collation != "utf8mb4_general_ci" {
		t.Errorf("CHARACTER SET utf8mb4 with default_collation_for_utf8mb4=45: %+v", s)
	}
	if err := apply(Session{}, "", "CREATE DATABASE plain"); err != nil {
		t.Fatal(err)
	}
	if s, _ := c.Schema("plain"); s.Collation != "latin1_swedish_ci" {
		t.Errorf("a statement without session settings: %+v, want the catalog's server default", s)
	}

	m := NewCatalog()
	if _, err := m.ApplyDDLIn(Session{CollationServer: 45}, "", "CREATE DATABASE a"); err != nil {
		t.Fatal(err)
	}
	if s, _ := m.Schema("a"); s.Collation != "utf8mb4_general_ci" {
		t.Errorf("MariaDB collation 45: %+v", s)
	}
	if _, err := m.ApplyDDLIn(Session{CollationServer: 4000}, "", "CREATE DATABASE b"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ApplyDDL("b", "CREATE TABLE t (s VARCHAR(5) PRIMARY KEY)"); !errors.Is(err, ErrUnparsed) || !m.Unknown("b", "t") {
		t.Errorf("a table inheriting an unknown collation: %v, unknown %v; want Unknown", err, m.Unknown("b", "t"))
	}
	if _, err := m.ApplyDDL("b", "CREATE TABLE t2 (s VARCHAR(5) CHARACTER SET utf8mb4 PRIMARY KEY) CHARACTER SET latin1"); err != nil || m.Unknown("b", "t2") {
		t.Errorf("a table naming its character set: %v", err)
	}
}

// TestLiveLoadServerCollation: Load reads collation_server, so a database
// created later in the binary log without a character set gets the
// server's default, not MariaDB's compiled-in latin1.
func TestLiveLoadServerCollation(t *testing.T) {
	s := sharedServer(t)
	ctx := context.Background()
	if _, err := s.DB().ExecContext(ctx, "SET GLOBAL collation_server = utf8mb4_unicode_ci"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := s.DB().ExecContext(ctx, "SET GLOBAL collation_server = latin1_swedish_ci"); err != nil {
			t.Error(err)
		}
	})
	s.DB().SetMaxIdleConns(0) // new connections see the new global value
	defer s.DB().SetMaxIdleConns(2)
	c, err := Load(ctx, s.DB(), "mysql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ApplyDDL("", "CREATE DATABASE fresh"); err != nil {
		t.Fatal(err)
	}
	if sc, _ := c.Schema("fresh"); sc.Charset != "utf8mb4" || sc.Collation != "utf8mb4_unicode_ci" {
		t.Errorf("database created after Load: %+v, want the server's utf8mb4_unicode_ci", sc)
	}
}

// TestWrappedDDL: DDL inside a versioned comment or after MariaDB's SET
// STATEMENT ... FOR prefix changes the catalog like the bare statement.
func TestWrappedDDL(t *testing.T) {
	c := NewCatalog()
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE t (a INT PRIMARY KEY, b INT NOT NULL, c INT NOT NULL)",
		"/*!80013 ALTER TABLE t ADD UNIQUE KEY ub (b) */",
		"SET STATEMENT max_statement_time=10, sql_mode='STRICT_ALL_TABLES' FOR ALTER TABLE t ADD UNIQUE KEY uc (c)",
	} {
		if _, err := c.ApplyDDL("d", q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if tb := c.Table("d", "t"); tb == nil || tb.Index("ub") == nil || tb.Index("uc") == nil {
		t.Errorf("d.t: %+v, want unique keys ub and uc", tb)
	}
}

// TestIfNotExistsOnUnknownObjects: CREATE ... IF NOT EXISTS of a table or
// database the catalog lacks changed nothing on the server if it existed
// there, so unless the catalog knows every table of the database (a
// database it loaded or saw created), the result is Unknown, not the
// statement's guess.
func TestIfNotExistsOnUnknownObjects(t *testing.T) {
	c := NewCatalog()
	apply := func(cur, q string) {
		t.Helper()
		if _, err := c.ApplyDDL(cur, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	apply("app", "CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)")
	if !c.Unknown("app", "t") {
		t.Error("CREATE TABLE IF NOT EXISTS in a database the catalog does not know: not Unknown")
	}
	apply("", "CREATE DATABASE fresh")
	apply("fresh", "CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)")
	if c.Unknown("fresh", "t") || c.Table("fresh", "t") == nil {
		t.Error("CREATE TABLE IF NOT EXISTS in a database created in the stream: Unknown")
	}
	apply("", "CREATE DATABASE IF NOT EXISTS old")
	if _, err := c.ApplyDDL("old", "CREATE TABLE t (s VARCHAR(5) PRIMARY KEY)"); err == nil || !c.Unknown("old", "t") {
		t.Error("a table inheriting the character set of a database that may have existed: not Unknown")
	}
	d, _, err := Parse(strings.NewReader("CREATE DATABASE IF NOT EXISTS dumped DEFAULT CHARACTER SET utf8mb4;\nUSE dumped;\nCREATE TABLE IF NOT EXISTS t (s VARCHAR(5) PRIMARY KEY);\n"), "dump.sql")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := d.Schema("dumped"); s.Charset != "utf8mb4" || d.Unknown("dumped", "t") {
		t.Errorf("a dump says what exists: %+v, unknown %v", s, d.Unknown("dumped", "t"))
	}
}
