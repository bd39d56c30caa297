package main

import (
	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/replicate"
)

func skipCmd() *cobra.Command {
	cfg := replicate.Default()
	var (
		tgt targetFlags
		log logFlags
	)
	cmd := &cobra.Command{
		Use:   "skip --target mysql://USER@HOST:PORT GTID...",
		Short: "Record transactions as applied without applying them (the one that stops replication)",
		Long: `skip records each GTID in the target's checkpoint as applied, without
applying it: the next paraply replicate steps over it. Use it for a
transaction that stops replication and that you settled by hand (applied
it yourself, or decided the target must not have it). It refuses while a
paraply process works on the target. What it records is logged.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := tgt.resolve(&cfg); err != nil {
				return err
			}
			if err := log.resolve(&cfg); err != nil {
				return err
			}
			skipped, had, err := replicate.Skip(cmd.Context(), cfg, args)
			if err != nil {
				return err
			}
			for _, g := range skipped {
				cfg.Logger.Warn("recorded as applied without applying it: replicate steps over it", "gtid", g, "target", cfg.Target.String())
			}
			for _, g := range had {
				cfg.Logger.Warn("the target's checkpoint already has it: nothing recorded", "gtid", g, "target", cfg.Target.String())
			}
			return nil
		},
	}
	tgt.add(cmd.Flags())
	log.add(cmd.Flags())
	return cmd
}
