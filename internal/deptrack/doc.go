// Package deptrack decides, for each transaction of a source's binlog, which
// earlier transactions it must wait for before it may run on a replica.
//
// It is a pure data structure: no goroutines, no I/O, no clock. Feed it
// transactions in source commit order; for each it returns Deps, the exact
// set of predecessors under one of five modes:
//
//	serial            the previous transaction
//	database          the last earlier transaction on each schema it touches
//	commit-order      what the source's logical clock recorded (MySQL
//	                  last_committed as a watermark; MariaDB commit_id groups)
//	writeset          the last earlier writer of each row key it writes
//	writeset-session  writeset, plus the previous transaction of its session
//
// A worked example on t(id PRIMARY KEY, u UNIQUE):
//
//	T1: INSERT (1, 'a')         keys {t.PRIMARY=1, t.u='a'}     deps {}
//	T2: INSERT (2, 'b')         keys {t.PRIMARY=2, t.u='b'}     deps {}
//	T3: DELETE (1, 'a')         keys {t.PRIMARY=1, t.u='a'}     deps {T1}
//	T4: INSERT (3, 'a')         keys {t.PRIMARY=3, t.u='a'}     deps {T3}
//
// T4 reuses the unique value T3 freed, so it must follow T3 even though
// their primary keys differ; T2 runs beside all of them.
//
// Transactions whose rows cannot be described by keys are barriers: they
// wait for everything before them and everything after waits for them (DDL,
// statement-format DML, tables whose keys are unknown, row images missing a
// key column that an update changed). A table without a primary key or a
// unique key on NOT NULL columns is not a barrier: its writers take an
// exclusive token on the table, so they run one at a time but beside
// transactions on other tables.
//
// A key over an application-time period, UNIQUE (u, p WITHOUT OVERLAPS),
// hashes u alone: rows conflict through it when their periods overlap,
// which equal values of every part would not tell, so all writers of one
// u run in order, whatever their periods. The hidden hash column of a long
// unique key (DB_ROW_HASH_n, after the table's columns in row images) is
// in no key: the key over the columns it hashes is.
//
// String key values hash by their collation's weights (package collation),
// so values the server calls equal share a key. Foreign keys with cascading
// actions work the same way: a transaction that may cascade into a child
// table takes that table's exclusive token, and ordinary writers of the
// child take a shared one.
//
// The key history is bounded. When it is full the oldest keys are
// forgotten, not the whole history as MySQL does; a transaction with a key
// that is not in the history then waits for the newest transaction whose
// keys were forgotten, which keeps it safe.
package deptrack
