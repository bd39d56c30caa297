package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/config"
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
			host, port, conn := "<source host>", "<port>", ""
			if cfg.Name != checkpoint.DefaultStream {
				// MariaDB's multi-source connection of the stream's name.
				conn = " '" + cfg.Name + "'"
			}
			if cfg.Source.Host != "" {
				host, port = cfg.Source.Host, fmt.Sprint(cfg.Source.Port)
			}
			ssl, note, err := changeMasterTLS(src.tls)
			if err != nil {
				return fmt.Errorf("--source-tls: %w", err)
			}
			// MariaDB's replica uses an account of its own (repl, with
			// REPLICATION SLAVE: docs/security.md), not paraply's.
			fmt.Fprintf(cmd.OutOrStdout(), "The target's gtid_slave_pos is %s: what paraply applied.\n"+
				"To let MariaDB's own replication continue from there, run on the target:\n\n"+
				"  CHANGE MASTER%s TO MASTER_HOST=%s, MASTER_PORT=%s, MASTER_USER='repl', MASTER_PASSWORD='...', MASTER_USE_GTID=slave_pos%s;\n"+
				"  START SLAVE%s;\n\n"+
				"%s(repl is the source's account for MariaDB's replica, docs/security.md.) Before paraply takes over again: STOP SLAVE%s; RESET SLAVE%s ALL;\n",
				pos, conn, sqlString(host), port, ssl, conn, note, conn, conn)
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

// changeMasterTLS returns the TLS options of the CHANGE MASTER handover
// prints, so that MariaDB's replica connects to the source as paraply's
// own connection did (t, the --source-tls flags): nothing in clear text;
// with "on", MASTER_SSL_VERIFY_SERVER_CERT=1, which checks the source's
// certificate and host name as paraply does, against paraply's CA file
// (MASTER_SSL_CA; without one, the system's roots, as paraply's); with
// "skip-verify", encryption alone, said explicitly (a server whose
// default is to verify would refuse the certificate paraply accepted).
// note, if not "", says what the statement needs besides.
func changeMasterTLS(t tlsFlags) (ssl, note string, err error) {
	mode, err := config.ParseTLSMode(t.mode)
	if err != nil {
		return "", "", err
	}
	switch mode {
	case config.TLSOff:
		return "", "", nil
	case config.TLSSkipVerify:
		return ", MASTER_SSL=1, MASTER_SSL_VERIFY_SERVER_CERT=0", "(--source-tls skip-verify: the replica encrypts but, as paraply, does not check whom it talks to.)\n", nil
	}
	ssl = ", MASTER_SSL=1, MASTER_SSL_VERIFY_SERVER_CERT=1"
	if t.ca != "" {
		ssl = ", MASTER_SSL=1, MASTER_SSL_CA=" + sqlString(t.ca) + ", MASTER_SSL_VERIFY_SERVER_CERT=1"
		note = "(MASTER_SSL_CA is --source-tls-ca, which the target's server reads: put the CA there if paraply runs on another host.)\n"
	}
	if t.cert != "" {
		note += "(paraply's client certificate is its own account's: if repl says REQUIRE X509, add MASTER_SSL_CERT and MASTER_SSL_KEY of one for repl.)\n"
	}
	return ssl, note, nil
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}
