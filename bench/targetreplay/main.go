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
	"time"

	"github.com/go-sql-driver/mysql"

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
	start := time.Now()
	failed := replay(ctx, conn, cmds)
	fmt.Printf("%d statements in %.2f s, %d failed\n", len(cmds), time.Since(start).Seconds(), failed)
	return nil
}

// replay runs cmds in order on conn and returns how many failed. A command
// that fails is reported and skipped: a log holds the commands that failed
// on its own target too (paraply's probes of what the target supports).
func replay(ctx context.Context, conn *sql.Conn, cmds []logged) (failed int) {
	for _, c := range cmds {
		if _, err := conn.ExecContext(ctx, c.text); err != nil {
			failed++
			fmt.Fprintf(os.Stderr, "connection %s: %v: %.120s\n", c.conn, err, c.text)
		}
	}
	return failed
}
