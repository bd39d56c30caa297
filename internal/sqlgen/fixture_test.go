package sqlgen

import (
	"fmt"
	"strings"
)

// The schema and workload of TestServerRoundTrip: every MariaDB column type
// at its limits, keyless and composite-key tables, and identifiers that
// need quoting. Phases run on the source one after the other, each with its
// own session settings; the target gets the rows of each phase and must
// then hold the same bytes.

const db = "sqlgen"

var ddl = []string{
	"CREATE DATABASE " + db,
	`CREATE TABLE sqlgen.types (
		id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
		mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
		d65 DECIMAL(65,30), d10 DECIMAL(10,0), d9 DECIMAL(9,9), d18u DECIMAL(18,4) UNSIGNED,
		f FLOAT, dbl DOUBLE,
		b1 BIT(1), b7 BIT(7), b64 BIT(64),
		dt DATE, tm TIME(6), tm2 TIME(2), tm0 TIME, dtm DATETIME(6), dtm3 DATETIME(3), dtm0 DATETIME,
		ts TIMESTAMP(6) NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL, ts0 TIMESTAMP NULL DEFAULT NULL,
		y YEAR,
		ch CHAR(10) CHARACTER SET utf8mb4, vc VARCHAR(300) CHARACTER SET utf8mb4,
		tx TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
		c3 VARCHAR(20) CHARACTER SET utf8mb3, asc7 VARCHAR(20) CHARACTER SET ascii,
		lch CHAR(10) CHARACTER SET latin1, lvc VARCHAR(100) CHARACTER SET latin1 COLLATE latin1_german2_ci,
		ltx MEDIUMTEXT CHARACTER SET latin1,
		bn BINARY(8), vb VARBINARY(64), bl BLOB, lbl LONGBLOB,
		en ENUM('a','b','c'), st SET('x','y','z'),
		js JSON,
		geo GEOMETRY, pt POINT,
		u UUID, i6 INET6, i4 INET4,
		gv BIGINT AS (ti * 2) VIRTUAL,
		gs VARCHAR(400) AS (CONCAT(IFNULL(vc, ''), '!')) STORED
	)`,
	// Keyless, with an index on a text column and rows that only bytes
	// tell apart.
	`CREATE TABLE sqlgen.nokey (
		i INT, f FLOAT, dbl DOUBLE, d DECIMAL(65,30), c VARCHAR(20), l VARCHAR(20) CHARACTER SET latin1,
		bn BINARY(4), b64 BIT(64), en ENUM('a','b'), st SET('x','y'), y YEAR, ts TIMESTAMP(6) NULL DEFAULT NULL,
		dtm DATETIME(6), js JSON, tx TEXT, u UUID, biu BIGINT UNSIGNED, g INT AS (i * 2) VIRTUAL,
		KEY (c)
	)`,
	// Composite primary key of an int, latin1 text in a collation that is
	// not latin1's default (comparing it with latin1_swedish_ci is an
	// "illegal mix of collations") and padded binary.
	`CREATE TABLE sqlgen.comp (
		a INT NOT NULL, l VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_german2_ci NOT NULL, bn BINARY(4) NOT NULL, v VARCHAR(20),
		PRIMARY KEY (a, l, bn)
	)`,
	// No primary key; the first unique key is nullable, the second is not.
	`CREATE TABLE sqlgen.uk (x INT NULL, u VARCHAR(20) NOT NULL, v TEXT, UNIQUE KEY ux (x), UNIQUE KEY uu (u))`,
	`CREATE TABLE sqlgen.uuidpk (u UUID NOT NULL PRIMARY KEY, v INT)`,
	"CREATE TABLE sqlgen.`we``ird tåble` (`co``l ü` INT PRIMARY KEY, `?'\"#-- \\` VARCHAR(20) CHARACTER SET latin1, `ü` TEXT)",
}

// tables are compared after every phase.
var tables = []string{"types", "nokey", "comp", "uk", "uuidpk", "we`ird tåble"}

// typesColumns lists the writable columns of types, for INSERTs.
const typesColumns = `id, ti, tiu, si, siu, mi, miu, i, iu, bi, biu, d65, d10, d9, d18u, f, dbl, b1, b7, b64,
	dt, tm, tm2, tm0, dtm, dtm3, dtm0, ts, ts3, ts0, y, ch, vc, tx, c3, asc7, lch, lvc, ltx, bn, vb, bl, lbl,
	en, st, js, geo, pt, u, i6, i4`

// hexBytes returns an SQL hex literal of n bytes cycling through all 256
// values, starting at start.
func hexBytes(n, start int) string {
	var b strings.Builder
	b.WriteString("X'")
	for i := range n {
		fmt.Fprintf(&b, "%02x", byte(start+i*7))
	}
	b.WriteString("'")
	return b.String()
}

// typesRows are the rows of types: limits, zero values, NULLs and oddities.
func typesRows() []string {
	maxRow := []string{
		"1", "127", "255", "32767", "65535", "8388607", "16777215", "2147483647", "4294967295",
		"9223372036854775807", "18446744073709551615",
		"99999999999999999999999999999999999.999999999999999999999999999999", "9999999999", "0.999999999", "99999999999999.9999",
		"3.4028234e38", "1.7976931348623157e308",
		"b'1'", "b'1111111'", "0xFFFFFFFFFFFFFFFF",
		"'9999-12-31'", "'838:59:59.999999'", "'838:59:59.99'", "'838:59:59'",
		"'9999-12-31 23:59:59.999999'", "'9999-12-31 23:59:59.999'", "'9999-12-31 23:59:59'",
		"'2038-01-19 03:14:07.999999'", "'2038-01-19 03:14:07.999'", "'2038-01-19 03:14:07'",
		"2155",
		"REPEAT('😀', 10)", "REPEAT('é😀', 150)", "REPEAT('ü', 30000)", "REPEAT('€', 20)", "'~`!@#$%^&*()_+{}|:\"<>?'",
		"REPEAT(_latin1 X'FF', 10)", "REPEAT(_latin1 X'DF', 100)", "REPEAT(_latin1 X'E9', 100000)",
		"0xFFFFFFFFFFFFFFFF", hexBytes(64, 0), hexBytes(60000, 3), hexBytes(900000, 5),
		"'c'", "'x,y,z'",
		`'{"k": [1, 2.5, -0.0, 1e308, "é😀\\u0000", null, true, {"n": {}}]}'`,
		"ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0),(1 1,2 1,2 2,1 1))')", "POINT(1.5, -2.25)",
		"'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'", "'255.255.255.255'",
	}
	minRow := []string{
		"2", "-128", "0", "-32768", "0", "-8388608", "0", "-2147483648", "0", "-9223372036854775808", "0",
		"-99999999999999999999999999999999999.999999999999999999999999999999", "-9999999999", "-0.999999999", "0",
		"-3.4028234e38", "-1.7976931348623157e308",
		"b'0'", "b'0'", "0",
		"'1000-01-01'", "'-838:59:59.999999'", "'-838:59:59.99'", "'-838:59:59'",
		"'1000-01-01 00:00:00.000000'", "'1000-01-01 00:00:00.000'", "'1000-01-01 00:00:00'",
		"'1970-01-01 00:00:01.000000'", "'1970-01-01 00:00:01.001'", "'1970-01-01 00:00:01'",
		"1901",
		"'a'", "'a'", "'a'", "'a'", "'a'", "_latin1 X'E9'", "_latin1 X'E920'", "'x'",
		"X'00'", "X'00'", "X'00'", "X''",
		"'a'", "'x'", "'[]'", "ST_GeomFromText('POINT(0 0)')", "POINT(0, 0)",
		"'00000000-0000-0000-0000-000000000001'", "'::1'", "'0.0.0.1'",
	}
	zeroRow := []string{
		"0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0",
		"0", "0", "0", "0", "0", "0", "0", "0", "0",
		"'0000-00-00'", "'00:00:00'", "'00:00:00'", "'00:00:00'",
		"'0000-00-00 00:00:00.000000'", "'0000-00-00 00:00:00'", "'0000-00-00 00:00:00'",
		"'0000-00-00 00:00:00'", "'0000-00-00 00:00:00'", "'0000-00-00 00:00:00'",
		"0",
		"''", "''", "''", "''", "''", "''", "''", "''",
		"''", "''", "''", "''",
		"''", "''", `'""'`, "NULL", "NULL",
		"'00000000-0000-0000-0000-000000000000'", "'::'", "'0.0.0.0'",
	}
	oddRow := []string{
		"11", "-1", "128", "-1", "32768", "-1", "8388608", "-1", "2147483648", "-1", "9223372036854775808",
		"-0.000000000000000000000000000001", "-1", "0.000000001", "0.0001",
		"0.1", "0.1",
		"1", "b'1010101'", "0x8000000000000001",
		"'2020-02-00'", "'-00:00:00.000001'", "'-00:00:01.10'", "'-00:00:01'",
		"'2020-00-00 00:00:00.000001'", "'2024-02-29 12:34:56.789'", "'2000-01-01 00:00:00'",
		"'2024-03-31 01:30:00.123456'", "'2001-09-09 01:46:40.5'", "'2024-10-27 02:30:00'",
		"2000",
		`'q''"\\%_ '`, `'line\nbreak\ttab\0nul\Zend  '`, "''", "'ü'", `'\\'`,
		"'e'", "CONCAT(_latin1 X'00E9', '\n', _latin1 X'FF')", "CONCAT('a', CHAR(0), 'b')",
		"X'6100200000'", "X'20'", "X'FF00'", "X'00'",
		"'b'", "'y,z'", `'{"a": "\\"quoted\\" \\\\ back"}'`,
		"ST_GeomFromText('LINESTRING(0 0,1 1,2 1)')", "POINT(1e300, -1e-300)",
		"'12345678-1234-1234-1234-123456789a00'", "'1::'", "'10.0.0.0'",
	}
	smallRow := []string{
		"12", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
		"0.000000000000000000000000000001", "1", "0.5", "1",
		"1.17549435e-38", "2.2250738585072014e-308",
		"1", "1", "1",
		"'2024-01-01'", "'00:00:00.5'", "'00:00:00.5'", "'00:00:01'",
		"'2024-01-01 00:00:00.5'", "'2024-01-01 00:00:00.5'", "'2024-01-01 00:00:01'",
		"'2024-01-01 00:00:00.5'", "'2024-01-01 00:00:00.5'", "'2024-01-01 00:00:01'",
		"1999",
		"'x'", "'x'", "'x'", "'x'", "'x'", "'x'", "'x'", "'x'",
		"X'01'", "X'01'", "X'01'", "X'01'",
		"'a'", "'z'", "'1'", "ST_GeomFromText('MULTIPOINT(1 1,2 2)')", "POINT(-1, 1)",
		"'00000000-0000-0000-0000-000000000100'", "'::100'", "'0.0.1.0'",
	}
	var out []string
	for _, r := range [][]string{maxRow, minRow, zeroRow, oddRow, smallRow} {
		out = append(out, "("+strings.Join(r, ", ")+")")
	}
	return out
}

// phase is a step of the workload: statements run on one source session.
type phase struct {
	name  string
	stmts []string
}

// session settings of every phase on the source.
const sourceSession = "SET time_zone='+00:00', sql_mode='NO_AUTO_VALUE_ON_ZERO'"

func phases() []phase {
	weird := "sqlgen.`we``ird tåble`"
	weirdCol := "`?'\"#-- \\`"
	return []phase{{
		name: "full images",
		stmts: []string{
			// One INSERT of several events (the big rows do not fit in one),
			// merged on the target up to the size cap, which the first row
			// alone exceeds: the target gets two INSERTs.
			"INSERT INTO sqlgen.types (" + typesColumns + ") VALUES " + strings.Join(typesRows(), ", "),
			"INSERT INTO sqlgen.types (id) VALUES (10)",
			"UPDATE sqlgen.types SET tiu = tiu - 1, biu = biu - 1, d65 = -d65, f = f / 3, dbl = dbl / 3 WHERE id = 1",
			"UPDATE sqlgen.types SET f = 1.4e-45, dbl = 4.9e-324, b64 = b64 | 0x8000000000000000 WHERE id = 12",
			"UPDATE sqlgen.types SET ch = 'z', lvc = _latin1 X'FFFE', bn = X'01', u = '00000000-0000-0000-0000-000000000000', js = '{}' WHERE id = 11",
			"UPDATE sqlgen.types SET id = 100 WHERE id = 11",
			"UPDATE sqlgen.types SET tx = CONCAT(IFNULL(tx, ''), 'é'), ltx = CONCAT(IFNULL(ltx, ''), _latin1 X'FF') WHERE id IN (0, 1, 2, 10)",
			"UPDATE sqlgen.types SET " + nullAll() + " WHERE id = 2",
			"UPDATE sqlgen.types SET ti = 5, en = 'b', st = 'x,z', y = 2024, bl = X'00', geo = POINT(3, 4), i6 = '::', ts = '2000-01-01 00:00:00.000001' WHERE id = 10",
			"BEGIN",
			"INSERT INTO sqlgen.types (id, vc) VALUES (20, 'short-lived'), (21, 'twenty-one')",
			"UPDATE sqlgen.types SET vc = 'changed' WHERE id = 20",
			"DELETE FROM sqlgen.types WHERE id = 20",
			"COMMIT",
			"DELETE FROM sqlgen.types WHERE id IN (12, 21)",
			// ENUM and SET values outside the list (non-strict: index 0).
			"INSERT INTO sqlgen.types (id, en, st) VALUES (13, 'zz', 'x,y')",

			// Keyless rows: duplicates, and rows equal under the collation.
			"INSERT INTO sqlgen.nokey (i, f, dbl, d, c, l, bn, b64, en, st, y, ts, dtm, js, tx, u, biu) VALUES " +
				"(1, 0.1, 0.1, '1.000000000000000000000000000001', 'dup', 'e', X'61', 0xFFFFFFFFFFFFFFFF, 'a', 'x,y', 2000, '2020-01-01 00:00:00.000001', '2020-01-01 00:00:00', '[1]', 'tx', '00000000-0000-0000-0000-000000000000', 18446744073709551615), " +
				"(1, 0.1, 0.1, '1.000000000000000000000000000001', 'dup', 'e', X'61', 0xFFFFFFFFFFFFFFFF, 'a', 'x,y', 2000, '2020-01-01 00:00:00.000001', '2020-01-01 00:00:00', '[1]', 'tx', '00000000-0000-0000-0000-000000000000', 18446744073709551615), " +
				"(2, 0.1, 0.1, '1.000000000000000000000000000002', 'a', 'e', X'61', 1, 'b', 'y', 2001, NULL, '2020-01-01 00:00:00', '[2]', 'tx', NULL, 1), " +
				"(2, 0.1, 0.1, '1.000000000000000000000000000002', 'A', 'e', X'61', 1, 'b', 'y', 2001, NULL, '2020-01-01 00:00:00', '[2]', 'tx', NULL, 1), " +
				"(2, 0.1, 0.1, '1.000000000000000000000000000002', 'a ', 'e', X'61', 1, 'b', 'y', 2001, NULL, '2020-01-01 00:00:00', '[2]', 'tx', NULL, 1), " +
				"(3, 0.3, 0.3, '3', 'l', 'e', X'6100', 3, 'a', '', 0, NULL, '0000-00-00 00:00:00', NULL, NULL, NULL, 3), " +
				"(3, 0.3, 0.3, '3', 'l', _latin1 X'E9', X'6100', 3, 'a', '', 0, NULL, '0000-00-00 00:00:00', NULL, NULL, NULL, 3), " +
				"(3, 0.3, 0.3, '3', 'l', 'E', X'6100', 3, 'a', '', 0, NULL, '0000-00-00 00:00:00', NULL, NULL, NULL, 3), " +
				"(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), " +
				"(4, 1e-45, 1.7976931348623157e308, '-0.5', 'z', 'z', X'00000000', 0, 'b', 'x', 2155, '2038-01-19 03:14:07.999999', '9999-12-31 23:59:59.999999', '{}', 'z', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 0)",
			"UPDATE sqlgen.nokey SET i = 102 WHERE c = 'A' COLLATE utf8mb4_bin",
			"UPDATE sqlgen.nokey SET tx = 'space' WHERE c = 'a ' COLLATE utf8mb4_bin",
			"DELETE FROM sqlgen.nokey WHERE l = _latin1 X'E9' COLLATE latin1_bin",
			"UPDATE sqlgen.nokey SET d = '1.000000000000000000000000000003' WHERE i = 1 LIMIT 1",
			"DELETE FROM sqlgen.nokey WHERE i = 1 LIMIT 1",
			"UPDATE sqlgen.nokey SET biu = 5 WHERE biu = 18446744073709551615",
			"UPDATE sqlgen.nokey SET f = 0.25 WHERE i IS NULL",
			"UPDATE sqlgen.nokey SET js = '[4]' WHERE i = 4",

			"INSERT INTO sqlgen.comp VALUES (1, _latin1 X'E9', X'61', 'v'), (1, 'x', X'6100', 'v'), (2, _latin1 X'FF', X'00', NULL), (3, 'a', X'61626364', 'v')",
			"UPDATE sqlgen.comp SET bn = X'62', v = 'w' WHERE a = 3",
			"DELETE FROM sqlgen.comp WHERE a IN (1, 2)",

			"INSERT INTO sqlgen.uk VALUES (NULL, 'k1', 'v'), (1, 'k2', 'v'), (2, 'K3 ', NULL)",
			"UPDATE sqlgen.uk SET v = 'w' WHERE u = 'k1'",
			"UPDATE sqlgen.uk SET u = 'k4' WHERE x = 1",
			"DELETE FROM sqlgen.uk WHERE x IS NULL OR x = 2",

			"INSERT INTO sqlgen.uuidpk VALUES ('00000000-0000-0000-0000-000000000000', 1), ('12345678-1234-1234-1234-123456789a00', 2), ('ffffffff-0000-0000-0000-000000000000', 3)",
			"UPDATE sqlgen.uuidpk SET v = v + 10",
			"DELETE FROM sqlgen.uuidpk WHERE v = 13",

			"INSERT INTO " + weird + " VALUES (1, 'x', 'ü'), (2, _latin1 X'FF', NULL), (3, 'z', '?')",
			"UPDATE " + weird + " SET " + weirdCol + " = _latin1 X'E9', `ü` = '?' WHERE `co``l ü` = 1",
			"DELETE FROM " + weird + " WHERE `co``l ü` IN (2, 3)",
		},
	}, {
		name: "minimal images",
		stmts: []string{
			"SET SESSION binlog_row_image = MINIMAL",
			"INSERT INTO sqlgen.types (id, i, vc) VALUES (30, 5, 'x'), (31, 6, 'y')",
			"UPDATE sqlgen.types SET vc = 'minimal' WHERE id = 30",
			"UPDATE sqlgen.types SET ti = 3, lvc = _latin1 X'E9' WHERE id = 30",
			// The before image lacks vc: NULL before (absent) and NULL
			// after must not look unchanged.
			"UPDATE sqlgen.types SET vc = NULL, i = 7 WHERE id = 31",
			"UPDATE sqlgen.types SET id = 32 WHERE id = 31",
			"DELETE FROM sqlgen.types WHERE id = 30",
			"UPDATE sqlgen.types SET i = i + 1 WHERE id IN (1, 2)",
			"UPDATE sqlgen.nokey SET i = 103 WHERE c = 'a ' COLLATE utf8mb4_bin",
			"DELETE FROM sqlgen.nokey WHERE c = 'a' COLLATE utf8mb4_bin",
			"INSERT INTO sqlgen.comp VALUES (5, _latin1 X'E9', X'00', 'm')",
			"UPDATE sqlgen.comp SET v = 'n' WHERE a = 5",
			"UPDATE sqlgen.uk SET v = 'minimal' WHERE u = 'k1'",
			"DELETE FROM sqlgen.uk WHERE u = 'k1'",
			"UPDATE " + weird + " SET `ü` = 'minimal' WHERE `co``l ü` = 1",
		},
	}, {
		name: "noblob images",
		stmts: []string{
			"SET SESSION binlog_row_image = NOBLOB",
			"UPDATE sqlgen.types SET i = i + 1, bl = X'0102' WHERE id IN (0, 1)",
			"UPDATE sqlgen.types SET i = i + 1 WHERE id = 100",
			"UPDATE sqlgen.nokey SET i = 5 WHERE i = 4",
			"DELETE FROM sqlgen.types WHERE id = 13",
		},
	}, {
		// Table maps without names or signedness (MariaDB's default,
		// binlog_row_metadata=NO_LOG; MINIMAL keeps the signedness): UNSIGNED
		// values in the top half of their range are decoded as negative.
		name: "no metadata",
		stmts: []string{
			"INSERT INTO sqlgen.types (id, tiu, siu, miu, iu, biu, d18u) VALUES (40, 255, 65535, 16777215, 4294967295, 18446744073709551615, 99999999999999.9999), (41, 128, 32768, 8388608, 2147483648, 9223372036854775808, 0)",
			"UPDATE sqlgen.types SET tiu = 200, siu = 40000, miu = 9000000, iu = 3000000000, biu = 10000000000000000000 WHERE id = 41",
			"UPDATE sqlgen.types SET vc = 'key is unsigned max' WHERE biu = 18446744073709551615",
			"INSERT INTO sqlgen.nokey (i, biu) VALUES (50, 18446744073709551615), (50, 18446744073709551614)",
			"UPDATE sqlgen.nokey SET i = 51 WHERE biu = 18446744073709551615",
			"DELETE FROM sqlgen.nokey WHERE biu = 18446744073709551614",
			"DELETE FROM sqlgen.types WHERE id = 40",
			"UPDATE " + weird + " SET `ü` = 'no names' WHERE `co``l ü` = 1",
		},
	}}
}

// nullAll sets every nullable writable column of types to NULL.
func nullAll() string {
	var sets []string
	for _, c := range strings.Split(typesColumns, ",") {
		if c = strings.TrimSpace(c); c != "id" {
			sets = append(sets, c+" = NULL")
		}
	}
	return strings.Join(sets, ", ")
}
