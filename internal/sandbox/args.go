package sandbox

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// maxSocketPath is the longest unix socket path Linux accepts
// (sizeof(sockaddr_un.sun_path) minus the terminating NUL).
const maxSocketPath = 107

// innodbLogFileSize is used both when the template is installed and when a
// server starts. If the two differed, every start would first resize the redo
// log.
const innodbLogFileSize = "64M"

// layout names the paths inside one sandbox directory; see the package doc.
type layout struct {
	dir      string
	data     string
	binlog   string // directory
	relaylog string // directory
	tmp      string
	socket   string
	errorLog string
	pidFile  string // written by mariadbd
	ownerPID string // written by this package: "<mariadbd pid> <owner pid>"
}

func newLayout(dir string) layout {
	return layout{
		dir:      dir,
		data:     filepath.Join(dir, "data"),
		binlog:   filepath.Join(dir, "binlog"),
		relaylog: filepath.Join(dir, "relaylog"),
		tmp:      filepath.Join(dir, "tmp"),
		socket:   filepath.Join(dir, "mysqld.sock"),
		errorLog: filepath.Join(dir, "error.log"),
		pidFile:  filepath.Join(dir, "mariadbd.pid"),
		ownerPID: filepath.Join(dir, "sandbox.pid"),
	}
}

// dirPrefix starts the name of every sandbox directory; ReapStale looks only
// at directories named like this.
const dirPrefix = "paraply-"

// socketPathFor returns the longest socket path a server named name can get
// under base (os.MkdirTemp appends at most 10 random digits).
func socketPathFor(base, name string) string {
	return filepath.Join(base, dirPrefix+name+"-0123456789", "mysqld.sock")
}

// serverArgs returns the mariadbd command line (without the program name) for
// a server with options o, directories l, listening on port. asRoot adds
// --user=root, which mariadbd requires when it runs as root.
func serverArgs(o Options, l layout, port int, asRoot bool) []string {
	args := []string{
		// Must come first: it keeps /etc/mysql/*.cnf and ~/.my.cnf out.
		"--no-defaults",
		"--datadir=" + l.data,
		"--tmpdir=" + l.tmp,
		"--socket=" + l.socket,
		"--pid-file=" + l.pidFile,
		"--log-error=" + l.errorLog,
		"--relay-log=" + filepath.Join(l.relaylog, "relay-bin"),
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(port),
		"--skip-name-resolve",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		fmt.Sprintf("--innodb-buffer-pool-size=%dM", o.BufferPoolMB),
		"--innodb-log-file-size=" + innodbLogFileSize,
		// Dumping and reloading the buffer pool list only slows down
		// start and stop for throwaway servers.
		"--innodb-buffer-pool-dump-at-shutdown=OFF",
		"--innodb-buffer-pool-load-at-startup=OFF",
		"--max-connections=300",
		// Tests kill servers and connections. Aborted handshakes must not get
		// 127.0.0.1 blocked ("Host is blocked because of many connection errors").
		"--max-connect-errors=1000000",
		"--max-allowed-packet=64M",
		"--server-id=" + strconv.FormatUint(uint64(o.ServerID), 10),
		"--gtid-domain-id=" + strconv.FormatUint(uint64(o.GTIDDomain), 10),
	}
	if asRoot {
		args = append(args, "--user=root")
	}
	if o.Binlog {
		args = append(args,
			"--log-bin="+filepath.Join(l.binlog, "mariadb-bin"),
			"--binlog-format=ROW",
			"--binlog-row-image=FULL",
			"--binlog-row-metadata=FULL",
			"--log-slave-updates",
			"--gtid-strict-mode=ON",
		)
	} else {
		args = append(args, "--skip-log-bin")
	}
	if o.TLS != nil {
		args = append(args, "--ssl-ca="+o.TLS.CA, "--ssl-cert="+o.TLS.Cert, "--ssl-key="+o.TLS.Key)
	}
	if o.Durable {
		args = append(args,
			"--innodb-flush-log-at-trx-commit=1",
			"--sync-binlog=1",
		)
	} else {
		args = append(args,
			"--innodb-flush-log-at-trx-commit=2",
			"--sync-binlog=0",
			"--innodb-doublewrite=0",
		)
	}
	return append(args, o.ExtraArgs...)
}
