package schema

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// liveFixture covers what a schema dump must round-trip: composite and
// missing primary keys, several unique keys (nullable, prefix, hash),
// foreign keys with and without actions (cross-database, self-referencing),
// utf8mb4_bin / default / latin1 / latin2 / uca1400 collations, unsigned
// integers, generated, invisible and compressed columns, MariaDB types,
// expression defaults, identifiers with backticks, spaces and unicode, a
// trigger and a procedure (DELIMITER blocks), a view, a sequence, a
// partitioned and a system-versioned table.
const liveFixture = "CREATE DATABASE shop DEFAULT CHARACTER SET utf8mb4;\n" +
	"CREATE DATABASE `we``ird db` DEFAULT CHARACTER SET latin2;\n" +
	"USE shop;\n" + `
CREATE TABLE customers (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(200) NOT NULL,
  nick VARCHAR(100) COLLATE utf8mb4_bin NULL,
  legacy VARCHAR(50) CHARACTER SET latin1,
  phone VARCHAR(30) NULL,
  bio TEXT,
  avatar BLOB,
  created DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  score DECIMAL(10,2) UNSIGNED DEFAULT 0,
  email_lc VARCHAR(200) AS (LOWER(email)) VIRTUAL,
  kind ENUM('a','b') CHARACTER SET ascii DEFAULT 'a',
  doc JSON,
  secret INT INVISIBLE,
  uca VARCHAR(10) COLLATE uca1400_ai_ci,
  UNIQUE KEY uk_email (email),
  UNIQUE KEY uk_phone_nick (phone, nick(20)),
  KEY k_created (created) IGNORED
) ENGINE=InnoDB;
CREATE TABLE orders (
  shop_id SMALLINT NOT NULL,
  order_no BIGINT UNSIGNED NOT NULL,
  customer_id INT UNSIGNED NOT NULL,
  total DECIMAL(12,2),
  placed_by VARCHAR(36) DEFAULT uuid(),
  placed_in BIGINT DEFAULT (CONNECTION_ID()),
  placed_in2 BIGINT AS (connection_id() + 1) VIRTUAL,
  PRIMARY KEY (shop_id, order_no),
  KEY (customer_id),
  CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE order_lines (
  shop_id SMALLINT NOT NULL,
  order_no BIGINT UNSIGNED NOT NULL,
  line TINYINT UNSIGNED NOT NULL,
  sku CHAR(12) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  qty INT DEFAULT (1 + 1),
  stored_total DECIMAL(12,2) GENERATED ALWAYS AS (qty * 2) STORED,
  note VARCHAR(100) COMPRESSED,
  PRIMARY KEY (shop_id, order_no, line),
  FOREIGN KEY (shop_id, order_no) REFERENCES orders (shop_id, order_no)
) ENGINE=InnoDB;
CREATE TABLE log_nokey (msg VARCHAR(255), at TIMESTAMP NULL) ENGINE=InnoDB;
CREATE TABLE ordering (a INT, b INT NOT NULL, t TEXT, e VARCHAR(10) NOT NULL,
  UNIQUE (a), UNIQUE (t), UNIQUE (e(3)), UNIQUE (b)) ENGINE=InnoDB;
CREATE TABLE tree (id INT PRIMARY KEY, parent INT,
  FOREIGN KEY (parent) REFERENCES tree (id) ON DELETE CASCADE) ENGINE=InnoDB;
CREATE TABLE typed (id INT PRIMARY KEY, u UUID, ip INET6, ip4 INET4, g POINT NOT NULL, UNIQUE (u),
  SPATIAL KEY (g)) ENGINE=Aria;
CREATE TABLE parted (id INT NOT NULL, v CHAR(2), PRIMARY KEY (id)) ENGINE=InnoDB
  PARTITION BY HASH (id) PARTITIONS 2;
CREATE TABLE versioned (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING;
CREATE TABLE periods (id INT, u INT, s DATE, e DATE, f VARCHAR(4096), PERIOD FOR p (s, e),
  PRIMARY KEY (id, p WITHOUT OVERLAPS), UNIQUE (u, p WITHOUT OVERLAPS), UNIQUE (f)) ENGINE=InnoDB;
CREATE SEQUENCE seq1;
` + "CREATE TABLE `we``ird tablé` (`col ``x`` ü` INT NOT NULL, `ключ` VARCHAR(10) COLLATE utf8mb4_unicode_ci,\n" +
	"  PRIMARY KEY (`col ``x`` ü`), UNIQUE KEY `u k` (`ключ`)) ENGINE=InnoDB;\n" +
	"CREATE TABLE `we``ird db`.t1 (a INT PRIMARY KEY, b VARCHAR(10), c CHAR(3) CHARACTER SET utf8mb3,\n" +
	"  cust INT UNSIGNED NULL, FOREIGN KEY (cust) REFERENCES shop.customers (id) ON UPDATE SET NULL) ENGINE=InnoDB;\n" + `
DELIMITER //
CREATE TRIGGER trg_bi BEFORE INSERT ON customers FOR EACH ROW BEGIN
  SET NEW.email = LOWER(NEW.email); -- a comment; with a semicolon
  IF NEW.score IS NULL THEN SET NEW.score = 0; END IF;
END//
CREATE PROCEDURE p1() BEGIN SELECT 'x;y'; CREATE TABLE IF NOT EXISTS not_a_table (a INT); END//
DELIMITER ;
CREATE VIEW v_orders AS SELECT o.shop_id, o.order_no, c.email FROM orders o JOIN customers c ON c.id = o.customer_id;
`

// TestLiveDumpMatchesLoad dumps the fixture with mariadb-dump --no-data and
// checks that Parse of the dump and Load from information_schema give the
// same catalog, and that it is the right one.
func TestLiveDumpMatchesLoad(t *testing.T) {
	s := sharedServer(t)
	s.Exec(t, "DROP DATABASE IF EXISTS shop; DROP DATABASE IF EXISTS `we``ird db`;\n"+liveFixture)
	ctx := context.Background()
	loaded, err := Load(ctx, s.DB(), "shop", "we`ird db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dump.sql")
	dump := s.Dump(t, "--no-data", "--routines", "--triggers", "--events", "--databases", "shop", "we`ird db")
	if err := os.WriteFile(path, dump, 0o600); err != nil {
		t.Fatal(err)
	}
	parsed, warnings, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The system-versioned table is the only one not understood.
	if len(warnings) != 1 || warnings[0].Table != (TableName{"shop", "versioned"}) || !errors.Is(warnings[0].Err, ErrUnparsed) {
		t.Errorf("warnings = %v, want one for `shop`.`versioned`", warnings)
	}
	compareCatalogs(t, parsed, loaded, "shop", "we`ird db")
	compareSchemas(t, parsed, loaded, "shop", "we`ird db")
	checkFixture(t, loaded)
	checkFixture(t, parsed)
	checkInvariants(t, parsed)

	// A dump of one database, without USE: the header names the database.
	single, warnings, err := Parse(bytes.NewReader(s.Dump(t, "--no-data", "shop")), "shop.sql")
	if err != nil || len(warnings) != 1 {
		t.Fatalf("Parse single-database dump: %v, %v", warnings, err)
	}
	loadedShop, err := Load(ctx, s.DB(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	compareCatalogs(t, single, loadedShop, "shop")
}

// checkFixture checks what the fixture must give, whichever the source.
func checkFixture(t *testing.T, c *Catalog) {
	t.Helper()
	cust := c.Table("shop", "customers")
	if cust == nil {
		t.Fatal("no shop.customers")
	}
	col := func(tb *Table, name string) Column {
		t.Helper()
		i := tb.ColumnIndex(name)
		if i < 0 {
			t.Fatalf("%s has no column %s", tb.TableName(), name)
		}
		return tb.Columns[i]
	}
	for _, tc := range []struct {
		table *Table
		col   string
		want  Column
	}{
		{cust, "id", Column{Name: "id", Type: "int", Unsigned: true, AutoIncrement: true, DefaultNull: true}},
		{cust, "EMAIL", Column{Name: "email", Type: "varchar", Charset: "utf8mb4", Collation: "utf8mb4_general_ci", DefaultNull: true}},
		{cust, "nick", Column{Name: "nick", Type: "varchar", Charset: "utf8mb4", Collation: "utf8mb4_bin", Nullable: true, DefaultNull: true}},
		{cust, "legacy", Column{Name: "legacy", Type: "varchar", Charset: "latin1", Collation: "latin1_swedish_ci", Nullable: true, DefaultNull: true}},
		{cust, "avatar", Column{Name: "avatar", Type: "blob", Charset: "binary", Collation: "binary", Nullable: true, DefaultNull: true}},
		{cust, "email_lc", Column{Name: "email_lc", Type: "varchar", Charset: "utf8mb4", Collation: "utf8mb4_general_ci", Nullable: true, Generated: true, DefaultNull: true}},
		{cust, "kind", Column{Name: "kind", Type: "enum", Charset: "ascii", Collation: "ascii_general_ci", Nullable: true}},
		{cust, "doc", Column{Name: "doc", Type: "longtext", Charset: "utf8mb4", Collation: "utf8mb4_bin", Nullable: true, DefaultNull: true}},
		{cust, "secret", Column{Name: "secret", Type: "int", Nullable: true, DefaultNull: true}},
		{cust, "uca", Column{Name: "uca", Type: "varchar", Charset: "utf8mb4", Collation: "utf8mb4_uca1400_ai_ci", Nullable: true, DefaultNull: true}},
		{c.Table("shop", "order_lines"), "stored_total", Column{Name: "stored_total", Type: "decimal", Nullable: true, Generated: true, DefaultNull: true}},
		{c.Table("shop", "orders"), "placed_by", Column{Name: "placed_by", Type: "varchar", Charset: "latin1", Collation: "latin1_swedish_ci", Nullable: true}},
		{c.Table("shop", "orders"), "placed_in", Column{Name: "placed_in", Type: "bigint", Nullable: true, ConnectionID: true}},
		{c.Table("shop", "orders"), "placed_in2", Column{Name: "placed_in2", Type: "bigint", Nullable: true, Generated: true, ConnectionID: true, DefaultNull: true}},
		{c.Table("shop", "typed"), "u", Column{Name: "u", Type: "uuid", Nullable: true, DefaultNull: true}},
		{c.Table("shop", "typed"), "g", Column{Name: "g", Type: "point", DefaultNull: true}},
		{c.Table("we`ird db", "t1"), "b", Column{Name: "b", Type: "varchar", Charset: "latin2", Collation: "latin2_general_ci", Nullable: true, DefaultNull: true}},
		{c.Table("we`ird db", "t1"), "c", Column{Name: "c", Type: "char", Charset: "utf8mb3", Collation: "utf8mb3_general_ci", Nullable: true, DefaultNull: true}},
	} {
		if got := col(tc.table, tc.col); got != tc.want {
			t.Errorf("%s.%s = %+v, want %+v", tc.table.TableName(), tc.col, got, tc.want)
		}
	}
	wantIdx := []Index{
		{Name: "PRIMARY", Primary: true, Columns: []int{0}, Prefix: []int{0}},
		{Name: "uk_email", Columns: []int{1}, Prefix: []int{0}},
		{Name: "uk_phone_nick", Columns: []int{4, 2}, Prefix: []int{0, 20}},
	}
	if !reflect.DeepEqual(cust.Indexes, wantIdx) {
		t.Errorf("customers indexes = %+v, want %+v", cust.Indexes, wantIdx)
	}
	// MariaDB orders keys: NOT NULL whole-column, NOT NULL prefix, nullable, hash.
	var names []string
	for _, ix := range c.Table("shop", "ordering").Indexes {
		names = append(names, ix.Name)
	}
	if want := []string{"b", "e", "a", "t"}; !slices.Equal(names, want) {
		t.Errorf("ordering keys = %v, want %v", names, want)
	}
	// WITHOUT OVERLAPS keys end with the period's end and start; the long
	// unique key's hidden hash column is no column of the table.
	wantIdx = []Index{
		{Name: "PRIMARY", Primary: true, Columns: []int{0, 3, 2}, Prefix: []int{0, 0, 0}, WithoutOverlaps: true},
		{Name: "u", Columns: []int{1, 3, 2}, Prefix: []int{0, 0, 0}, WithoutOverlaps: true},
		{Name: "f", Columns: []int{4}, Prefix: []int{0}},
	}
	if per := c.Table("shop", "periods"); len(per.Columns) != 5 || !reflect.DeepEqual(per.Indexes, wantIdx) {
		t.Errorf("periods = %+v, want indexes %+v", per, wantIdx)
	}
	if c.Table("shop", "log_nokey").PrimaryKey() != nil || len(c.Table("shop", "log_nokey").Indexes) != 0 {
		t.Errorf("log_nokey has keys: %+v", c.Table("shop", "log_nokey").Indexes)
	}
	weird := c.Table("shop", "we`ird tablé")
	if weird == nil || weird.Columns[0].Name != "col `x` ü" || weird.Indexes[1].Name != "u k" {
		t.Errorf("weird table = %+v", weird)
	}
	wantFK := []ForeignKey{{Name: "fk_orders_customer", Columns: []int{2}, Ref: TableName{"shop", "customers"},
		RefColumns: []string{"id"}, OnDelete: Cascade, OnUpdate: Restrict}}
	if got := c.Table("shop", "orders").ForeignKeys; !reflect.DeepEqual(got, wantFK) {
		t.Errorf("orders foreign keys = %+v, want %+v", got, wantFK)
	}
	wantFK = []ForeignKey{{Name: "order_lines_ibfk_1", Columns: []int{0, 1}, Ref: TableName{"shop", "orders"},
		RefColumns: []string{"shop_id", "order_no"}, OnDelete: Restrict, OnUpdate: Restrict}}
	if got := c.Table("shop", "order_lines").ForeignKeys; !reflect.DeepEqual(got, wantFK) {
		t.Errorf("order_lines foreign keys = %+v, want %+v", got, wantFK)
	}
	reach := c.CascadeReach(TableName{"shop", "customers"})
	want := []TableName{{"shop", "orders"}, {"we`ird db", "t1"}}
	if !reflect.DeepEqual(reach, want) {
		t.Errorf("CascadeReach(customers) = %v, want %v", reach, want)
	}
	if reach := c.CascadeReach(TableName{"shop", "tree"}); !reflect.DeepEqual(reach, []TableName{{"shop", "tree"}}) {
		t.Errorf("CascadeReach(tree) = %v", reach)
	}
	if !c.Unknown("shop", "versioned") || c.Table("shop", "seq1") != nil || c.Table("shop", "v_orders") != nil ||
		c.Table("shop", "not_a_table") != nil {
		t.Errorf("versioned unknown=%v, seq1=%v, v_orders=%v", c.Unknown("shop", "versioned"),
			c.Table("shop", "seq1"), c.Table("shop", "v_orders"))
	}
	if s, ok := c.Schema("we`ird db"); !ok || s.Collation != "latin2_general_ci" {
		t.Errorf("schema we`ird db = %+v, %v", s, ok)
	}
}

// TestLiveCharsetDefaults checks the built-in default collations against
// the server's.
func TestLiveCharsetDefaults(t *testing.T) {
	s := sharedServer(t)
	rows, err := s.DB().Query("SELECT CHARACTER_SET_NAME, DEFAULT_COLLATE_NAME FROM information_schema.CHARACTER_SETS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var cs, co string
		if err := rows.Scan(&cs, &co); err != nil {
			t.Fatal(err)
		}
		n++
		if got := defaultCollation(cs); got != co {
			t.Errorf("defaultCollation(%s) = %q, server says %q", cs, got, co)
		}
		if got := charsetOf(co); got != cs {
			t.Errorf("charsetOf(%s) = %q, want %q", co, got, cs)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(charsets) {
		t.Errorf("server has %d character sets, table has %d", n, len(charsets))
	}
}

// liveDDL is run on the server and applied with ApplyDDL, statement by
// statement; the catalogs must then agree.
var liveDDL = []string{
	"CREATE DATABASE ddl2 DEFAULT CHARACTER SET latin2",
	"CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(20) NOT NULL, UNIQUE KEY (code))",
	"CREATE TABLE c (id INT AUTO_INCREMENT PRIMARY KEY, p_id INT, note TEXT, " +
		"CONSTRAINT fk_c_p FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE CASCADE)",
	"CREATE TABLE gc (id INT PRIMARY KEY, c_id INT, FOREIGN KEY (c_id) REFERENCES c (id) ON UPDATE SET NULL)",
	"ALTER TABLE c ADD COLUMN IF NOT EXISTS flag TINYINT UNSIGNED NOT NULL DEFAULT 0 AFTER p_id, " +
		"ADD UNIQUE KEY uk_note (note(10)), ALGORITHM=COPY",
	"ALTER TABLE c WAIT 5 ADD COLUMN email VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, ADD UNIQUE (email)",
	"ALTER ONLINE TABLE c NOWAIT ADD COLUMN created DATETIME DEFAULT current_timestamp() ON UPDATE current_timestamp()",
	"ALTER TABLE c CHANGE COLUMN email mail VARCHAR(120) CHARACTER SET latin1 NOT NULL FIRST",
	"ALTER TABLE c MODIFY note MEDIUMTEXT COLLATE latin1_bin",
	"ALTER TABLE c RENAME COLUMN flag TO flags",
	"ALTER TABLE c ALTER COLUMN flags SET DEFAULT (CONNECTION_ID() % 2)",
	"ALTER TABLE c ALTER COLUMN p_id SET DEFAULT 7, ALTER COLUMN note SET DEFAULT NULL",
	"ALTER TABLE c ADD COLUMN d1 INT DEFAULT 5 INVISIBLE, ADD COLUMN d2 UUID DEFAULT NULL, ADD COLUMN d3 INT",
	"ALTER TABLE c ALTER COLUMN d1 DROP DEFAULT, ALTER COLUMN d3 SET DEFAULT (1 + 1), ALTER COLUMN p_id DROP DEFAULT",
	"ALTER TABLE p CHANGE id pid INT NOT NULL",
	"ALTER TABLE c DROP FOREIGN KEY IF EXISTS fk_c_p, DROP FOREIGN KEY IF EXISTS nosuch",
	"ALTER TABLE c ADD CONSTRAINT fk2 FOREIGN KEY (p_id) REFERENCES p (pid) ON DELETE SET NULL ON UPDATE CASCADE",
	"ALTER TABLE c DROP INDEX uk_note, DROP KEY IF EXISTS nope",
	"CREATE UNIQUE INDEX uk_flags ON c (flags, mail(5))",
	"DROP INDEX uk_flags ON c",
	"CREATE INDEX k_mail ON c (mail)",
	"ALTER TABLE c ADD COLUMN u UUID, ADD COLUMN ip INET6 DEFAULT '::1', ADD COLUMN loc POINT, ADD UNIQUE (u)",
	"CREATE TABLE k (a INT NOT NULL, b INT, c VARCHAR(10), UNIQUE (b), UNIQUE KEY uc (c(3)), UNIQUE (a))",
	"ALTER TABLE k ADD PRIMARY KEY (b)",
	"ALTER TABLE k DROP PRIMARY KEY",
	"CREATE TABLE k2 LIKE k",
	"CREATE OR REPLACE TABLE k2 (x INT PRIMARY KEY)",
	"CREATE TABLE IF NOT EXISTS k2 (y INT)",
	"RENAME TABLE k TO ddl2.k, k2 TO k3",
	"RENAME TABLE p TO p_renamed",
	"ALTER TABLE gc RENAME TO gc2, ADD COLUMN extra INT",
	"ALTER TABLE c CONVERT TO CHARACTER SET utf8mb4",
	"ALTER TABLE c DEFAULT CHARACTER SET latin1 COLLATE latin1_general_ci",
	"ALTER TABLE c ADD COLUMN t2 VARCHAR(5), ADD COLUMN t3 CHAR(2) BINARY",
	"CREATE TABLE ddl2.d (a INT PRIMARY KEY, b VARCHAR(5))",
	"ALTER DATABASE ddl2 CHARACTER SET cp1251",
	"CREATE TABLE ddl2.e (a VARCHAR(5) PRIMARY KEY, r INT REFERENCES ddl.c (id))",
	"DROP TABLE IF EXISTS nosuch, k3",
	"TRUNCATE TABLE ddl2.d",
	"CREATE TABLE `we``ird ü` (`a b` INT PRIMARY KEY, `c``d` INT UNIQUE, `e f` INT)",
	"ALTER TABLE `we``ird ü` DROP COLUMN `c``d`, ADD UNIQUE KEY `k k` (`e f`)",
	"CREATE TABLE self (id INT PRIMARY KEY, parent INT, FOREIGN KEY (parent) REFERENCES self (id) ON DELETE CASCADE)",
	"CREATE TABLE per (id INT, s DATETIME(3), e DATETIME(3), b BLOB, PERIOD FOR p (s, e), UNIQUE (id, p WITHOUT OVERLAPS), UNIQUE (b))",
	"ALTER TABLE per ADD COLUMN y INT FIRST, CHANGE id pid INT",
	"CREATE TABLE per2 LIKE per",
	"RENAME TABLE self TO self2",
	"ALTER TABLE c DROP COLUMN flags",
	"ALTER TABLE c ADD COLUMN inv INT INVISIBLE, ADD COLUMN v INT AS (inv + 1) PERSISTENT, ADD COLUMN j JSON",
	"CREATE DATABASE ddl3",
	"CREATE TABLE ddl3.t (a INT PRIMARY KEY)",
	"DROP DATABASE ddl3",
	"CREATE VIEW vv AS SELECT 1 AS x",
	"CREATE TRIGGER tr BEFORE INSERT ON p_renamed FOR EACH ROW BEGIN SET NEW.code = 'x'; END",
	"CREATE DEFINER=`root`@`localhost` PROCEDURE pr() BEGIN DROP TABLE IF EXISTS c; END",
	"CREATE TEMPORARY TABLE tmp (a INT)",
	"DROP TEMPORARY TABLE tmp",
	"GRANT SELECT ON ddl.* TO 'root'@'localhost'",
	"ALTER TABLE c FORCE",
}

// TestLiveApplyDDLFollowsServer runs liveDDL on the server and through
// ApplyDDL, then compares the catalog with a fresh Load.
func TestLiveApplyDDLFollowsServer(t *testing.T) {
	s := sharedServer(t)
	ctx := context.Background()
	s.Exec(t, "DROP DATABASE IF EXISTS ddl; DROP DATABASE IF EXISTS ddl2; DROP DATABASE IF EXISTS ddl3; CREATE DATABASE ddl;")
	c, err := Load(ctx, s.DB(), "ddl")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE ddl"); err != nil {
		t.Fatal(err)
	}
	for _, q := range liveDDL {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("server: %s: %v", q, err)
		}
		if _, err := c.ApplyDDL("ddl", q); err != nil {
			t.Errorf("ApplyDDL(%s): %v", q, err)
		}
		checkInvariants(t, c)
	}
	loaded, err := Load(ctx, s.DB(), "ddl", "ddl2", "ddl3")
	if err != nil {
		t.Fatal(err)
	}
	compareCatalogs(t, c, loaded, "ddl", "ddl2")
	compareSchemas(t, c, loaded, "ddl", "ddl2", "ddl3")
	if _, ok := c.Schema("ddl3"); ok {
		t.Error("ddl3 still known after DROP DATABASE")
	}

	// LoadTable refreshes one table; a missing one is ErrNoTable.
	tb, err := LoadTable(ctx, s.DB(), "ddl", "c")
	if err != nil || !reflect.DeepEqual(tb, c.Table("ddl", "c")) {
		t.Errorf("LoadTable = %+v, %v; want %+v", tb, err, c.Table("ddl", "c"))
	}
	if _, err := LoadTable(ctx, s.DB(), "ddl", "nosuch"); !errors.Is(err, ErrNoTable) {
		t.Errorf("LoadTable(nosuch) error = %v, want ErrNoTable", err)
	}
	// Load without schemas leaves the system databases out.
	all, err := Load(ctx, s.DB())
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range all.Tables() {
		if tb.Schema == "mysql" || tb.Schema == "sys" || strings.HasSuffix(tb.Schema, "_schema") {
			t.Errorf("Load() returned system table %s", tb.TableName())
		}
	}
	if all.Table("ddl", "c") == nil {
		t.Error("Load() misses ddl.c")
	}
}

// compareCatalogs checks that got and want have the same tables, Unknown
// marks and children in the given databases.
func compareCatalogs(t *testing.T, got, want *Catalog, schemas ...string) {
	t.Helper()
	in := func(n TableName) bool { return slices.Contains(schemas, n.Schema) }
	names := func(c *Catalog) []TableName {
		var out []TableName
		for _, tb := range c.Tables() {
			if in(tb.TableName()) {
				out = append(out, tb.TableName())
			}
		}
		for _, n := range c.UnknownTables() {
			if in(n) && c.Table(n.Schema, n.Name) == nil {
				out = append(out, n)
			}
		}
		slices.SortFunc(out, TableName.Compare)
		return out
	}
	gotNames, wantNames := names(got), names(want)
	if !slices.Equal(gotNames, wantNames) {
		t.Errorf("tables = %v\nwant     %v", gotNames, wantNames)
	}
	for _, n := range wantNames {
		if got.Unknown(n.Schema, n.Name) != want.Unknown(n.Schema, n.Name) {
			t.Errorf("%s: Unknown = %v, want %v", n, got.Unknown(n.Schema, n.Name), want.Unknown(n.Schema, n.Name))
			continue
		}
		if want.Unknown(n.Schema, n.Name) {
			continue // its definition need not agree
		}
		g, w := got.Table(n.Schema, n.Name), want.Table(n.Schema, n.Name)
		if g == nil || w == nil {
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", n, *g, *w)
		}
		if gc, wc := got.Children(n), want.Children(n); !reflect.DeepEqual(gc, wc) {
			t.Errorf("%s children:\n got %+v\nwant %+v", n, gc, wc)
		}
	}
}

// compareSchemas checks that got and want agree on the databases' defaults.
func compareSchemas(t *testing.T, got, want *Catalog, schemas ...string) {
	t.Helper()
	for _, s := range schemas {
		gs, gok := got.Schema(s)
		ws, wok := want.Schema(s)
		if gok != wok || gs != ws {
			t.Errorf("schema %s = %+v (%v), want %+v (%v)", s, gs, gok, ws, wok)
		}
	}
}
