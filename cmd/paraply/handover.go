package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/replicate"
)

func handoverCmd() *cobra.Command {
	cfg := replicate.Default()
	var (
		src     sourceFlags
		tgt     targetFlags
		filters filterFlags
		log     logFlags
	)
	cmd := &cobra.Command{
		Use:   "handover --target mysql://USER@HOST:PORT [--source mysql://USER@HOST:PORT]",
		Short: "Hand a MariaDB target over to its own replication: gtid_slave_pos = what paraply applied",
		Long: `handover sets the target's gtid_slave_pos to exactly what paraply applied
there (everything up to it, nothing after it) and prints the statements that
let MariaDB's own replication continue from there. Run it after paraply
stopped, cleanly or not; it refuses while a paraply process works on the
target, or while the target's own replication threads run.

If paraply committed out of order (--preserve-commit-order=false) and was
stopped with transactions applied after one that is not, handover first
applies the missing ones from --source (in order, up to the last one
applied); without --source it says which are missing.

The other way, paraply replicate on a target whose own replication was
stopped starts where that stopped (gtid_slave_pos) when it is ahead of
paraply's checkpoint.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := src.resolve(&cfg); err != nil {
				return err
			}
			if err := tgt.resolve(&cfg); err != nil {
				return err
			}
			if err := filters.resolve(&cfg); err != nil {
				return err
			}
			if err := log.resolve(&cfg); err != nil {
				return err
			}
			pos, err := replicate.Handover(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			host, port, ssl, conn := "<source host>", "<port>", "", ""
			if cfg.Name != checkpoint.DefaultStream {
				// MariaDB's multi-source connection of the stream's name.
				conn = " '" + cfg.Name + "'"
			}
			if cfg.Source.Host != "" {
				host, port = cfg.Source.Host, fmt.Sprint(cfg.Source.Port)
			}
			if cfg.SourceTLS != nil {
				ssl = ", MASTER_SSL=1"
			}
			// MariaDB's replica uses an account of its own (repl, with
			// REPLICATION SLAVE: docs/security.md), not paraply's.
			fmt.Fprintf(cmd.OutOrStdout(), "The target's gtid_slave_pos is %s: what paraply applied.\n"+
				"To let MariaDB's own replication continue from there, run on the target:\n\n"+
				"  CHANGE MASTER%s TO MASTER_HOST='%s', MASTER_PORT=%s, MASTER_USER='repl', MASTER_PASSWORD='...', MASTER_USE_GTID=slave_pos%s;\n"+
				"  START SLAVE%s;\n\n"+
				"(repl is the source's account for MariaDB's replica, docs/security.md.) Before paraply takes over again: STOP SLAVE%s; RESET SLAVE%s ALL;\n",
				pos, conn, host, port, ssl, conn, conn, conn)
			return nil
		},
	}
	f := cmd.Flags()
	src.add(f, &cfg)
	tgt.add(f)
	// What the gap fill applies must be applied as the run it follows
	// applied the rest: the same filters and GTIDs (--config reads that
	// run's file).
	filters.add(f)
	addPreserveGTIDs(f, &cfg)
	log.add(f)
	return cmd
}
