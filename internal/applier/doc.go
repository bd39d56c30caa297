// Package applier executes source transactions on the target: a pool of
// workers, each with its own target session, applying Work (one or more
// consecutive source transactions) as one target transaction together with
// the checkpoint rows of their GTIDs.
//
// A target transaction costs two round trips: one packet with every row
// change and the checkpoint insert (values interpolated by the driver from
// placeholders), then, once every statement's affected-row count has been
// checked against the rows the binlog says it touched, the COMMIT. On
// MariaDB the packet is a compound statement that checks the counts itself
// and answers once; on MySQL, a multi-statement packet answered statement
// by statement, whose counts the worker checks (see worker.runBatch). With
// commit order preserved, the COMMIT waits for the Sequencer to say every
// earlier transaction has committed.
//
// Errors are sorted: lock waits, deadlocks and lost connections are retried
// (after a lost connection during COMMIT, the checkpoint table says whether
// it happened); a row that is not where the binlog says it is, a duplicate
// key, a missing table, stop replication with an error that names the GTID,
// the table and the key, leaving the target and the checkpoint as they
// were.
package applier
