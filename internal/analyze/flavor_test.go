package analyze

import (
	"testing"

	"github.com/paraply/paraply/internal/fixtures"

	"github.com/paraply/paraply/internal/schema"
)

// TestMySQLStreamDDL analyzes a binlog MySQL 9.0.1 wrote (CREATE DATABASE
// foo without a character set, then a table with a JSON column) with no
// schema given: the catalog must read the DDL as MySQL does, with the
// database's collation from the session that created it (collation_server
// utf8mb4_0900_ai_ci, carried by the query event), not MariaDB's latin1.
func TestMySQLStreamDDL(t *testing.T) {
	cat := schema.NewCatalog()
	if _, err := Run(Options{Files: []string{fixtures.Binlog("blackbeam__rust_mysql_common/json-opaque.binlog")}, Catalog: cat}); err != nil {
		t.Fatal(err)
	}
	if s, ok := cat.Schema("foo"); !ok || s.Charset != "utf8mb4" || s.Collation != "utf8mb4_0900_ai_ci" {
		t.Errorf("database foo: %+v, want utf8mb4_0900_ai_ci", s)
	}
	if tb := cat.Table("foo", "test"); tb == nil || tb.Columns[0].Type != "json" {
		t.Errorf("foo.test: %+v, want a MySQL json column", tb)
	}
}
