package schema

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// ddlCase applies setup, then ddl, to a catalog that has database db
// (latin1) as the current one, and checks the outcome.
type ddlCase struct {
	name    string
	setup   []string // a statement starting with "!" may fail
	ddl     string
	wantErr error // nil, ErrUnparsed or ErrMismatch
	// want maps "db.t" to describe(table), or to "-" if the table must be absent.
	want map[string]string
	// unknown lists all tables marked Unknown afterwards ("db.t"); nil means none.
	unknown []string
	// change, if not nil, lists the tables Change must report.
	change []string
}

func runDDLCases(t *testing.T, cases []ddlCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCatalog()
			for _, q := range append([]string{"CREATE DATABASE db"}, tc.setup...) {
				failOK := strings.HasPrefix(q, "!")
				if _, err := c.ApplyDDL("db", strings.TrimPrefix(q, "!")); err != nil && !failOK {
					t.Fatalf("setup %q: %v", q, err)
				}
			}
			ch, err := c.ApplyDDL("db", tc.ddl)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("ApplyDDL: %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("ApplyDDL error = %v, want %v", err, tc.wantErr)
			}
			checkInvariants(t, c)
			for name, want := range tc.want {
				n := parseName(name)
				tb := c.Table(n.Schema, n.Name)
				switch {
				case want == "-" && tb != nil:
					t.Errorf("%s exists: %s", name, describe(tb))
				case want != "-" && tb == nil:
					t.Errorf("%s missing", name)
				case tb != nil && describe(tb) != want:
					t.Errorf("%s =\n  %s\nwant\n  %s", name, describe(tb), want)
				}
			}
			var unknown []string
			for _, n := range c.UnknownTables() {
				unknown = append(unknown, n.Schema+"."+n.Name)
			}
			if !slices.Equal(unknown, tc.unknown) {
				t.Errorf("Unknown tables = %v, want %v", unknown, tc.unknown)
			}
			if tc.change != nil {
				var got []string
				for _, n := range ch.Tables {
					got = append(got, n.Schema+"."+n.Name)
				}
				if !slices.Equal(got, tc.change) {
					t.Errorf("Change.Tables = %v, want %v", got, tc.change)
				}
			}
		})
	}
}

const (
	parentP = "CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, UNIQUE KEY (code))"
	childC  = "CREATE TABLE c (id INT PRIMARY KEY, p_id INT, CONSTRAINT fk FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE CASCADE)"
)

func TestApplyDDLCreateTable(t *testing.T) {
	runDDLCases(t, []ddlCase{{
		name:   "keys; non-unique indexes left out",
		ddl:    "CREATE TABLE t (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20), UNIQUE KEY u (name(3)), KEY k (name))",
		want:   map[string]string{"db.t": "(id int unsigned, name varchar latin1_swedish_ci null) PRIMARY(id) u(name:3)"},
		change: []string{"db.t"},
	}, {
		name: "composite primary key, unnamed unique keys named as the server does",
		ddl:  "CREATE TABLE t (a INT, b INT, c INT, PRIMARY KEY (a, b), UNIQUE (c), UNIQUE (c, a), UNIQUE KEY `C_3` (b))",
		want: map[string]string{"db.t": "(a int, b int, c int null) PRIMARY(a,b) C_3(b) c(c) c_2(c,a)"},
	}, {
		name: "column-level PRIMARY KEY, UNIQUE and SERIAL; MariaDB key order",
		ddl:  "CREATE TABLE t (a INT PRIMARY KEY, b INT UNIQUE, c SERIAL)",
		want: map[string]string{"db.t": "(a int, b int null, c bigint unsigned) PRIMARY(a) c(c) b(b)"},
	}, {
		name: "column collation from table, database, or its own",
		setup: []string{"CREATE DATABASE u8 CHARACTER SET utf8mb4",
			"CREATE TABLE u8.t1 (a VARCHAR(5), b VARCHAR(5) CHARSET latin1, c VARCHAR(5) COLLATE utf8mb4_bin, d CHAR(2) BINARY, " +
				"e TEXT CHARSET binary, f VARCHAR(3) COLLATE uca1400_as_cs, g ENUM('x') CHARACTER SET utf8 COLLATE utf8_unicode_ci, h JSON)",
			"CREATE TABLE u8.t2 (a VARCHAR(5), b VARCHAR(5) CHARACTER SET cp1251 BINARY) DEFAULT CHARSET=latin2"},
		ddl: "CREATE TABLE u8.t3 (a VARCHAR(5), b VARBINARY(4), c VARCHAR(3) CHARACTER SET binary) COLLATE=utf8mb4_unicode_ci",
		want: map[string]string{
			"u8.t1": "{utf8mb4_general_ci}(a varchar utf8mb4_general_ci null, b varchar latin1_swedish_ci null, c varchar utf8mb4_bin null, " +
				"d char utf8mb4_bin null, e blob binary null, f varchar utf8mb4_uca1400_as_cs null, g enum utf8mb3_unicode_ci null, h longtext utf8mb4_bin null)",
			"u8.t2": "{latin2_general_ci}(a varchar latin2_general_ci null, b varchar cp1251_bin null)",
			"u8.t3": "{utf8mb4_unicode_ci}(a varchar utf8mb4_unicode_ci null, b varbinary binary null, c varbinary binary null)",
		},
	}, {
		name:  "IF NOT EXISTS keeps the existing table",
		setup: []string{"CREATE TABLE t (a INT PRIMARY KEY)"},
		ddl:   "CREATE TABLE IF NOT EXISTS t (b INT)",
		want:  map[string]string{"db.t": "(a int) PRIMARY(a)"},
	}, {
		name:  "OR REPLACE replaces",
		setup: []string{"CREATE TABLE t (a INT PRIMARY KEY)"},
		ddl:   "CREATE OR REPLACE TABLE t (b INT UNIQUE)",
		want:  map[string]string{"db.t": "(b int null) b(b)"},
	}, {
		name:  "LIKE copies columns and keys, not foreign keys",
		setup: []string{parentP, childC},
		ddl:   "CREATE TABLE c2 LIKE c",
		want:  map[string]string{"db.c2": "(id int, p_id int null) PRIMARY(id)"},
	}, {
		name:    "LIKE an unknown table",
		ddl:     "CREATE TABLE c2 LIKE nosuch",
		wantErr: ErrMismatch,
		want:    map[string]string{"db.c2": "-"},
		unknown: []string{"db.c2"},
	}, {
		name:    "CREATE ... SELECT is Unknown",
		setup:   []string{parentP},
		ddl:     "CREATE TABLE s AS SELECT * FROM p",
		wantErr: ErrUnparsed,
		unknown: []string{"db.s"},
	}, {
		name:   "temporary tables are ignored",
		ddl:    "CREATE TEMPORARY TABLE t (a INT PRIMARY KEY)",
		want:   map[string]string{"db.t": "-"},
		change: []string{},
	}, {
		name: "MariaDB types, attributes and options",
		ddl: "CREATE TABLE t (id INT PRIMARY KEY, u UUID DEFAULT uuid(), ip INET6, g POINT NOT NULL, " +
			"v INT AS (id + 1) PERSISTENT, i INT INVISIBLE, d INT DEFAULT (id + 1), x VARCHAR(3) COMPRESSED=zlib, " +
			"cr DATETIME DEFAULT current_timestamp() ON UPDATE current_timestamp(), n DECIMAL(5,2) DEFAULT -0.50, " +
			"s VARCHAR(5) DEFAULT _utf8mb4'x' CHECK (s <> 'y'), UNIQUE (u), KEY k (d) IGNORED, SPATIAL KEY (g)) " +
			"ENGINE=Aria PAGE_CHECKSUM=1 TRANSACTIONAL=1 `encrypted`=yes DEFAULT CHARSET=utf8mb4 PARTITION BY HASH (id) PARTITIONS 2",
		want: map[string]string{"db.t": "{utf8mb4_general_ci}(id int, u uuid null, ip inet6 null, g point, v int null gen, i int null, " +
			"d int null, x varchar utf8mb4_general_ci null, cr datetime null, n decimal null, s varchar utf8mb4_general_ci null) PRIMARY(id) u(u)"},
	}, {
		name:    "system-versioned tables are Unknown",
		ddl:     "CREATE TABLE t (a INT PRIMARY KEY) WITH SYSTEM VERSIONING",
		wantErr: ErrUnparsed,
		want:    map[string]string{"db.t": "-"},
		unknown: []string{"db.t"},
	}, {
		name: "an application-time period: its columns NOT NULL, WITHOUT OVERLAPS keys end with its end and start",
		ddl: "CREATE TABLE t (id INT, u INT, s DATE, e DATE, PERIOD FOR p (s, e), PRIMARY KEY (id, p WITHOUT OVERLAPS), " +
			"UNIQUE (u, p without overlaps), UNIQUE (u), UNIQUE KEY k (id, e, s))",
		want: map[string]string{"db.t": "(id int, u int null, s date, e date) PRIMARY(id,period e,s) k(id,e,s) u(u,period e,s) u_2(u)"},
	}, {
		name: "a period first, a prefix key over it, a long unique key beside it",
		ddl: "CREATE OR REPLACE TABLE t (PERIOD FOR `a p`(`s``1`, e), `s``1` DATETIME(6), e DATETIME(6), a VARCHAR(6), " +
			"f VARCHAR(4096), UNIQUE (a(3), `A P` WITHOUT OVERLAPS), UNIQUE (f)) ENGINE=MyISAM",
		want: map[string]string{"db.t": "(s`1 datetime, e datetime, a varchar latin1_swedish_ci null, f varchar latin1_swedish_ci null) " +
			"f(f) a(a:3,period e,s`1)"},
	}, {
		name:    "a system-time period is Unknown",
		ddl:     "CREATE TABLE t (a INT, rs TIMESTAMP(6) AS ROW START, re TIMESTAMP(6) AS ROW END, PERIOD FOR SYSTEM_TIME (rs, re)) WITH SYSTEM VERSIONING",
		wantErr: ErrUnparsed,
		want:    map[string]string{"db.t": "-"},
		unknown: []string{"db.t"},
	}, {
		name:    "WITHOUT OVERLAPS of no period",
		ddl:     "CREATE TABLE t (id INT, s DATE, e DATE, PERIOD FOR p (s, e), UNIQUE (id, q WITHOUT OVERLAPS))",
		wantErr: ErrUnparsed,
		want:    map[string]string{"db.t": "-"},
		unknown: []string{"db.t"},
	}, {
		name:    "a unique key on an expression is Unknown",
		ddl:     "CREATE TABLE t (a INT, b INT, UNIQUE KEY u ((a + b)))",
		wantErr: ErrUnparsed,
		unknown: []string{"db.t"},
	}, {
		name:  "foreign keys: column-level, named, by index name, generated names",
		setup: []string{parentP},
		ddl: "CREATE TABLE c (a INT REFERENCES p (id), b INT, c INT, FOREIGN KEY (b) REFERENCES p (id) ON DELETE SET NULL, " +
			"CONSTRAINT named FOREIGN KEY (c) REFERENCES other.q (x) ON UPDATE CASCADE, FOREIGN KEY idx (a) REFERENCES p (id) ON DELETE NO ACTION)",
		want: map[string]string{"db.c": "(a int null, b int null, c int null) c_ibfk_1(a)->`db`.`p`(id) " +
			"c_ibfk_2(b)->`db`.`p`(id) del:SET NULL idx(a)->`db`.`p`(id) del:NO ACTION named(c)->`other`.`q`(x) upd:CASCADE"},
	}, {
		name: "an unqualified parent lives in the child's database",
		ddl:  "CREATE TABLE other.c (a INT, FOREIGN KEY (a) REFERENCES p (id))",
		want: map[string]string{"other.c": "(a int null) c_ibfk_1(a)->`other`.`p`(id)"},
	}, {
		name: "identifiers with backticks, spaces and unicode",
		ddl:  "CREATE TABLE `t``x y` (`a``b` INT PRIMARY KEY, `ключ ü` VARCHAR(3) UNIQUE)",
		want: map[string]string{"db.t`x y": "(a`b int, ключ ü varchar latin1_swedish_ci null) PRIMARY(a`b) ключ ü(ключ ü)"},
	}})
}

func TestApplyDDLAlterTable(t *testing.T) {
	base := "CREATE TABLE t (a INT PRIMARY KEY, b INT, c VARCHAR(3), UNIQUE KEY u (b, c))"
	runDDLCases(t, []ddlCase{{
		name:  "add, change, modify, drop columns with positions",
		setup: []string{base},
		ddl: "ALTER TABLE t ADD COLUMN x INT FIRST, ADD y INT AFTER a, CHANGE b bb BIGINT NOT NULL, " +
			"MODIFY c VARCHAR(10) CHARACTER SET utf8mb4, DROP COLUMN x, ADD COLUMN (z1 INT, z2 INT)",
		want: map[string]string{"db.t": "(a int, y int null, bb bigint, c varchar utf8mb4_general_ci null, z1 int null, z2 int null) PRIMARY(a) u(bb,c)"},
	}, {
		name:  "CHANGE ... FIRST, MODIFY ... AFTER, RENAME COLUMN",
		setup: []string{base},
		ddl:   "ALTER TABLE t CHANGE COLUMN c cc CHAR(2) FIRST, MODIFY a BIGINT AFTER b, RENAME COLUMN b TO bb",
		want:  map[string]string{"db.t": "(cc char latin1_swedish_ci null, bb int null, a bigint) PRIMARY(a) u(bb,cc)"},
	}, {
		name:  "ADD COLUMN IF NOT EXISTS of an existing column",
		setup: []string{base},
		ddl:   "ALTER TABLE t ADD COLUMN IF NOT EXISTS b BIGINT, DROP COLUMN IF EXISTS nope, MODIFY COLUMN IF EXISTS nope2 INT",
		want:  map[string]string{"db.t": "(a int, b int null, c varchar latin1_swedish_ci null) PRIMARY(a) u(b,c)"},
	}, {
		name:    "ADD COLUMN of an existing column does not fit",
		setup:   []string{base},
		ddl:     "ALTER TABLE t ADD COLUMN b INT",
		wantErr: ErrMismatch,
		unknown: []string{"db.t"},
	}, {
		name:    "DROP COLUMN of a missing column does not fit",
		setup:   []string{base},
		ddl:     "ALTER TABLE t DROP COLUMN nope",
		wantErr: ErrMismatch,
		want:    map[string]string{"db.t": "(a int, b int null, c varchar latin1_swedish_ci null) PRIMARY(a) u(b,c)"},
		unknown: []string{"db.t"},
	}, {
		name:  "primary and unique keys",
		setup: []string{base},
		ddl:   "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (b), ADD UNIQUE KEY uc (c(2)), DROP INDEX u, ADD KEY k (a)",
		want:  map[string]string{"db.t": "(a int, b int, c varchar latin1_swedish_ci null) PRIMARY(b) uc(c:2)"},
	}, {
		name:  "dropping a key column shrinks the key; an empty key goes",
		setup: []string{base, "ALTER TABLE t ADD UNIQUE KEY uc (c)"},
		ddl:   "ALTER TABLE t DROP COLUMN c",
		want:  map[string]string{"db.t": "(a int, b int null) PRIMARY(a) u(b)"},
	}, {
		name:  "RENAME INDEX and DROP CONSTRAINT of a unique key",
		setup: []string{base, "ALTER TABLE t ADD UNIQUE uc (c)"},
		ddl:   "ALTER TABLE t RENAME INDEX u TO u2, DROP CONSTRAINT uc",
		want:  map[string]string{"db.t": "(a int, b int null, c varchar latin1_swedish_ci null) PRIMARY(a) u2(b,c)"},
	}, {
		name:  "add and drop foreign keys; generated names continue",
		setup: []string{parentP, "CREATE TABLE c (id INT PRIMARY KEY, p_id INT, q INT, FOREIGN KEY (p_id) REFERENCES p (id), FOREIGN KEY (q) REFERENCES p (id))"},
		ddl: "ALTER TABLE c DROP FOREIGN KEY c_ibfk_1, ADD FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE CASCADE, " +
			"ADD CONSTRAINT f FOREIGN KEY (q) REFERENCES p (code), DROP CONSTRAINT f, DROP FOREIGN KEY IF EXISTS nope",
		want: map[string]string{"db.c": "(id int, p_id int null, q int null) PRIMARY(id) c_ibfk_2(q)->`db`.`p`(id) c_ibfk_3(p_id)->`db`.`p`(id) del:CASCADE"},
	}, {
		name:  "renaming a parent's column renames it in its children",
		setup: []string{parentP, childC},
		ddl:   "ALTER TABLE p CHANGE id pid BIGINT NOT NULL",
		want: map[string]string{
			"db.p": "(pid bigint, code varchar latin1_swedish_ci) PRIMARY(pid) code(code)",
			"db.c": "(id int, p_id int null) PRIMARY(id) fk(p_id)->`db`.`p`(pid) del:CASCADE",
		},
		change: []string{"db.c", "db.p"},
	}, {
		name:  "RENAME TO another database; children and generated names follow",
		setup: []string{parentP, "CREATE TABLE c (id INT PRIMARY KEY, p_id INT, FOREIGN KEY (p_id) REFERENCES p (id))", "CREATE TABLE g (c_id INT REFERENCES c (id))"},
		ddl:   "ALTER TABLE c RENAME TO other.c2, ADD COLUMN x INT",
		want: map[string]string{
			"db.c":     "-",
			"other.c2": "(id int, p_id int null, x int null) PRIMARY(id) c2_ibfk_1(p_id)->`db`.`p`(id)",
			"db.g":     "(c_id int null) g_ibfk_1(c_id)->`other`.`c2`(id)",
		},
		change: []string{"db.c", "db.g", "other.c2"},
	}, {
		name:  "CONVERT TO CHARACTER SET",
		setup: []string{"CREATE TABLE t (a VARCHAR(3), b TEXT, c BLOB, d INT, e ENUM('x'), f TINYTEXT CHARSET utf8mb4)"},
		ddl:   "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
		want: map[string]string{"db.t": "{utf8mb4_unicode_ci}(a varchar utf8mb4_unicode_ci null, b mediumtext utf8mb4_unicode_ci null, " +
			"c blob binary null, d int null, e enum utf8mb4_unicode_ci null, f tinytext utf8mb4_unicode_ci null)"},
	}, {
		name:  "DEFAULT CHARACTER SET changes only the default",
		setup: []string{"CREATE TABLE t (a VARCHAR(3))"},
		ddl:   "ALTER TABLE t DEFAULT CHARACTER SET = cp1251, COLLATE cp1251_bin, ADD COLUMN b CHAR(1)",
		want:  map[string]string{"db.t": "{cp1251_bin}(a varchar latin1_swedish_ci null, b char cp1251_bin null)"},
	}, {
		name:    "ALTER of a table the catalog does not have",
		ddl:     "ALTER TABLE nosuch ADD COLUMN a INT, RENAME TO nosuch2",
		wantErr: ErrMismatch,
		unknown: []string{"db.nosuch2"},
	}, {
		name:   "ALTER TABLE IF EXISTS of a missing table",
		ddl:    "ALTER TABLE IF EXISTS nosuch ADD COLUMN a INT",
		want:   map[string]string{"db.nosuch": "-"},
		change: []string{},
	}, {
		name:  "MariaDB clauses",
		setup: []string{base},
		ddl: "ALTER ONLINE IGNORE TABLE IF EXISTS t WAIT 2 ADD COLUMN IF NOT EXISTS z INT DEFAULT (a + 1) INVISIBLE, " +
			"DROP FOREIGN KEY IF EXISTS nofk, ADD CONSTRAINT IF NOT EXISTS u UNIQUE (z), FORCE, ALGORITHM=INPLACE, LOCK=NONE",
		want: map[string]string{"db.t": "(a int, b int null, c varchar latin1_swedish_ci null, z int null) PRIMARY(a) u(b,c)"},
	}, {
		name:  "NOWAIT, ENGINE, COMMENT, ALTER COLUMN ... SET DEFAULT, partitioning change nothing",
		setup: []string{base},
		ddl:   "ALTER TABLE t NOWAIT ENGINE=InnoDB, COMMENT 'x', ALTER COLUMN b SET DEFAULT (1 + 2), ORDER BY a",
		want:  map[string]string{"db.t": "(a int, b int null, c varchar latin1_swedish_ci null) PRIMARY(a) u(b,c)"},
	}, {
		name:  "a period table altered keeps its WITHOUT OVERLAPS key",
		setup: []string{"CREATE TABLE t (id INT, s DATE, e DATE, PERIOD FOR p (s, e), UNIQUE (id, p WITHOUT OVERLAPS))"},
		ddl:   "ALTER TABLE t ADD COLUMN y INT FIRST, CHANGE COLUMN id pid INT NOT NULL",
		want:  map[string]string{"db.t": "(y int null, pid int, s date, e date) id(pid,period e,s)"},
	}, {
		name:  "a WITHOUT OVERLAPS key copied by CREATE TABLE LIKE",
		setup: []string{"CREATE TABLE t (id INT, s DATE, e DATE, PERIOD FOR p (s, e), PRIMARY KEY (id, p WITHOUT OVERLAPS))"},
		ddl:   "CREATE TABLE t2 LIKE t",
		want:  map[string]string{"db.t2": "(id int, s date, e date) PRIMARY(id,period e,s)"},
	}, {
		name:    "a period added by ALTER TABLE",
		setup:   []string{base},
		ddl:     "ALTER TABLE t ADD COLUMN s DATE, ADD COLUMN e DATE, ADD PERIOD FOR p (s, e)",
		wantErr: ErrUnparsed,
		want:    map[string]string{"db.t": "(a int, b int null, c varchar latin1_swedish_ci null) PRIMARY(a) u(b,c)"},
		unknown: []string{"db.t"},
	}, {
		name:    "a WITHOUT OVERLAPS key added by ALTER TABLE",
		setup:   []string{"CREATE TABLE t (id INT, s DATE, e DATE, PERIOD FOR p (s, e))"},
		ddl:     "ALTER TABLE t ADD PRIMARY KEY (id, p WITHOUT OVERLAPS)",
		wantErr: ErrUnparsed,
		want:    map[string]string{"db.t": "(id int null, s date, e date)"},
		unknown: []string{"db.t"},
	}, {
		name:    "system versioning added to a table",
		setup:   []string{base},
		ddl:     "ALTER TABLE t ADD SYSTEM VERSIONING",
		wantErr: ErrUnparsed,
		want:    map[string]string{"db.t": "(a int, b int null, c varchar latin1_swedish_ci null) PRIMARY(a) u(b,c)"},
		unknown: []string{"db.t"},
	}})
}

func TestApplyDDLRenameDropIndexDatabase(t *testing.T) {
	runDDLCases(t, []ddlCase{{
		name:  "RENAME TABLE swaps through a third name",
		setup: []string{"CREATE TABLE a (x INT PRIMARY KEY)", "CREATE TABLE b (y INT PRIMARY KEY)"},
		ddl:   "RENAME TABLE a TO tmp, b TO a, tmp TO b",
		want:  map[string]string{"db.a": "(y int) PRIMARY(y)", "db.b": "(x int) PRIMARY(x)", "db.tmp": "-"},
	}, {
		name:  "RENAME TABLE across databases moves children's references",
		setup: []string{parentP, childC},
		ddl:   "RENAME TABLE db.p TO other.p2",
		want: map[string]string{
			"other.p2": "(id int, code varchar latin1_swedish_ci) PRIMARY(id) code(code)",
			"db.c":     "(id int, p_id int null) PRIMARY(id) fk(p_id)->`other`.`p2`(id) del:CASCADE",
		},
		change: []string{"db.c", "db.p", "other.p2"},
	}, {
		name:    "RENAME TABLE of a table the catalog does not have",
		ddl:     "RENAME TABLE nosuch TO b",
		wantErr: ErrMismatch,
		unknown: []string{"db.b"},
	}, {
		name: "RENAME TABLE IF EXISTS of a missing table",
		ddl:  "RENAME TABLE IF EXISTS nosuch TO b",
	}, {
		name:  "DROP TABLE of several; a child's foreign key stays, dangling",
		setup: []string{parentP, childC, "CREATE TABLE x (a INT)"},
		ddl:   "DROP TABLE IF EXISTS p, x, nosuch /* generated by server */",
		want: map[string]string{"db.p": "-", "db.x": "-",
			"db.c": "(id int, p_id int null) PRIMARY(id) fk(p_id)->`db`.`p`(id) del:CASCADE"},
		change: []string{"db.p", "db.x"},
	}, {
		name:  "CREATE UNIQUE INDEX, CREATE INDEX, DROP INDEX",
		setup: []string{"CREATE TABLE t (a INT, b VARCHAR(10), UNIQUE KEY old (a))", "CREATE INDEX k ON t (b)"},
		ddl:   "CREATE UNIQUE INDEX IF NOT EXISTS u ON t (b(4), a) WAIT 3",
		want:  map[string]string{"db.t": "(a int null, b varchar latin1_swedish_ci null) old(a) u(b:4,a)"},
	}, {
		name:  "DROP INDEX",
		setup: []string{"CREATE TABLE t (a INT PRIMARY KEY, b INT UNIQUE)"},
		ddl:   "DROP INDEX b ON t",
		want:  map[string]string{"db.t": "(a int, b int null) PRIMARY(a)"},
	}, {
		name:  "DROP INDEX `PRIMARY`",
		setup: []string{"CREATE TABLE t (a INT PRIMARY KEY, b INT UNIQUE)"},
		ddl:   "DROP INDEX `PRIMARY` ON t",
		want:  map[string]string{"db.t": "(a int, b int null) b(b)"},
	}, {
		name:    "CREATE INDEX on a table the catalog does not have",
		ddl:     "CREATE INDEX k ON nosuch (a)",
		wantErr: ErrMismatch,
		unknown: []string{"db.nosuch"},
	}, {
		name:   "DROP DATABASE drops its tables and unknown marks",
		setup:  []string{"CREATE DATABASE other", "CREATE TABLE other.t (a INT)", "!ALTER TABLE other.nosuch ADD x INT"},
		ddl:    "DROP DATABASE other",
		want:   map[string]string{"other.t": "-"},
		change: []string{"other.nosuch", "other.t"},
	}, {
		name:  "a database's character set is inherited",
		setup: []string{"CREATE DATABASE cs CHARACTER SET cp1251", "CREATE DATABASE IF NOT EXISTS cs CHARACTER SET utf8mb4", "CREATE TABLE cs.t1 (a CHAR(1))"},
		ddl:   "ALTER DATABASE cs COLLATE cp1251_bin",
		want:  map[string]string{"cs.t1": "{cp1251_general_ci}(a char cp1251_general_ci null)"},
	}})
}

func TestApplyDDLNoOps(t *testing.T) {
	for _, q := range []string{
		"GRANT SELECT ON db.* TO 'u'@'%'",
		"CREATE USER u IDENTIFIED BY 'x'",
		"SET NAMES utf8mb4",
		"SET @@SESSION.sql_mode = 'ANSI_QUOTES'",
		"INSERT INTO t VALUES (1)",
		"DELETE FROM t WHERE a = 1 RETURNING a",
		"BEGIN",
		"COMMIT",
		"XA START 'x'",
		"CREATE VIEW v AS SELECT * FROM t",
		"CREATE OR REPLACE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW v AS SELECT 1",
		"DROP VIEW IF EXISTS v",
		"CREATE DEFINER=`root`@`localhost` TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END",
		"CREATE PROCEDURE pr() BEGIN CREATE TABLE x (a INT); DROP TABLE t; END",
		"CREATE FUNCTION f() RETURNS INT RETURN 1",
		"CREATE SEQUENCE s START WITH 1",
		"CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t",
		"TRUNCATE TABLE t",
		"TRUNCATE t",
		"ANALYZE TABLE t",
		"OPTIMIZE TABLE t",
		"CREATE TEMPORARY TABLE tmp LIKE t",
		"DROP TEMPORARY TABLE IF EXISTS t",
		"RENAME USER a TO b",
		"/* just a comment */",
		"",
		"FLUSH TABLES",
		"(SELECT 1)",
	} {
		c := NewCatalog()
		if _, err := c.ApplyDDL("db", "CREATE TABLE t (a INT PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		before := describe(c.Table("db", "t"))
		ch, err := c.ApplyDDL("db", q)
		if err != nil || !ch.Empty() {
			t.Errorf("ApplyDDL(%q) = %+v, %v; want no change", q, ch, err)
		}
		if tb := c.Table("db", "t"); tb == nil || describe(tb) != before || len(c.Tables()) != 1 || len(c.UnknownTables()) != 0 {
			t.Errorf("ApplyDDL(%q) changed the catalog: %v, unknown %v", q, c.Tables(), c.UnknownTables())
		}
	}
}

func TestApplyDDLUnparsed(t *testing.T) {
	setup := []string{"CREATE TABLE t1 (a INT)", "CREATE TABLE t2 (a INT)", "CREATE TABLE other.t3 (a INT)"}
	runDDLCases(t, []ddlCase{{
		name:    "the table after ALTER TABLE",
		setup:   setup,
		ddl:     "ALTER TABLE t1 FROBNICATE",
		wantErr: ErrUnparsed,
		want:    map[string]string{"db.t1": "(a int null)"},
		unknown: []string{"db.t1"},
		change:  []string{"db.t1"},
	}, {
		name:    "a new table, a qualified one and a referenced one",
		setup:   setup,
		ddl:     "CREATE TABLE newt (a INT,, b INT) -- mentions t2\n, other.t3",
		wantErr: ErrUnparsed,
		unknown: []string{"db.newt", "other.t3"},
	}, {
		name:    "known tables named anywhere, and every name of a list",
		setup:   setup,
		ddl:     "DROP TABLE `t1`, nosuch FROB (x) JOIN t2",
		wantErr: ErrUnparsed,
		unknown: []string{"db.nosuch", "db.t1", "db.t2"},
	}, {
		name:    "no name found: every table of the current database",
		setup:   setup,
		ddl:     "FROBNICATE EVERYTHING NOW",
		wantErr: ErrUnparsed,
		unknown: []string{"db.t1", "db.t2"},
	}, {
		name:    "unbalanced quotes",
		setup:   setup,
		ddl:     "ALTER TABLE t2 ADD COLUMN `x INT",
		wantErr: ErrUnparsed,
		unknown: []string{"db.t2"},
	}})
}

func TestApplyDDLUnknownClearedByCreateAndDrop(t *testing.T) {
	c := NewCatalog()
	if _, err := c.ApplyDDL("db", "ALTER TABLE t FROB"); !errors.Is(err, ErrUnparsed) {
		t.Fatalf("err = %v", err)
	}
	if !c.Unknown("db", "t") {
		t.Fatal("t not Unknown")
	}
	if _, err := c.ApplyDDL("db", "CREATE TABLE IF NOT EXISTS t (a INT)"); err != nil || !c.Unknown("db", "t") {
		t.Fatalf("IF NOT EXISTS on an Unknown table: %v, unknown=%v", err, c.Unknown("db", "t"))
	}
	if _, err := c.ApplyDDL("db", "CREATE OR REPLACE TABLE t (a INT)"); err != nil || c.Unknown("db", "t") {
		t.Fatalf("CREATE OR REPLACE: %v, unknown=%v", err, c.Unknown("db", "t"))
	}
	c.MarkUnknown("db", "t")
	if _, err := c.ApplyDDL("db", "ALTER TABLE t ADD b INT"); err != nil || !c.Unknown("db", "t") {
		t.Fatalf("ALTER of an Unknown table: %v, unknown=%v", err, c.Unknown("db", "t"))
	}
	if _, err := c.ApplyDDL("db", "RENAME TABLE t TO u"); err != nil || c.Unknown("db", "t") || !c.Unknown("db", "u") {
		t.Fatalf("RENAME of an Unknown table: %v, unknown=%v", err, c.UnknownTables())
	}
	if _, err := c.ApplyDDL("db", "DROP TABLE u"); err != nil || len(c.UnknownTables()) != 0 || len(c.Tables()) != 0 {
		t.Fatalf("DROP of an Unknown table: %v, unknown=%v", err, c.UnknownTables())
	}
}

func TestApplyDDLServerCollation(t *testing.T) {
	c := NewCatalog()
	c.SetServerCollation("utf8mb4_unicode_ci")
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (a VARCHAR(1))", "CREATE TABLE nodb.t (a VARCHAR(1) CHARSET utf8mb4)"} {
		if _, err := c.ApplyDDL("", q); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := c.Table("d", "t").Columns[0].Collation, "utf8mb4_unicode_ci"; got != want {
		t.Errorf("collation from server default = %s, want %s", got, want)
	}
	if s, _ := c.Schema("d"); s != (Schema{"d", "utf8mb4", "utf8mb4_unicode_ci"}) {
		t.Errorf("schema = %+v", s)
	}
	c.SetFlavor(MySQL)
	if _, err := c.ApplyDDL("", "CREATE TABLE nodb.t2 (a VARCHAR(1) CHARSET utf8mb4, j JSON, r INT REFERENCES t (a))"); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(c.Table("nodb", "t2")), "{utf8mb4_unicode_ci}(a varchar utf8mb4_0900_ai_ci null, j json null, r int null)"; got != want {
		t.Errorf("MySQL flavor: %s, want %s", got, want)
	}
	if got := c.Table("nodb", "t").Columns[0].Collation; got != "utf8mb4_general_ci" {
		t.Errorf("MariaDB default collation = %s", got)
	}
	if !reflect.DeepEqual(c.CascadeReach(TableName{"d", "t"}), []TableName(nil)) {
		t.Error("CascadeReach of a table without children is not empty")
	}
}

// TestRewrittenDefaults: a statement the parser needs rewritten (here
// for its INVISIBLE column and UUID type) keeps what the catalog reads of
// each default: NULL or not, and whether it calls CONNECTION_ID().
func TestRewrittenDefaults(t *testing.T) {
	c := NewCatalog()
	for _, q := range []string{
		"CREATE DATABASE db",
		"CREATE TABLE db.t (id INT PRIMARY KEY, u UUID, i INT INVISIBLE, conn BIGINT DEFAULT (CONNECTION_ID() + 1), " +
			"five INT DEFAULT 5, none INT DEFAULT NULL, bare INT, ts DATETIME DEFAULT current_timestamp())",
		"ALTER TABLE db.t ADD COLUMN j INT INVISIBLE, ALTER COLUMN five SET DEFAULT NULL, ALTER COLUMN none SET DEFAULT 7",
	} {
		if _, err := c.ApplyDDL("", q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tb := c.Table("db", "t")
	for _, want := range []struct {
		col                       string
		connectionID, defaultNull bool
	}{
		{"conn", true, false}, {"five", false, true}, {"none", false, false}, {"bare", false, true}, {"ts", false, false}, {"u", false, true},
	} {
		col := tb.Columns[tb.ColumnIndex(want.col)]
		if col.ConnectionID != want.connectionID || col.DefaultNull != want.defaultNull {
			t.Errorf("%s: ConnectionID %v, DefaultNull %v; want %v, %v", want.col, col.ConnectionID, col.DefaultNull, want.connectionID, want.defaultNull)
		}
	}
}
