package schema

import (
	"strings"
	"testing"
)

// fuzzSeeds are statements from the other tests, and fragments the
// rewriting handles.
func fuzzSeeds() []string {
	seeds := append([]string{}, liveDDL...)
	seeds = append(seeds,
		parentP, childC,
		"ALTER TABLE c CHANGE p_id p INT FIRST, RENAME TO d.c2, DROP PRIMARY KEY",
		"ALTER ONLINE TABLE IF EXISTS p WAIT 1 ADD COLUMN IF NOT EXISTS x UUID DEFAULT uuid() INVISIBLE, FORCE",
		"CREATE OR REPLACE TABLE p (a POINT NOT NULL SRID 0, b INT AS (1) PERSISTENT, KEY (b) NOT IGNORED) `x`=1",
		"CREATE TABLE t (a INT) WITH SYSTEM VERSIONING",
		"RENAME TABLE p TO q, q TO p, c TO `x``y`.`z`",
		"DROP TABLE IF EXISTS p, c",
		"DROP DATABASE db",
		"/*!40101 SET NAMES utf8 */",
		"DELIMITER ;;\nCREATE TRIGGER x BEFORE INSERT ON p FOR EACH ROW BEGIN END;;\nDELIMITER ;\n",
		"CREATE TABLE t (a INT DEFAULT (((1))), b VARCHAR(3) DEFAULT _latin1'x' CHECK ((b)))",
		"ALTER TABLE p ALTER COLUMN code SET DEFAULT -.5, ADD CONSTRAINT IF NOT EXISTS u UNIQUE (code)",
		"CREATE TABLE `a`.`b` LIKE `c`",
		"ALTER TABLE p CONVERT TO CHARACTER SET binary",
		"CREATE TABLE t (",
		"ALTER TABLE t DEFAULT",
		"CREATE TABLE t (a INT) AS (",
	)
	return seeds
}

// FuzzApplyDDL checks that ApplyDDL never panics and always leaves a
// consistent catalog, whatever the statement.
func FuzzApplyDDL(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		c := NewCatalog()
		for _, s := range []string{parentP, childC, "CREATE TABLE gc (c_id INT REFERENCES c (id) ON DELETE SET NULL)"} {
			if _, err := c.ApplyDDL("db", s); err != nil {
				t.Fatal(err)
			}
		}
		_, _ = c.ApplyDDL("db", q)
		checkInvariants(t, c)
		_, _ = c.ApplyDDL("db", q) // a second time: on what it made of the first
		checkInvariants(t, c)
	})
}

// FuzzParse checks that Parse never panics and gives a consistent catalog.
func FuzzParse(f *testing.F) {
	// Small dumps: the fuzzer mutates short inputs far better.
	f.Add("/*M!999999\\- enable the sandbox mode */\n-- Host: h    Database: d\nCREATE TABLE t (a INT PRIMARY KEY);\n" +
		"/*!40101 SET NAMES utf8mb4 */;\nUSE `x``y`;\nDROP TABLE IF EXISTS t;\nCREATE TABLE t (a INT, UNIQUE (a)) /*!50100 PARTITION BY HASH (a) */;\n")
	f.Add("DELIMITER ;;\n/*!50003 CREATE*/ /*!50003 TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET @a=';'; END */;;\n" +
		"DELIMITER ;\n# comment\nCREATE TABLE p (id INT PRIMARY KEY); -- c\nCREATE TABLE c (p INT REFERENCES p (id) ON DELETE CASCADE);\n")
	for _, s := range fuzzSeeds()[:20] {
		f.Add(s + ";\n" + parentP + ";")
	}
	f.Fuzz(func(t *testing.T, dump string) {
		c, _, err := Parse(strings.NewReader(dump), "fuzz.sql")
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, c)
	})
}
