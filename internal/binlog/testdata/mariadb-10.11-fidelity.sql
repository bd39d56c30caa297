-- The workload that wrote mariadb-10.11-fidelity.000001 (MariaDB 10.11.19,
-- binlog_format=ROW, binlog_row_metadata=FULL, after RESET MASTER), run with
-- the mariadb client: one transaction of each kind the framer must frame.
CREATE DATABASE fx;
USE fx;
CREATE TABLE a (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, delta INT) ENGINE=InnoDB;
CREATE TRIGGER a_au AFTER UPDATE ON a FOR EACH ROW INSERT INTO audit (delta) VALUES (NEW.v - OLD.v);
-- 0-1-5: a savepoint, its rows rolled back (not logged)
BEGIN; INSERT INTO a VALUES (1,1); SAVEPOINT s; INSERT INTO a VALUES (2,2); ROLLBACK TO SAVEPOINT s; INSERT INTO a VALUES (3,3); COMMIT;
-- 0-1-6: the trigger's rows are logged with the update
UPDATE a SET v = v + 2 WHERE id = 1;
CREATE TABLE ver (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING;
INSERT INTO ver VALUES (1,1);
UPDATE ver SET v = 2 WHERE id = 1;
CREATE SEQUENCE sq;
SELECT NEXTVAL(sq);
-- 0-1-12, 0-1-13: two-phase XA, committed
XA START 'x1'; INSERT INTO a VALUES (10,10); XA END 'x1'; XA PREPARE 'x1'; XA COMMIT 'x1';
-- 0-1-14, 0-1-15: two-phase XA, rolled back
XA START 'x2', 'b2', 7; INSERT INTO a VALUES (11,11); XA END 'x2', 'b2', 7; XA PREPARE 'x2', 'b2', 7; XA ROLLBACK 'x2', 'b2', 7;
-- 0-1-16: one-phase XA, an ordinary transaction
XA START 'x3'; INSERT INTO a VALUES (12,12); XA END 'x3'; XA COMMIT 'x3' ONE PHASE;
-- 0-1-17: CREATE TABLE ... SELECT: DDL and rows in one group
CREATE TABLE ctas ENGINE=InnoDB SELECT * FROM a;
CREATE TABLE my (id INT PRIMARY KEY) ENGINE=MyISAM;
-- 0-1-19: non-transactional rows, no XID
INSERT INTO my VALUES (1),(2);
-- 0-1-20: MIXED: rows, a savepoint and statements in one transaction
SET SESSION binlog_format = MIXED;
BEGIN; UPDATE a SET v = v + 1 WHERE id = 1; SAVEPOINT p; INSERT INTO a VALUES (40, 40); DELETE FROM a WHERE id = 40; COMMIT;
-- 0-1-21: STATEMENT: two statements in one transaction
SET SESSION binlog_format = STATEMENT;
BEGIN; INSERT INTO audit (delta) VALUES (6); INSERT INTO audit (delta) VALUES (7); COMMIT;
-- 0-1-22: the MyISAM row, logged at once in a group of its own;
-- 0-1-23: the InnoDB rows, with SAVEPOINT and ROLLBACK TO SAVEPOINT and the
-- row of 51 between them: the server logged the rollback because the
-- savepoint's part of the transaction held a non-transactional change, so
-- a replica must roll back to the savepoint itself
SET SESSION binlog_format = ROW;
BEGIN; INSERT INTO a VALUES (50,50); SAVEPOINT q; INSERT INTO my VALUES (3); INSERT INTO a VALUES (51,51); ROLLBACK TO SAVEPOINT q; INSERT INTO a VALUES (52,52); COMMIT;
