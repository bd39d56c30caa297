// Command targetreplay measures what a target costs on its own: it runs
// the statements of a MariaDB general log again, in the order logged, on
// one connection, with nothing else in the way. Capture the log on a
// target while paraply applies a backlog (SET GLOBAL general_log=1), then
// replay it on a target restored to the state before that run: the time
// and the target's CPU are what executing paraply's statements costs the
// target, without paraply's own CPU beside it nor a second session.
// docs/benchmark.md compares it with paraply's run and MariaDB's replica on
// the same backlog.
//
//	targetreplay -target mysql://root@127.0.0.1:3306/ general.log
//
// -prepared sends the statements inside paraply's compound statements one
// by one as server-side prepared statements instead, each distinct text
// prepared before the clock starts where it can be (prepared.go; the
// statements on tables the log creates are prepared when first run).
// -target-pid-file names the target's pid file, when it runs on this
// machine, to report the CPU it spent during the timed replay alone.
//
// The target's password comes from PARAPLY_TARGET_PASSWORD or
// -target-password-file.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/bench"
	"github.com/paraply/paraply/internal/config"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "targetreplay:", err)
		os.Exit(1)
	}
}

func run() error {
	target := flag.String("target", "", "the target, mysql://user@host:port/")
	pwFile := flag.String("target-password-file", "", "a file holding the target's password")
	prepared := flag.Bool("prepared", false, "send the statements of compound statements as server-side prepared statements")
	pidFile := flag.String("target-pid-file", "", "the target's pid file, to report its CPU during the replay")
	flag.Parse()
	if *target == "" || flag.NArg() != 1 {
		return errors.New("usage: targetreplay -target mysql://user@host:port/ general.log")
	}
	ep, err := config.ParseEndpoint(*target)
	if err != nil {
		return err
	}
	if ep, err = ep.ResolvePassword("PARAPLY_TARGET_PASSWORD", *pwFile); err != nil {
		return err
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		return err
	}
	cmds, err := parseGeneralLog(f)
	f.Close()
	if err != nil {
		return err
	}
	db, err := ep.Open(func(c *mysql.Config) {
		// As paraply's workers connect: compound statements and
		// multi-statement packets, UPDATE counting the rows it matched.
		c.MultiStatements, c.ClientFoundRows = true, true
	})
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var stmts map[string]*sql.Stmt
	if *prepared {
		if stmts, err = prepareAll(ctx, conn, cmds); err != nil {
			return err
		}
		fmt.Printf("%d statement texts prepared\n", len(stmts))
		defer func() {
			for _, st := range stmts {
				st.Close()
			}
		}()
	}
	cpu0, err := processCPU(*pidFile)
	if err != nil {
		return err
	}
	start := time.Now()
	failed := replay(ctx, conn, cmds, stmts)
	elapsed := time.Since(start)
	cpu1, err := processCPU(*pidFile)
	if err != nil {
		return err
	}
	fmt.Printf("%d statements in %.2f s, %d failed", len(cmds), elapsed.Seconds(), failed)
	if *pidFile != "" {
		fmt.Printf(", target CPU %.2f s", (cpu1 - cpu0).Seconds())
	}
	fmt.Println()
	return nil
}

// replay runs cmds in order on conn and returns how many failed. A command
// that fails is reported and skipped: a log holds the commands that failed
// on its own target too (paraply's probes of what the target supports).
//
// With stmts (-prepared) the statements of a compound statement run one by
// one through the prepared statement of their text.
func replay(ctx context.Context, conn *sql.Conn, cmds []logged, stmts map[string]*sql.Stmt) (failed int) {
	for _, c := range cmds {
		parts, compound := compoundStatements(c.text)
		if stmts == nil || !compound {
			if _, err := conn.ExecContext(ctx, c.text); err != nil {
				failed++
				fmt.Fprintf(os.Stderr, "connection %s: %v: %.120s\n", c.conn, err, c.text)
			}
			continue
		}
		for _, p := range parts {
			shape, args := parameterize(p)
			st := stmts[shape]
			if st == nil {
				var err error
				if st, err = conn.PrepareContext(ctx, shape); err != nil {
					failed++
					fmt.Fprintf(os.Stderr, "connection %s: preparing: %v: %.120s\n", c.conn, err, shape)
					continue
				}
				stmts[shape] = st
			}
			if _, err := st.ExecContext(ctx, args...); err != nil {
				failed++
				fmt.Fprintf(os.Stderr, "connection %s: %v: %.120s\n", c.conn, err, p)
			}
		}
	}
	return failed
}

// prepareAll prepares on conn every distinct statement text (literals made
// placeholders) of the compound statements in cmds that the target can
// prepare now: a statement on a table the log creates cannot be yet.
func prepareAll(ctx context.Context, conn *sql.Conn, cmds []logged) (map[string]*sql.Stmt, error) {
	stmts := map[string]*sql.Stmt{}
	for _, c := range cmds {
		parts, _ := compoundStatements(c.text)
		for _, p := range parts {
			shape, _ := parameterize(p)
			if stmts[shape] != nil {
				continue
			}
			st, err := conn.PrepareContext(ctx, shape) //nolint:sqlclosecheck // run closes every statement of the map
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1146 { // ER_NO_SUCH_TABLE
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("preparing %.120s: %w", shape, err)
			}
			stmts[shape] = st
		}
	}
	return stmts, nil
}

// processCPU returns the CPU time of the process whose pid file is pidFile
// (bench.ProcessCPU); zero when pidFile is empty.
func processCPU(pidFile string) (time.Duration, error) {
	if pidFile == "" {
		return 0, nil
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", pidFile, err)
	}
	return time.Duration(bench.ProcessCPU(pid) * float64(time.Second)), nil
}
