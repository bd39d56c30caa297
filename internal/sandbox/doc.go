// Package sandbox starts and stops real MariaDB servers in temporary
// directories, for paraply's tests, demo and benchmarks. It does not use Docker
// or the packaged system service. It runs the mariadbd binary from the
// distribution (Debian's mariadb-server 10.11) directly.
//
// # Layout
//
// Each server gets one directory, <BaseDir>/paraply-<name>-<random>/:
//
//	data/         datadir, copied from a template (see below)
//	binlog/       mariadb-bin.NNNNNN and mariadb-bin.index (when Options.Binlog)
//	relaylog/     relay logs, used only if the server is made a native replica
//	tmp/          --tmpdir
//	error.log     --log-error, plus mariadbd's stdout and stderr
//	mysqld.sock   unix socket (paths are limited to 107 bytes, so keep BaseDir short)
//	mariadbd.pid  written by mariadbd
//	sandbox.pid   "<mariadbd pid> <owner pid>", written by this package; see ReapStale
//
// The server listens on 127.0.0.1 only, on a free port that Start picks. Root
// has an empty password. Every mariadbd command line starts with --no-defaults,
// so /etc/mysql and ~/.my.cnf never apply.
//
// # Template datadir
//
// mariadb-install-db takes about a second, so it runs only once per mariadbd
// version, into <os.TempDir()>/paraply-template-<key>/. The key hashes the
// output of `mariadbd --version` and the install options. The template is built
// in a temporary directory and renamed into place, so concurrent test processes
// are safe: one of them wins the rename, and the others use its result. The
// template has no sys schema, and its files are sparse: 6 MB of data in 94
// files, out of 81 MB (most of it the zeros of the 64 MB redo log). Start
// copies only the data. On this machine the copy takes 50-100 ms (creating
// files is the slow part), and a whole Start takes about 0.25 s, with mariadbd
// answering about 0.15 s after exec.
//
// # Processes
//
// Stop, Kill and Restart act on the PID this package started, and never look
// a process up by name. mariadbd gets its own process group, so a terminal's
// Ctrl-C reaches only the owner, and the owner stops its servers in order
// (see HandleSignals). It also gets Pdeathsig=SIGKILL, so a test binary that
// crashes or is killed does not leave servers behind. ReapStale handles the
// rare case where that did not work.
//
// # Durability
//
// Durable=false means innodb_flush_log_at_trx_commit=2, sync_binlog=0 and no
// doublewrite buffer. Committed data then lives in the OS page cache, so it
// still survives Kill (SIGKILL of mariadbd). It does not survive a host crash.
// Durable=true fsyncs on every commit. Crash tests that only kill mariadbd
// pass with either setting, and Durable only changes speed.
package sandbox
