package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/verify"
	"github.com/paraply/paraply/internal/workload"
)

// gtidInDump finds the position mariadb-dump --gtid --master-data=2 writes.
var gtidInDump = regexp.MustCompile(`gtid_slave_pos='([0-9,-]*)'`)

// gtidDump takes a consistent dump of databases on src as the README says
// (mariadb-dump --single-transaction --gtid --master-data=2) and returns
// it with the GTID position it is at.
func gtidDump(t *testing.T, src *sandbox.Server, databases ...string) (*bytes.Buffer, string) {
	t.Helper()
	args := append([]string{"--no-defaults", "-h", src.Host, "-P", strconv.Itoa(src.Port), "-u", src.User,
		"--single-transaction", "--gtid", "--master-data=2", "--databases"}, databases...)
	dump := exec.Command("mariadb-dump", args...)
	var out, stderr bytes.Buffer
	dump.Stdout, dump.Stderr = &out, &stderr
	if err := dump.Run(); err != nil {
		t.Fatalf("mariadb-dump: %v\n%s", err, stderr.String())
	}
	m := gtidInDump.FindSubmatch(out.Bytes())
	if m == nil {
		t.Fatalf("no gtid_slave_pos in the dump")
	}
	return &out, string(m[1])
}

// TestSeedFromExistingSource follows the README: a consistent dump of a
// source that already holds data and keeps writing, loaded into an empty
// target, then replicate --start-gtid from the dump's position.
func TestSeedFromExistingSource(t *testing.T) {
	ctx := context.Background()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "seedsrc", Binlog: true})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "seedtgt", ServerID: 2})
	if err := src.CreateDatabase(ctx, "sbtest"); err != nil {
		t.Fatal(err)
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_write_only", 2, 2000, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := workload.Sysbench(ctx, src, "run", "oltp_write_only", 2, 2000, 2, 500); err != nil {
		t.Fatal(err)
	}
	out, start := gtidDump(t, src, "sbtest")
	// The source keeps writing after the dump, schema changes included.
	if err := workload.Sysbench(ctx, src, "run", "oltp_write_only", 2, 2000, 2, 500); err != nil {
		t.Fatal(err)
	}
	if err := src.Exec(ctx, "ALTER TABLE sbtest.sbtest1 ADD COLUMN note VARCHAR(20) NULL", "UPDATE sbtest.sbtest1 SET note = 'after' WHERE id < 50"); err != nil {
		t.Fatal(err)
	}
	w := workload.HotRow()
	if err := src.Exec(ctx, w.Setup...); err != nil {
		t.Fatal(err)
	}
	load := tgt.Client(ctx)
	load.Stdin = out
	if b, err := load.CombinedOutput(); err != nil {
		t.Fatalf("loading the dump: %v\n%s", err, b)
	}
	cmd := paraply("replicate", "--source", src.URL(), "--target", tgt.URL(), "--start-gtid", start,
		"--relay-dir", t.TempDir(), "--until-caught-up", "--log-level", "warn", "--http", "127.0.0.1:0")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("replicate: %v\n%s", err, logs.String())
	}
	sdb, _ := src.DB("")
	tdb, _ := tgt.DB("")
	defer sdb.Close()
	defer tdb.Close()
	rep, err := verify.Run(ctx, verify.Options{Source: sdb, Target: tdb})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equal() {
		rep.WriteText(os.Stderr)
		t.Fatal("target differs from source")
	}
}
