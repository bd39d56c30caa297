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
	stop, err := startProfiles(os.Getenv("PARAPLY_CPU_PROFILE"), os.Getenv("PARAPLY_HEAP_PROFILE"))
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
