package workload

import (
	"context"
	"database/sql"
)

// typesTable has a column of every MariaDB type paraply must carry exactly.
const typesTable = "CREATE TABLE w_types.t (" +
	"id INT PRIMARY KEY," +
	"ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED," +
	"i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED," +
	"d DECIMAL(65,30), du DECIMAL(10,2) UNSIGNED, f FLOAT, db DOUBLE," +
	"b1 BIT(1), b64 BIT(64)," +
	"dt DATE, tm TIME(6), dtm DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, y YEAR," +
	"c CHAR(10), vc VARCHAR(100), tx TEXT, vcl VARCHAR(50) CHARACTER SET latin1, txl TEXT CHARACTER SET latin1," +
	"bn BINARY(8), vb VARBINARY(100), bl LONGBLOB," +
	"e ENUM('a','b','c'), s SET('x','y','z'), j JSON," +
	"g BIGINT AS (i * 2) VIRTUAL, gs VARCHAR(120) AS (CONCAT(vc, '!')) STORED" +
	") DEFAULT CHARSET=utf8mb4"

// weird is a table whose schema, table and column names need quoting.
const weirdSchema = "CREATE DATABASE `wéird ``db`"

const weirdTable = "CREATE TABLE `wéird ``db`.`tåble with ``ticks`` and spaces` (" +
	"`id ``x`` ü` INT PRIMARY KEY, `va?l` VARCHAR(20), `snow ☃` VARCHAR(10) CHARACTER SET utf8mb4, `select` INT)"

// Types writes rows with every type at its limits, NULLs, zero dates,
// 4 MB blobs, latin1 and utf8mb4 text, then updates and deletes them, plus
// a table with identifiers full of backticks, spaces, unicode and '?'.
func Types() Workload {
	stmts := []string{
		"INSERT INTO w_types.t (id, ti, tiu, si, siu, mi, miu, i, iu, bi, biu, d, du, f, db, b1, b64, dt, tm, dtm, ts, y, c, vc, tx, vcl, txl, bn, vb, bl, e, s, j) VALUES " +
			"(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615," +
			" -99999999999999999999999999999999999.999999999999999999999999999999, 99999999.99, -3.4028234e38, -1.7976931348623157e308," +
			" b'1', b'1111111111111111111111111111111111111111111111111111111111111111'," +
			" '1000-01-01', '-838:59:59.000000', '1000-01-01 00:00:00.000000', '1970-01-01 00:00:01.000000', 1901," +
			" 'ab', 'héllo wörld 🙂', REPEAT('ü', 1000), 'café ÿ', 'Ærø', 'a\\0b', x'00ff00ff', REPEAT(x'00ff', 2*1024*1024)," +
			" 'a', 'x,z', '{\"k\": [1, 2.5, \"s\", null, true]}')",
		"INSERT INTO w_types.t (id, ti, tiu, si, siu, mi, miu, i, iu, bi, biu, d, du, f, db, b1, b64, dt, tm, dtm, ts, y, c, vc, tx, vcl, txl, bn, vb, bl, e, s, j) VALUES " +
			"(2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0," +
			" 0.000000000000000000000000000001, 0.00, 1.17549435e-38, 2.2250738585072014e-308," +
			" b'0', b'0', '9999-12-31', '838:59:59.999999', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999', 2155," +
			" '', '', '', '', '', '', '', '', 'c', 'x,y,z', '[]')",
		"INSERT INTO w_types.t (id) VALUES (3)",
		"INSERT INTO w_types.t (id, dt, dtm, ts, y, f, db) VALUES (4, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', 0, 0.1, 0.1)",
		"UPDATE w_types.t SET tiu = 254, vc = 'changed ✓', vcl = 'ÿé', bl = x'01', j = JSON_OBJECT('a', 1), e = 'b', s = '', b64 = b'1010' WHERE id = 1",
		"UPDATE w_types.t SET ti = NULL, c = NULL, tx = 'not null now', f = 1.5 WHERE id = 2",
		"UPDATE w_types.t SET id = 30, i = 7 WHERE id = 3",
		"UPDATE w_types.t SET f = 0.2 WHERE id = 4",
		"DELETE FROM w_types.t WHERE id = 2",
		"INSERT INTO `wéird ``db`.`tåble with ``ticks`` and spaces` VALUES (1, 'a?b', '🙂🙃', 1), (2, '?', '', 2), (3, NULL, 'x', NULL)",
		"UPDATE `wéird ``db`.`tåble with ``ticks`` and spaces` SET `va?l` = 'q?', `select` = 9 WHERE `id ``x`` ü` = 2",
		"DELETE FROM `wéird ``db`.`tåble with ``ticks`` and spaces` WHERE `id ``x`` ü` = 3",
	}
	return Workload{
		Name:         "types",
		Setup:        []string{"CREATE DATABASE w_types", typesTable, weirdSchema, weirdTable},
		Transactions: len(stmts),
		CriticalPath: map[string]int{"serial": len(stmts)},
		Run: func(ctx context.Context, db *sql.DB) error {
			return session(ctx, db, func(c *sql.Conn) error {
				// Zero dates are part of what must round-trip.
				if _, err := c.ExecContext(ctx, "SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION', SESSION time_zone = '+02:00'"); err != nil {
					return err
				}
				for _, s := range stmts {
					if err := txn(ctx, c, q(s)); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}
