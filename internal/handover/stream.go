package handover

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Several sources: MariaDB's multi-source replication runs one
// connection per source (CHANGE MASTER 'name' TO ...), all of them
// sharing gtid_slave_pos, each source in its own GTID domains. paraply's
// stream NAME hands over to and from the connection of the same name;
// the default stream to and from every connection, as before streams.

// ForStream narrows n to what concerns stream (see paraply replicate
// --name): the connection of its name, and in gtid_slave_pos the domains
// of domains (the stream's source's; all when nil). The default stream,
// named "" or "default", keeps all of n.
func (n Native) ForStream(stream string, domains []uint32) Native {
	if stream == "" || stream == "default" {
		return n
	}
	out := Native{Known: n.Known, SlavePos: onlyDomains(n.SlavePos, domains)}
	if slices.Contains(n.Running, stream) {
		out.Running = []string{stream}
	}
	return out
}

// Domains lists the GTID domains of a MariaDB position.
func Domains(position string) []uint32 {
	var out []uint32
	for _, p := range strings.Split(position, ",") {
		if g, ok := parseGTID(strings.TrimSpace(p)); ok && !slices.Contains(out, g.domain) {
			out = append(out, g.domain)
		}
	}
	return out
}

// onlyDomains keeps the GTIDs of position in domains (all when nil).
func onlyDomains(position string, domains []uint32) string {
	if domains == nil {
		return position
	}
	var kept []string
	for _, p := range strings.Split(position, ",") {
		if g, ok := parseGTID(strings.TrimSpace(p)); ok && slices.Contains(domains, g.domain) {
			kept = append(kept, strings.TrimSpace(p))
		}
	}
	return strings.Join(kept, ",")
}

// Merge is gtid_slave_pos with pos put in: pos's domains take pos's
// GTIDs, the other domains keep theirs (another connection's). A stream
// hands over only its own domains.
func Merge(slavePos, pos string) string {
	mine := Domains(pos)
	var out []string
	for _, p := range strings.Split(slavePos, ",") {
		if g, ok := parseGTID(strings.TrimSpace(p)); ok && !slices.Contains(mine, g.domain) {
			out = append(out, strings.TrimSpace(p))
		}
	}
	if pos != "" {
		out = append(out, pos)
	}
	return strings.Join(out, ",")
}

// SetStreamPos puts pos, a stream's position, into the target's
// gtid_slave_pos, keeping the other domains (the other connections'). The
// server changes gtid_slave_pos only while no connection runs, so the
// connections that run (other sources' streams handed over already) are
// stopped for the moment it takes, and started again; gtid_slave_pos is
// read once they have stopped, with what they applied. It returns the
// position set and the connections it paused.
func SetStreamPos(ctx context.Context, db *sql.DB, pos string) (set string, paused []string, err error) {
	n, err := ReadNative(ctx, db)
	if err != nil {
		return "", nil, err
	}
	for _, c := range n.Running {
		if _, err := db.ExecContext(ctx, "STOP SLAVE "+connection(c)); err != nil {
			return "", paused, errors.Join(fmt.Errorf("stopping replication connection %q for a moment: %w", c, err), restart(ctx, db, paused))
		}
		paused = append(paused, c)
	}
	var slavePos string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&slavePos); err != nil {
		return "", paused, errors.Join(fmt.Errorf("reading gtid_slave_pos: %w", err), restart(ctx, db, paused))
	}
	set = Merge(slavePos, pos)
	if err := SetSlavePos(ctx, db, set); err != nil {
		return "", paused, errors.Join(err, restart(ctx, db, paused))
	}
	return set, paused, restart(ctx, db, paused)
}

// restart starts the connections paused again.
func restart(ctx context.Context, db *sql.DB, paused []string) error {
	var errs []error
	for _, c := range paused {
		if _, err := db.ExecContext(ctx, "START SLAVE "+connection(c)); err != nil {
			errs = append(errs, fmt.Errorf("starting replication connection %q again: %w", c, err))
		}
	}
	return errors.Join(errs...)
}

// connection is a connection name as STOP and START SLAVE take it.
func connection(name string) string {
	if name == "" {
		return ""
	}
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}
