package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/paraply/paraply/internal/retry"
)

// waitSlice bounds one MASTER_GTID_WAIT; between two, the SQL thread's
// health is checked.
const waitSlice = time.Second

// runNative times MariaDB's replica applying backlog b with configuration
// a: slave_parallel_threads and slave_parallel_mode are set, the relay log
// is filled with only the IO thread running, and the timer runs from
// START SLAVE SQL_THREAD until @@gtid_slave_pos reaches the backlog's end.
// So the native time is the apply alone. With a.Receive the relay log
// starts empty and the timer runs from START SLAVE (both threads): the
// native time includes receiving, as paraply's does.
func (c *cluster) runNative(ctx context.Context, a Apply, b *Backlog, run *Measurement) error {
	end, err := parsePosition(b.After)
	if err != nil {
		return err
	}
	db, err := c.replica.DB("")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	exec := func(qs ...string) error {
		for _, q := range qs {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("replica: %s: %w", q, err)
			}
		}
		return nil
	}
	mode := a.Mode
	if mode == "" {
		mode = "conservative" // unused with 0 threads
	}
	// Both variables can only change while the replica's threads are
	// stopped, so they are set first. The IO thread then stays running
	// (idle once it has the backlog): with MASTER_USE_GTID, a START SLAVE
	// while both threads are stopped purges the relay log and fetches it
	// again, which would put the transfer back inside the timed span.
	if err := exec(
		"SET GLOBAL gtid_slave_pos = "+quote(b.Before),
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", c.source.Port),
		"SET GLOBAL slave_parallel_threads = "+strconv.Itoa(a.Threads),
		"SET GLOBAL slave_parallel_mode = "+quote(mode),
	); err != nil {
		return err
	}
	start := "START SLAVE"
	if !a.Receive {
		if err := exec("START SLAVE IO_THREAD"); err != nil {
			return err
		}
		if err := waitIO(ctx, conn, end); err != nil {
			return err
		}
		start = "START SLAVE SQL_THREAD"
	}
	run.IncludesReceive = a.Receive
	cpu0 := serverCPU(c.replica)
	sp := startSampler(ctx, c.replica)
	began := time.Now()
	err = exec(start)
	if err == nil {
		err = waitApplied(ctx, conn, b.After)
	}
	run.Seconds = time.Since(began).Seconds()
	run.Sessions, run.LockWaits = sp.stop()
	if err != nil {
		return err
	}
	run.ServerCPU = round(serverCPU(c.replica)-cpu0, 2)
	run.Transactions = b.Transactions
	return exec("STOP SLAVE")
}

// waitIO waits until the IO thread has written the whole backlog (up to
// end) into the relay log.
func waitIO(ctx context.Context, conn *sql.Conn, end position) error {
	for {
		st, err := slaveStatus(ctx, conn)
		if err != nil {
			return err
		}
		if p, err := parsePosition(st["Gtid_IO_Pos"]); err == nil && p.reached(end) {
			return nil
		}
		if st["Slave_IO_Running"] == "No" && st["Last_IO_Error"] != "" {
			return fmt.Errorf("replica IO thread stopped: %s", st["Last_IO_Error"])
		}
		if !retry.Sleep(ctx, 50*time.Millisecond) {
			return fmt.Errorf("waiting for the relay log to hold the backlog: %w", ctx.Err())
		}
	}
}

// waitApplied waits until @@gtid_slave_pos reaches end. MASTER_GTID_WAIT
// wakes up when the replica commits the GTID, so the time is exact without
// polling; it is called with a short timeout so that a stopped SQL thread
// is noticed.
func waitApplied(ctx context.Context, conn *sql.Conn, end string) error {
	for {
		var r int
		if err := conn.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", end, waitSlice.Seconds()).Scan(&r); err != nil {
			return fmt.Errorf("replica: waiting for %s: %w", end, err)
		}
		if r == 0 {
			return nil
		}
		st, err := slaveStatus(ctx, conn)
		if err != nil {
			return err
		}
		if st["Slave_SQL_Running"] == "No" {
			return fmt.Errorf("replica SQL thread stopped at %s: %s", st["Gtid_Slave_Pos"], st["Last_SQL_Error"])
		}
	}
}

// slaveStatus returns SHOW SLAVE STATUS by column name.
func slaveStatus(ctx context.Context, conn *sql.Conn) (map[string]string, error) {
	rows, err := conn.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return nil, fmt.Errorf("replica: SHOW SLAVE STATUS: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("replica: SHOW SLAVE STATUS is empty")
	}
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	st := make(map[string]string, len(cols))
	for i, c := range cols {
		st[c] = vals[i].String
	}
	return st, rows.Err()
}
