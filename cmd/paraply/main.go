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
	"github.com/spf13/pflag"

	"github.com/paraply/paraply/internal/config"
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
	root.AddCommand(analyzeCmd(), replicateCmd(), cloneCmd(), applyCmd(), handoverCmd(), skipCmd(), statusCmd(), verifyCmd(), demoCmd(), versionCmd())
	addConfigFile(root)
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

// addConfigFile gives every command --config: one file of settings, one
// "name = value" a line, that all the commands read, each taking the
// settings it has (replicate's --source is verify's and handover's too) and
// skipping the other commands' ones. The command line wins over the file.
func addConfigFile(root *cobra.Command) {
	var path string
	root.PersistentFlags().StringVar(&path, "config", "", "file of settings, one 'name = value' per line, shared by every command (the command line wins)")
	known := map[string]bool{}
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
	}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if path == "" {
			return nil
		}
		return config.ApplyFile(cmd.Flags(), path, func(name string) bool { return known[name] })
	}
}
