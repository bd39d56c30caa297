package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/replicate"
)

func skipCmd() *cobra.Command {
	cfg := replicate.Default()
	var pipe pipelineFlags
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
			for _, a := range args {
				if _, err := binlog.ParseGTID(a); err != nil {
					return fmt.Errorf("%q: %w", a, err)
				}
			}
			if err := pipe.resolve(&cfg); err != nil {
				return err
			}
			ctx := cmd.Context()
			db, err := cfg.Target.WithTLS(cfg.TargetTLS).Open(nil)
			if err != nil {
				return err
			}
			defer db.Close()
			release, err := checkpoint.Lock(ctx, db)
			if err != nil {
				return fmt.Errorf("target %s: %w", cfg.Target, err)
			}
			defer release()
			store := checkpoint.NewStoreFor(db, checkpoint.Replicate)
			if err := store.Init(ctx); err != nil {
				return err
			}
			if err := store.Skip(ctx, args); err != nil {
				return err
			}
			for _, g := range args {
				cfg.Logger.Warn("recorded as applied without applying it: replicate steps over it", "gtid", g, "target", cfg.Target.String())
			}
			return nil
		},
	}
	pipe.add(cmd.Flags(), &cfg)
	return cmd
}
