package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ErrBinlogDisabled is returned by BinlogFiles when the server runs without
// a binary log.
var ErrBinlogDisabled = errors.New("binary log is disabled")

// config returns the go-sql-driver configuration behind DSN, DB and the
// package's own connections. quiet drops the driver's log output, which
// readiness probes would otherwise fill with connection errors.
func (s *Server) config(database string, quiet bool) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = s.User
	cfg.Passwd = s.Password
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	cfg.DBName = database
	cfg.Collation = "utf8mb4_general_ci" // the server's collation
	cfg.MultiStatements = true
	cfg.ParseTime = false
	cfg.Timeout = 5 * time.Second // dial only; queries are bounded by their ctx
	if quiet {
		cfg.Logger = &mysql.NopLogger{}
	}
	return cfg
}

// open returns a connection pool with the settings of config.
func (s *Server) open(database string, quiet bool) (*sql.DB, error) {
	c, err := mysql.NewConnector(s.config(database, quiet))
	if err != nil {
		return nil, s.errorf("%w", err)
	}
	return sql.OpenDB(c), nil
}

// DSN returns a go-sql-driver data source name for database ("" for none),
// for example
//
//	root@tcp(127.0.0.1:40123)/sbtest?collation=utf8mb4_general_ci&multiStatements=true&timeout=5s
//
// The choices are:
//   - multiStatements=true, so that test fixtures can run a script as one Exec.
//   - parseTime=false (the driver default, so the DSN leaves it out).
//     DATETIME and TIMESTAMP come back as the server's text, which tests
//     compare as is.
//   - collation=utf8mb4_general_ci, the same as the server's.
//   - timeout=5s, which bounds only the dial.
//
// With a password the DSN would contain it. Log URL instead.
func (s *Server) DSN(database string) string {
	return s.config(database, false).FormatDSN()
}

// URL returns "mysql://root@127.0.0.1:PORT", an address for logs and
// messages. It never contains a password.
func (s *Server) URL() string {
	return "mysql://" + s.User + "@" + net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
}

// DB opens a connection pool on database ("" for none) with the settings of
// DSN, and checks it with a ping. The caller closes it.
func (s *Server) DB(database string) (*sql.DB, error) {
	db, err := s.open(database, false)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, s.errorf("connect to database %q: %w", database, err)
	}
	return db, nil
}

// Exec runs queries in order on one connection, so session settings carry
// over from one to the next. A query may hold several statements. Exec stops
// at the first error.
func (s *Server) Exec(ctx context.Context, queries ...string) error {
	db, err := s.open("", false)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return s.errorf("connect: %w", err)
	}
	defer conn.Close()
	for i, q := range queries {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return s.errorf("query %d of %d (%s): %w", i+1, len(queries), abbreviate(q, 120), err)
		}
	}
	return nil
}

// CreateDatabase creates database name if it does not exist.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	return s.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(name))
}

// BinlogFiles returns the absolute paths of the server's binary log files,
// oldest first, as SHOW BINARY LOGS lists them. It returns an error wrapping
// ErrBinlogDisabled if the binary log is off.
func (s *Server) BinlogFiles(ctx context.Context) ([]string, error) {
	db, err := s.open("", false)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var base sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@log_bin_basename").Scan(&base); err != nil {
		return nil, s.errorf("binlog files: %w", err)
	}
	if !base.Valid {
		return nil, s.errorf("binlog files: %w", ErrBinlogDisabled)
	}
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return nil, s.errorf("binlog files: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, s.errorf("binlog files: %w", err)
	}
	// Log_name comes first; the other columns (File_size, ...) are not needed.
	var name string
	dest := make([]any, len(cols))
	dest[0] = &name
	for i := 1; i < len(dest); i++ {
		dest[i] = new(sql.RawBytes)
	}
	var files []string
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, s.errorf("binlog files: %w", err)
		}
		files = append(files, filepath.Join(filepath.Dir(base.String), name))
	}
	if err := rows.Err(); err != nil {
		return nil, s.errorf("binlog files: %w", err)
	}
	return files, nil
}

// Client returns a `mariadb` command-line client connected to the server
// over TCP: --no-defaults, host, port, user and
// --default-character-set=utf8mb4, then args. For example
//
//	out, err := s.Client(ctx, "-N", "-e", "SELECT @@port").Output()
//
// A password would be passed in MYSQL_PWD, not on the command line.
func (s *Server) Client(ctx context.Context, args ...string) *exec.Cmd {
	base := []string{
		"--no-defaults", // must be first
		"--protocol=TCP",
		"--host=" + s.Host,
		"--port=" + strconv.Itoa(s.Port),
		"--user=" + s.User,
		"--default-character-set=utf8mb4",
	}
	cmd := exec.CommandContext(ctx, binary("mariadb"), append(base, args...)...)
	if s.Password != "" {
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+s.Password)
	}
	return cmd
}

// Sysbench returns a sysbench command for script (e.g. "oltp_write_only")
// against the server's database sbtest, then args, which hold sysbench
// options and the command. Create the database first (CreateDatabase).
// For example
//
//	s.Sysbench(ctx, "oltp_write_only", "--tables=4", "--table-size=10000", "prepare")
//
// Later options override earlier ones, so "--mysql-db=other" in args works.
func (s *Server) Sysbench(ctx context.Context, script string, args ...string) *exec.Cmd {
	base := []string{
		script,
		"--db-driver=mysql",
		"--mysql-host=" + s.Host,
		"--mysql-port=" + strconv.Itoa(s.Port),
		"--mysql-user=" + s.User,
		"--mysql-db=sbtest",
	}
	if s.Password != "" {
		base = append(base, "--mysql-password="+s.Password)
	}
	return exec.CommandContext(ctx, binary("sysbench"), append(base, args...)...)
}

// quoteIdent quotes a MariaDB identifier with backticks.
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// abbreviate shortens s to at most n bytes for error messages.
func abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
