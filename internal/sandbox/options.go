package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
)

// Options configure one sandboxed server. The zero value is a usable,
// non-durable server without a binary log.
type Options struct {
	// Name identifies the server in directory names, logs and errors, e.g.
	// "source" or "target". Letters, digits, '-' and '_', at most 32 bytes.
	// Default "mariadb".
	Name string

	// BaseDir is the parent of the server's directory. It must be short enough
	// for the socket path (<BaseDir>/paraply-<name>-<random>/mysqld.sock) to fit
	// in 107 bytes. Default os.TempDir(), or /tmp if that is too long.
	BaseDir string

	// ServerID is @@server_id. Default 1; a replica and its source need
	// different IDs.
	ServerID uint32

	// GTIDDomain is @@gtid_domain_id. Default 0.
	GTIDDomain uint32

	// Binlog turns the binary log on, with what paraply's receiver expects:
	// binlog_format=ROW, binlog_row_image=FULL, binlog_row_metadata=FULL,
	// log_slave_updates=ON and gtid_strict_mode=ON. The files go to
	// <dir>/binlog/mariadb-bin.NNNNNN. When false the server runs with
	// --skip-log-bin.
	Binlog bool

	// Durable makes every commit reach the disk: innodb_flush_log_at_trx_commit=1
	// and sync_binlog=1. When false: 2, 0 and no doublewrite buffer, which
	// still survive Kill but not a host crash (see the package doc).
	Durable bool

	// BufferPoolMB is innodb_buffer_pool_size in MiB. Default 64, at most 256
	// (several servers often run side by side).
	BufferPoolMB int

	// ExtraArgs are appended to the mariadbd command line after the
	// package's own options. mariadbd uses the last value of an option, so
	// these override, e.g. "--slave-parallel-threads=4" or
	// "--gtid-strict-mode=OFF".
	ExtraArgs []string

	// TLS, if set, makes the server offer TLS with these files (mariadbd
	// --ssl-ca, --ssl-cert, --ssl-key). Clients may still connect in clear
	// text unless their account says REQUIRE SSL or REQUIRE X509; the
	// package's own connections (root) do.
	TLS *TLSFiles

	// Port is the TCP port on 127.0.0.1. 0 picks a free port (and retries
	// with another one if mariadbd then cannot bind it).
	Port int

	// Logger receives a few lifecycle messages (started, stopped). Default:
	// discard.
	Logger *slog.Logger
}

// TLSFiles are the PEM files of a server's TLS setup. FLUSH SSL makes a
// running server read them again.
type TLSFiles struct {
	CA   string // certificates of the CAs whose client certificates the server accepts
	Cert string // the server's certificate
	Key  string // its private key
}

const (
	defaultName         = "mariadb"
	defaultBufferPoolMB = 64
	maxBufferPoolMB     = 256
	maxNameLen          = 32
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// withDefaults returns a copy of o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = defaultName
	}
	if o.BaseDir == "" {
		o.BaseDir = os.TempDir()
		if len(socketPathFor(o.BaseDir, o.Name)) > maxSocketPath {
			o.BaseDir = "/tmp"
		}
	}
	if o.ServerID == 0 {
		o.ServerID = 1
	}
	if o.BufferPoolMB == 0 {
		o.BufferPoolMB = defaultBufferPoolMB
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.ExtraArgs = append([]string(nil), o.ExtraArgs...) // the caller may reuse its slice
	if o.TLS != nil {
		files := *o.TLS
		o.TLS = &files
	}
	return o
}

// validate reports the first invalid field of o, which must have its defaults
// applied.
func (o Options) validate() error {
	switch {
	case len(o.Name) > maxNameLen || !validName.MatchString(o.Name):
		return fmt.Errorf("sandbox: invalid Name %q: use at most %d letters, digits, '-' or '_'", o.Name, maxNameLen)
	case o.BufferPoolMB < 0 || o.BufferPoolMB > maxBufferPoolMB:
		return fmt.Errorf("sandbox %s: BufferPoolMB %d out of range 1..%d", o.Name, o.BufferPoolMB, maxBufferPoolMB)
	case o.Port < 0 || o.Port > 65535:
		return fmt.Errorf("sandbox %s: Port %d out of range", o.Name, o.Port)
	case o.TLS != nil && (o.TLS.CA == "" || o.TLS.Cert == "" || o.TLS.Key == ""):
		return fmt.Errorf("sandbox %s: TLS needs a CA, a certificate and a key", o.Name)
	case len(socketPathFor(o.BaseDir, o.Name)) > maxSocketPath:
		return fmt.Errorf("sandbox %s: BaseDir %q is too long for a unix socket path (max %d bytes)", o.Name, o.BaseDir, maxSocketPath)
	}
	return nil
}
