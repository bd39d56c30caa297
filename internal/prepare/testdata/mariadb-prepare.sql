-- The workload that wrote mariadb-prepare.000001 (MariaDB 10.11, a sandbox
-- with binlog_format=ROW and binlog_row_metadata=FULL, after RESET MASTER):
-- one statement a line, each paragraph in a session of its own. go test
-- -run TestRecorded ./internal/prepare -args -record writes it again.

-- 0-1-1, 0-1-2: the database and the table
CREATE DATABASE p;
CREATE TABLE p.t (id INT PRIMARY KEY, a INT) ENGINE=InnoDB;
-- 0-1-3: a row of two columns
INSERT INTO p.t VALUES (1, 1);
-- 0-1-4: DDL adds a column; 0-1-5: a row of three
ALTER TABLE p.t ADD COLUMN b VARCHAR(10);
INSERT INTO p.t VALUES (2, 2, 'two');
-- 0-1-6: an XA PREPARE (the session ends with it prepared)
XA START 'x';
UPDATE p.t SET a = 10 WHERE id = 1;
XA END 'x';
XA PREPARE 'x';

-- 0-1-7: a transaction between the prepare and its commit
UPDATE p.t SET a = 20 WHERE id = 2;

-- 0-1-8: the XA COMMIT
XA COMMIT 'x';
-- 1-1-1: a transaction in domain 1; 0-1-9: one more in domain 0
SET SESSION gtid_domain_id = 1;
INSERT INTO p.t VALUES (3, 3, 'three');
SET SESSION gtid_domain_id = 0;
UPDATE p.t SET b = 'one' WHERE id = 1;
