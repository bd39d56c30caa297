package main

import (
	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/demo"
	"github.com/paraply/paraply/internal/sandbox"
)

func demoCmd() *cobra.Command {
	o := demo.Defaults()
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start sandboxed MariaDB servers, run a sysbench workload and show paraply at work",
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer sandbox.HandleSignals()()
			o.Out = cmd.OutOrStdout()
			return demo.Analyze(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Tables, "tables", o.Tables, "sysbench tables")
	f.IntVar(&o.TableSize, "table-size", o.TableSize, "rows per sysbench table")
	f.IntVar(&o.Events, "events", o.Events, "transactions per sysbench run")
	f.IntSliceVar(&o.Threads, "threads", o.Threads, "sysbench client thread counts to compare")
	return cmd
}
