// Package config turns command-line flags, config files and the environment
// into values: server endpoints with their secrets, and the settings of each
// subcommand. It is the only place that reads them.
package config

import (
	"crypto/tls"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Endpoint is a MySQL or MariaDB server to connect to. Its password never
// appears in String, in logs (LogValue) or in errors from this package.
type Endpoint struct {
	User     string
	Host     string
	Port     int
	password string
	tls      *tls.Config // nil: clear text; see WithTLS
}

// ParseEndpoint parses mysql://USER[:PASSWORD]@HOST[:PORT]. A password in the
// URL is accepted but the environment or a file is the better place for it.
func ParseEndpoint(s string) (Endpoint, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "mysql" || u.Host == "" {
		return Endpoint{}, fmt.Errorf("endpoint %q: want mysql://USER@HOST:PORT", redactURL(s))
	}
	e := Endpoint{Host: u.Hostname(), Port: 3306}
	if u.User != nil {
		e.User = u.User.Username()
		e.password, _ = u.User.Password()
	}
	if e.User == "" {
		e.User = "root"
	}
	if p := u.Port(); p != "" {
		if e.Port, err = strconv.Atoi(p); err != nil || e.Port <= 0 || e.Port > 65535 {
			return Endpoint{}, fmt.Errorf("endpoint %s: bad port %q", e, p)
		}
	}
	return e, nil
}

// redactURL drops anything between "://" and "@" so that a password typed
// into a URL does not reach an error message.
func redactURL(s string) string {
	i := strings.Index(s, "://")
	j := strings.LastIndex(s, "@")
	if i >= 0 && j > i {
		return s[:i+3] + "…" + s[j:]
	}
	return s
}

// WithPassword returns e with the password set.
func (e Endpoint) WithPassword(pw string) Endpoint { e.password = pw; return e }

// HasPassword reports whether a password is set.
func (e Endpoint) HasPassword() bool { return e.password != "" }

// Password is the secret, for the code that must send it to the server.
func (e Endpoint) Password() string { return e.password }

// Addr is host:port.
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// String is the endpoint without its password: mysql://user@host:port.
func (e Endpoint) String() string { return "mysql://" + e.User + "@" + e.Addr() }

// LogValue makes slog print the redacted form.
func (e Endpoint) LogValue() slog.Value { return slog.StringValue(e.String()) }

// DriverConfig is the go-sql-driver/mysql configuration for database db
// (may be empty). Sessions use UTC so that TIMESTAMP values round-trip as
// the binlog holds them, and utf8mb4.
func (e Endpoint) DriverConfig(db string) *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = e.User, e.password, "tcp", e.Addr(), db
	c.Loc = time.UTC
	c.Params = map[string]string{"time_zone": "'+00:00'"}
	c.Collation = "utf8mb4_general_ci"
	c.Timeout = 10 * time.Second
	c.AllowNativePasswords = true
	if e.tls != nil {
		c.TLS = e.tls.Clone()
	}
	return c
}

// DriverDSN is DriverConfig as a DSN string (it holds the password). A DSN
// cannot carry a TLS configuration: use Open for an endpoint with TLS.
func (e Endpoint) DriverDSN(db string) string { return e.DriverConfig(db).FormatDSN() }

// Open opens a connection pool on the endpoint; configure, if not nil,
// adjusts the driver configuration first.
func (e Endpoint) Open(configure func(*mysql.Config)) (*sql.DB, error) {
	c := e.DriverConfig("")
	if configure != nil {
		configure(c)
	}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e, err)
	}
	return sql.OpenDB(conn), nil
}

// ResolvePassword fills e's password, in order of preference: the file
// named by passwordFile, then the environment variable envVar, then what
// the URL carried. The file's trailing newline is dropped.
func (e Endpoint) ResolvePassword(envVar, passwordFile string) (Endpoint, error) {
	if passwordFile != "" {
		b, err := os.ReadFile(passwordFile)
		if err != nil {
			return e, fmt.Errorf("password file for %s: %w", e, err)
		}
		return e.WithPassword(strings.TrimRight(string(b), "\r\n")), nil
	}
	if v, ok := os.LookupEnv(envVar); ok {
		return e.WithPassword(v), nil
	}
	return e, nil
}
