package source

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
)

// ErrPositionGone is returned (as a *PositionError, which matches it with
// errors.Is) when the source cannot stream from a position: it purged the
// binlogs that hold it, or it lacks transactions the position includes.
var ErrPositionGone = errors.New("the source cannot stream from the position")

// PositionProblem says why a source cannot stream from a position.
type PositionProblem int

const (
	// Refused: the source refused it for a reason the source's state does
	// not explain (its own message is in PositionError.Err).
	Refused PositionProblem = iota
	// Purged: the binlogs after the position are gone from the source.
	Purged
	// Lacking: the position includes transactions the source's binlog
	// does not have: ahead of the source, or errant transactions (written
	// on a target, or on an old primary after a failover).
	Lacking
)

// PositionError says why a source cannot stream from Position.
type PositionError struct {
	Problem PositionProblem
	// Position was asked for; Source is the source's position
	// (gtid_binlog_pos), Oldest the position at the start of its oldest
	// binlog ("" if not known).
	Position, Source, Oldest string
	// Lacks names, per domain, the GTIDs the position has and the
	// source's binlog does not (Lacking).
	Lacks []string
	// Err is the source's own refusal, if it refused.
	Err error
	// Start: Position is a first start's (--start-gtid), not a
	// checkpoint's.
	Start bool
}

// Error says what the source lacks, in the source's terms, and what to do.
func (e *PositionError) Error() string {
	var b strings.Builder
	switch {
	case e.Problem == Purged:
		fmt.Fprintf(&b, "the source has purged the binlogs after position %s", e.Position)
		if e.Oldest != "" {
			fmt.Fprintf(&b, " (its oldest binlog starts after %s)", e.Oldest)
		}
		b.WriteString(": seed the target again from a dump of the source and start from the dump's position (README step 2), " +
			"and keep binlogs on the source longer than paraply may be stopped (expire_logs_days)")
	case e.Problem == Lacking && e.Start:
		fmt.Fprintf(&b, "position %s is ahead of the source: it includes transactions the source's binlog does not have (%s); the source is at %s. "+
			"Give the position the target's data was taken at", e.Position, strings.Join(e.Lacks, "; "), e.Source)
	case e.Problem == Lacking:
		fmt.Fprintf(&b, "the target has transactions the source does not have (errant transactions: written on the target, or on an old primary "+
			"and lost in a failover): %s. The target's position is %s, the source's %s. "+
			"Apply them on the source too, or seed the target again from the source", strings.Join(e.Lacks, "; "), e.Position, e.Source)
	default:
		fmt.Fprintf(&b, "the source cannot stream from position %s", e.Position)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, " (the source said: %v)", e.Err)
	}
	return b.String()
}

// Is makes every PositionError match ErrPositionGone.
func (e *PositionError) Is(target error) bool { return target == ErrPositionGone }

// Unwrap is the source's refusal.
func (e *PositionError) Unwrap() error { return e.Err }

// Check checks, before anything is written anywhere, that the source can
// stream from pos: that pos includes no transaction the source lacks (a
// position ahead of the source, or a typo, would otherwise wait for
// transactions that never come, or take the source's position for one it
// has reached), and, for a first start, that the source accepts a stream
// from it (one replication connection that reads the source's first
// answer). It returns a *PositionError when the source cannot.
func Check(ctx context.Context, cfg Config, pos string, first bool) error {
	db, err := cfg.Source.WithTLS(cfg.TLS).Open(nil)
	if err != nil {
		return err
	}
	defer db.Close()
	if cfg.Flavor == binlog.FlavorMariaDB {
		st, err := readState(ctx, db)
		if err != nil {
			return err
		}
		if lacks := st.lacks(pos); len(lacks) > 0 {
			return &PositionError{Problem: Lacking, Position: pos, Source: st.pos, Lacks: lacks, Start: first}
		}
	}
	if !first {
		return nil
	}
	set, err := mysql.ParseGTIDSet(flavorName(cfg.Flavor), pos)
	if err != nil {
		return fmt.Errorf("position %q: %w", pos, err)
	}
	return probe(ctx, cfg, db, set)
}

// probe opens a replication connection from pos and reads the source's
// first answer: MariaDB and MySQL check a GTID start position before they
// send the first event.
func probe(ctx context.Context, cfg Config, db *sql.DB, pos mysql.GTIDSet) error {
	var dialer net.Dialer
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := openDump(pctx, dumpConfig{cfg: cfg, dialer: dialer.DialContext, wait: func(time.Time) {}, got: func() {}}, pos)
	if err != nil {
		return err
	}
	defer d.close()
	stop := context.AfterFunc(pctx, d.close)
	defer stop()
	if _, err := d.next(); err != nil {
		if gone(err) {
			perr := Explain(ctx, db, cfg.Flavor, pos.String(), err)
			perr.Start = true
			return perr
		}
		return fmt.Errorf("asking the source for its binlog from %s: %w", pos, err)
	}
	return nil
}

// Explain turns the source's refusal to stream from pos (refusal: error
// 1236) into a *PositionError that says why, read from the source's state
// (db): purged binlogs, or transactions the source lacks. A state it
// cannot read leaves the source's own message.
func Explain(ctx context.Context, db *sql.DB, f binlog.Flavor, pos string, refusal error) *PositionError {
	e := &PositionError{Problem: Refused, Position: pos, Err: refusal}
	if f != binlog.FlavorMariaDB {
		return e
	}
	st, err := readState(ctx, db)
	if err != nil {
		return e
	}
	e.Source = st.pos
	if lacks := st.lacks(pos); len(lacks) > 0 {
		e.Problem, e.Lacks = Lacking, lacks
		return e
	}
	if oldest, ok := oldestStart(ctx, db); ok {
		e.Oldest = oldest
		if purgedPast(pos, oldest) {
			e.Problem = Purged
		}
	}
	return e
}

// sourceState is a MariaDB source's GTID state: its position, and the
// last sequence number each server wrote in each domain
// (gtid_binlog_state).
type sourceState struct {
	pos  string
	last map[[2]uint32]uint64 // (domain, server) → sequence number
	top  map[uint32]uint64    // domain → highest sequence number
}

func readState(ctx context.Context, db *sql.DB) (sourceState, error) {
	st := sourceState{last: map[[2]uint32]uint64{}, top: map[uint32]uint64{}}
	var state string
	if err := db.QueryRowContext(ctx, "SELECT @@global.gtid_binlog_pos, @@global.gtid_binlog_state").Scan(&st.pos, &state); err != nil {
		return st, fmt.Errorf("reading the source's GTID state: %w", err)
	}
	for _, g := range mariaGTIDs(state) {
		st.last[[2]uint32{g.Domain, g.Server}] = g.Seq
		st.top[g.Domain] = max(st.top[g.Domain], g.Seq)
	}
	return st, nil
}

// lacks names, per domain of pos, the transactions pos includes that the
// source's binlog does not: a sequence number past the domain's highest,
// or past the last one pos's server wrote there, as MariaDB's own check of
// a replica's start position (check_slave_start_position) finds them. A
// domain at sequence number 0 is the domain's beginning, and a domain the
// source has nothing in may be another source's: nothing lacks in either.
func (st sourceState) lacks(pos string) []string {
	var out []string
	for _, g := range mariaGTIDs(pos) {
		if g.Seq == 0 {
			continue
		}
		top, hasDomain := st.top[g.Domain]
		last, hasServer := st.last[[2]uint32{g.Domain, g.Server}]
		switch {
		case !hasDomain:
			// As MariaDB: one source of several may have nothing in a
			// domain another serves; it is checked when the domain comes.
		case g.Seq > top:
			out = append(out, fmt.Sprintf("%s: the source's newest in domain %d is %s", seqRange(g, top+1), g.Domain, st.newest(g.Domain)))
		case !hasServer:
			out = append(out, fmt.Sprintf("%s and what server %d wrote before it in domain %d: the source has no transaction of server %d there", g, g.Server, g.Domain, g.Server))
		case last < g.Seq:
			out = append(out, fmt.Sprintf("%s: the source's newest of server %d in domain %d is %d-%d-%d", seqRange(g, last+1), g.Server, g.Domain, g.Domain, g.Server, last))
		}
	}
	return out
}

// newest is the GTID with domain d's highest sequence number.
func (st sourceState) newest(d uint32) string {
	for k, seq := range st.last {
		if k[0] == d && seq == st.top[d] {
			return fmt.Sprintf("%d-%d-%d", d, k[1], seq)
		}
	}
	return ""
}

// seqRange names the GTIDs of g's domain and server from sequence number
// from to g's.
func seqRange(g binlog.GTID, from uint64) string {
	if from >= g.Seq {
		return g.String()
	}
	return fmt.Sprintf("%d-%d-%d to %s (%d transactions)", g.Domain, g.Server, from, g, g.Seq-from+1)
}

// oldestStart is the GTID position at the start of the source's oldest
// binlog: a replica's position before it is purged. It needs BINLOG
// MONITOR (SHOW BINARY LOGS); without it, ok is false.
func oldestStart(ctx context.Context, db *sql.DB) (string, bool) {
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return "", false
	}
	var first string
	if rows.Next() {
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		vals[0] = &first
		for i := 1; i < len(vals); i++ {
			vals[i] = new(sql.RawBytes)
		}
		if rows.Scan(vals...) != nil {
			first = ""
		}
	}
	rows.Close()
	if first == "" {
		return "", false
	}
	var pos sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT BINLOG_GTID_POS(?, 4)", first).Scan(&pos); err != nil || !pos.Valid {
		return "", false
	}
	return pos.String, true
}

// purgedPast reports whether pos lies before oldest, the position at the
// start of the source's oldest binlog, in some domain: its transactions
// after pos there are gone.
func purgedPast(pos, oldest string) bool {
	at := map[uint32]uint64{}
	for _, g := range mariaGTIDs(pos) {
		at[g.Domain] = g.Seq
	}
	for _, o := range mariaGTIDs(oldest) {
		if seq, ok := at[o.Domain]; !ok || seq < o.Seq {
			return true
		}
	}
	return false
}

// mariaGTIDs reads a MariaDB GTID list; what does not parse is left out.
func mariaGTIDs(list string) []binlog.GTID {
	var out []binlog.GTID
	for s := range strings.SplitSeq(list, ",") {
		if g, err := binlog.ParseGTID(s); err == nil && g.Flavor == binlog.FlavorMariaDB {
			out = append(out, g)
		}
	}
	return out
}
