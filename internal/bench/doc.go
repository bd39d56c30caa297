// Package bench is a benchmark harness, not part of paraply itself: the
// code behind bench/replication (make bench, make bench-quick). The paraply
// binary never imports it.
//
// It compares paraply with MariaDB's own replica on the same backlog in
// the same run: the method of DESIGN.md "Benchmark method", after seed 003
// (stop the applier, let the source build a backlog of K transactions with
// sysbench at T clients, then time the apply).
//
// # Servers and state
//
// Per durability setting, three sandboxed MariaDB servers with identical
// options (log-bin, ROW, the same buffer pool, durable or not): the
// source, a native replica and paraply's target. sysbench prepare runs
// once, on the first source. Its binary logs are then purged and the
// stopped source is copied (data directory and binary logs): that copy,
// the base, is where every backlog starts. The replica and the target get
// the base's data directory with a binary log of their own (RESET MASTER),
// the replica gtid_slave_pos = the base's position, and CHECKSUM TABLE must
// agree on all three. Then the replica and the target are stopped and
// copied too.
//
// A snapshot is restored by SIGKILL, replacing the directories and
// starting the server again: what the kill loses is overwritten anyway,
// and a clean shutdown after a run would first flush every dirty page.
// After a restore every table is read into the buffer pool and the server
// makes its first write, out of the binary log (Config.Warm): the first
// write after a start costs a server a few tenths of a second, which
// MariaDB's replica pays before its timer starts. Then the page cache is
// written out (sync): the restored copy would otherwise be written back
// by the kernel during the run.
//
// # One backlog
//
//  1. Restore the source to the base, FLUSH BINARY LOGS, run sysbench
//     (`run --events=K --time=0 --threads=T --rand-seed=42`), FLUSH BINARY
//     LOGS. Nothing replicates meanwhile. The GTID positions before and
//     after bound the backlog, the files in between hold it.
//  2. `paraply analyze --json` on those files, with the target's schema,
//     once per batch size of the paraply runs: the predicted speedups per
//     mode and worker count, with commit order kept and without.
//  3. For each configuration, restore the replica or the target and time
//     the apply:
//     - native: gtid_slave_pos = the position before, CHANGE MASTER TO
//     ... MASTER_USE_GTID=slave_pos, slave_parallel_threads and
//     slave_parallel_mode (both only change while the replica's threads
//     are stopped); START SLAVE IO_THREAD until the relay log has the
//     whole backlog; then time START SLAVE SQL_THREAD until
//     MASTER_GTID_WAIT returns for the last GTID. The IO thread stays up,
//     idle: with GTIDs, starting a replica whose two threads are stopped
//     purges its relay log and fetches it again;
//     - paraply: time `paraply replicate --start-gtid <before>
//     --until-caught-up` with a fresh relay directory, from exec to exit
//     (so receiving the backlog is included);
//     - ceiling: sysbench with 16 clients, the same workload and K, directly
//     on the target;
//     - point-in-time recovery: the backlog's binlog files replayed onto
//     the target's snapshot, by `mariadb-binlog FILES | mariadb` and by
//     `paraply apply --start-gtid <before> FILES`, each from exec to exit.
//  4. `paraply verify` after the first native run, the first
//     multi-worker paraply run and the first run of each point-in-time
//     recovery (Config.Verify); a difference fails the benchmark.
//
// After every run (and its verification) the server that applied is
// killed, so that its background flushing does not slow the next run. A
// run that fails or exceeds Config.RunTimeout is recorded as failed; the
// benchmark goes on and exits with ErrFailed.
//
// # Output
//
// results.json (every run, its configuration, seconds, tps, ratios, CPU
// used), results.md (a table per workload × T × durability, with predicted
// next to measured speedups) and chart-<workload>.svg, rewritten after
// every backlog.
package bench
