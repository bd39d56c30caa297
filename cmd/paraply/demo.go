package main

import (
	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/demo"
	"github.com/paraply/paraply/internal/sandbox"
)

func demoCmd() *cobra.Command {
	o := demo.Defaults()
	var analyzeOnly bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start sandboxed MariaDB servers, run a sysbench workload and show paraply at work",
		Long: `demo starts a sandboxed MariaDB source and target (temporary directories,
free loopback ports, stopped at the end), runs sysbench oltp_read_write on the
source while paraply replicates it with 8 workers, prints throughput and lag
every second, then verifies that the target equals the source. With --analyze
it shows paraply analyze on sysbench binlogs from 1 and 16 client threads
instead.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer sandbox.HandleSignals()()
			o.Out = cmd.OutOrStdout()
			if analyzeOnly {
				return demo.Analyze(cmd.Context(), o)
			}
			return demo.Replicate(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&analyzeOnly, "analyze", false, "show paraply analyze on sysbench binlogs instead of replication")
	f := cmd.Flags()
	f.IntVar(&o.Tables, "tables", o.Tables, "sysbench tables")
	f.IntVar(&o.TableSize, "table-size", o.TableSize, "rows per sysbench table")
	f.IntVar(&o.Events, "events", o.Events, "transactions per sysbench run")
	f.IntSliceVar(&o.Threads, "threads", o.Threads, "sysbench client thread counts to compare")
	return cmd
}
