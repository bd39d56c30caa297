package workload

import (
	"context"
	"fmt"
	"strconv"

	"github.com/paraply/paraply/internal/sandbox"
)

// Sysbench runs one sysbench command (prepare or run) against src's sbtest.
func Sysbench(ctx context.Context, src *sandbox.Server, command, script string, tables, size, threads, events int) error {
	args := []string{
		"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(size),
		"--threads=" + strconv.Itoa(threads), "--rand-seed=42",
	}
	if command == "run" {
		args = append(args, "--events="+strconv.Itoa(events), "--time=0", "--report-interval=0")
	}
	cmd := src.Sysbench(ctx, script, append(args, command)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("sysbench %s %s: %w\n%s", script, command, err, out)
	}
	return nil
}
