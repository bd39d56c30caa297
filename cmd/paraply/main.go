// Command paraply is a parallel replication applier for MySQL and MariaDB:
// it reads a source's row-based binlog, works out which transactions are
// independent from the rows they touch, and applies them to a target with
// many workers, exactly once. `paraply analyze` tells, offline, how parallel
// a binlog could be applied and what serializes it.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"
)

// errSilent is returned by a command that already printed its error.
var errSilent = errors.New("")

func main() {
	// The driver logs connection trouble on its own; paraply reports what
	// matters (retries, reconnects) itself.
	_ = mysql.SetLogger(&mysql.NopLogger{})
	root := &cobra.Command{
		Use:           "paraply",
		Short:         "Parallel replication applier for MySQL and MariaDB",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(analyzeCmd(), replicateCmd(), applyCmd(), handoverCmd(), skipCmd(), statusCmd(), verifyCmd(), demoCmd())
	stop, err := startProfile(os.Getenv("PARAPLY_CPU_PROFILE"))
	if err == nil {
		err = root.Execute()
		stop()
	}
	if err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintln(os.Stderr, "paraply:", err)
		}
		os.Exit(1)
	}
}

// startProfile writes a CPU profile of the whole command to path (none
// when path is ""): the benchmark sets PARAPLY_CPU_PROFILE to keep a
// profile of every run beside its results. The returned function ends
// it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("PARAPLY_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("PARAPLY_CPU_PROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
