// Package handover moves a MariaDB target between its own replication and
// paraply, both ways, without losing or repeating a transaction.
//
// MariaDB's replica keeps its position in gtid_slave_pos, paraply in its
// checkpoint (paraply.progress and paraply.applied). From native to
// paraply: paraply starts where gtid_slave_pos says when that is ahead of
// its own checkpoint (Start), and refuses while the target's replication
// threads run (Native.Running). From paraply to native: gtid_slave_pos is
// set to exactly what paraply applied (Position): the checkpoint's mark
// extended by the applied transactions that follow it without a gap. When
// paraply committed out of order (--preserve-commit-order=false) and was
// stopped in the middle, transactions beyond a gap are applied: they must
// be filled first (Position reports them), or the native replica would
// apply them twice.
package handover

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"
)

// Native is the state of the target's own replication.
type Native struct {
	// Known is false when the account may not read it (SHOW ALL SLAVES
	// STATUS needs SLAVE MONITOR or REPLICATION CLIENT); then nothing is
	// known to run.
	Known bool
	// Running names the replication connections whose IO or SQL thread
	// runs ("" is the default connection).
	Running []string
	// SlavePos is @@gtid_slave_pos: what the native replica applied.
	SlavePos string
}

// ReadNative reads the target's own replication state (MariaDB).
func ReadNative(ctx context.Context, db *sql.DB) (Native, error) {
	var n Native
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&n.SlavePos); err != nil {
		return n, fmt.Errorf("reading gtid_slave_pos: %w", err)
	}
	rows, err := db.QueryContext(ctx, "SHOW ALL SLAVES STATUS")
	var me *gomysql.MySQLError
	if errors.As(err, &me) && (me.Number == 1227 || me.Number == 1142) {
		return n, nil // not allowed to look: the caller says so
	}
	if err != nil {
		return n, fmt.Errorf("reading the target's replication status: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return n, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n.Known = true
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		var name string
		running := false
		for i, c := range cols {
			switch c {
			case "Connection_name":
				name = vals[i].String
			case "Slave_IO_Running", "Slave_SQL_Running":
				running = running || strings.EqualFold(vals[i].String, "Yes") || strings.EqualFold(vals[i].String, "Preparing")
			}
		}
		if running {
			n.Running = append(n.Running, name)
		}
	}
	return n, rows.Err()
}

// ErrNativeRunning is returned when the target's own replication threads
// run: two appliers would apply the source's transactions twice.
var ErrNativeRunning = errors.New("the target's own replication threads run (STOP SLAVE first)")

// Start decides where paraply starts on a target whose native replica
// may have applied transactions: the native position when it is ahead of
// paraply's checkpoint (or paraply has none), else the checkpoint.
// fromNative says which. Positions that disagree (each has transactions
// the other lacks) are an error: which transactions the target has is
// then unknown. So is a start position the operator gives
// (--start-gtid, when there is no checkpoint) that is not the native one:
// a former replica keeps gtid_slave_pos through RESET SLAVE, a restored
// dump may not have set it, and which one is stale only the operator
// knows.
func Start(checkpoint, startGTID string, n Native) (pos string, fromNative bool, err error) {
	if len(n.Running) > 0 {
		return "", false, fmt.Errorf("%w: connection %q", ErrNativeRunning, n.Running[0])
	}
	if strings.TrimSpace(n.SlavePos) == "" {
		return checkpoint, false, nil
	}
	native, err := mysql.ParseMariadbGTIDSet(n.SlavePos)
	if err != nil {
		return "", false, fmt.Errorf("gtid_slave_pos %q: %w", n.SlavePos, err)
	}
	if checkpoint == "" && startGTID != "" {
		given, err := mysql.ParseMariadbGTIDSet(startGTID)
		if err != nil {
			return "", false, fmt.Errorf("--start-gtid %q: %w", startGTID, err)
		}
		if !given.Equal(native) {
			return "", false, fmt.Errorf("--start-gtid %s and the target's gtid_slave_pos %s disagree: the target's own replication says it has applied up to %s. "+
				"Start without --start-gtid to continue from there, or, if it is stale, clear it first (SET GLOBAL gtid_slave_pos = '')", startGTID, n.SlavePos, n.SlavePos)
		}
	}
	if checkpoint == "" {
		return native.String(), true, nil
	}
	ours, err := mysql.ParseMariadbGTIDSet(checkpoint)
	if err != nil {
		return "", false, fmt.Errorf("paraply's checkpoint %q: %w", checkpoint, err)
	}
	switch {
	case ours.Contain(native):
		return checkpoint, false, nil
	case native.Contain(ours):
		return native.String(), true, nil
	}
	return "", false, fmt.Errorf("the target's gtid_slave_pos %s and paraply's checkpoint %s disagree: each holds transactions the other lacks", n.SlavePos, checkpoint)
}

// gtid is a MariaDB GTID.
type gtid struct {
	domain, server uint32
	seq            uint64
}

func parseGTID(s string) (gtid, bool) {
	p := strings.Split(s, "-")
	if len(p) != 3 {
		return gtid{}, false
	}
	d, err1 := strconv.ParseUint(p[0], 10, 32)
	sv, err2 := strconv.ParseUint(p[1], 10, 32)
	n, err3 := strconv.ParseUint(p[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return gtid{}, false
	}
	return gtid{uint32(d), uint32(sv), n}, true
}

// Applied is what paraply applied on the target, read from its checkpoint.
type Applied struct {
	// Pos is a native replica's gtid_slave_pos for it: the checkpoint's
	// mark extended, domain by domain, by the applied GTIDs that follow it
	// without a gap.
	Pos string
	// Missing names, per domain that has applied GTIDs beyond a gap (or a
	// transaction stopped between its DDL and its rows), the first GTID
	// not applied: Pos means "everything up to here, nothing after" only
	// once the gaps are filled.
	Missing []string
	// Last is the position of the last applied GTID of each domain: what
	// a run that fills the gaps must reach. It equals Pos without gaps.
	Last string
}

// Position computes what paraply applied from its checkpoint: the mark
// (position, a MariaDB GTID position) and the GTIDs applied after it.
func Position(position string, applied map[string]bool) (Applied, error) {
	at, err := parseMark(position)
	if err != nil {
		return Applied{}, err
	}
	x := &extension{at: at, gapIn: map[uint32]bool{}, last: map[uint32]gtid{}}
	x.extend(appliedBeyond(applied, at))
	x.stoppedDDL(applied)
	for d, g := range x.at {
		if _, ok := x.last[d]; !ok {
			x.last[d] = g
		}
	}
	slices.Sort(x.missing)
	return Applied{Pos: format(x.at), Missing: x.missing, Last: format(x.last)}, nil
}

// parseMark reads the checkpoint's mark, a MariaDB GTID position: the
// last GTID of each domain it names.
func parseMark(position string) (map[uint32]gtid, error) {
	at := map[uint32]gtid{}
	if strings.TrimSpace(position) != "" {
		set, err := mysql.ParseMariadbGTIDSet(position)
		if err != nil {
			return nil, fmt.Errorf("paraply's checkpoint %q: %w", position, err)
		}
		for _, g := range strings.Split(set.String(), ",") {
			if x, ok := parseGTID(strings.TrimSpace(g)); ok {
				at[x.domain] = x
			}
		}
	}
	return at, nil
}

// appliedBeyond is the applied GTIDs past the mark at, by domain.
func appliedBeyond(applied map[string]bool, at map[uint32]gtid) map[uint32][]gtid {
	beyond := map[uint32][]gtid{}
	for s := range applied {
		x, ok := parseGTID(s) // markers (GTID/ddlN) are not GTIDs
		if !ok {
			continue
		}
		if cur, ok := at[x.domain]; ok && x.seq <= cur.seq {
			continue
		}
		beyond[x.domain] = append(beyond[x.domain], x)
	}
	return beyond
}

// extension is Position at work: the mark extended so far, the last
// applied GTID of each domain, and the first GTID missing in each domain
// with a gap.
type extension struct {
	at      map[uint32]gtid
	missing []string
	gapIn   map[uint32]bool // domains in missing
	last    map[uint32]gtid
}

// extend moves the mark of each domain along the GTIDs applied beyond it
// for as long as they follow without a gap, and notes the first missing
// GTID where they do not.
func (x *extension) extend(beyond map[uint32][]gtid) {
	for d, gs := range beyond {
		// By server too: a domain with GTIDs of several servers at one
		// sequence number (a source switched over) must name the same
		// one in Missing and Last on every run, not whichever a map
		// walk met first.
		slices.SortFunc(gs, func(a, b gtid) int { return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.server, b.server)) })
		x.last[d] = gs[len(gs)-1]
		cur, known := x.at[d]
		if !known {
			// A domain the mark does not name began after it: the
			// source's position names every domain it has had, so its
			// first transaction is sequence number 1.
			cur = gtid{domain: d, server: gs[0].server}
		}
		i := 0
		for ; i < len(gs) && gs[i].seq == cur.seq+1; i++ {
			cur = gs[i]
		}
		if cur.seq > 0 {
			x.at[d] = cur
		}
		if i < len(gs) {
			x.missing = append(x.missing, fmt.Sprintf("%d-%d-%d", d, cur.server, cur.seq+1))
			x.gapIn[d] = true
		}
	}
}

// stoppedDDL notes as missing the transactions of applied whose DDL ran
// and whose rows did not.
//
// Such a transaction (a CREATE ... SELECT, or several DDL statements,
// stopped in between: only its GTID/ddlN markers are recorded) is missing
// however it is placed: a native replica would run its CREATE again and
// stop on the table it finds. The gap fill finishes it (its DDL is not run
// again).
func (x *extension) stoppedDDL(applied map[string]bool) {
	for s := range applied {
		base, _, marker := strings.Cut(s, "/")
		g, ok := parseGTID(base)
		if !marker || !ok || applied[base] {
			continue
		}
		cur, known := x.at[g.domain]
		if known && g.seq <= cur.seq {
			continue
		}
		if l, ok := x.last[g.domain]; !ok || l.seq < g.seq {
			x.last[g.domain] = g
		}
		if !x.gapIn[g.domain] {
			if !known {
				cur = gtid{domain: g.domain, server: g.server}
			}
			x.missing = append(x.missing, fmt.Sprintf("%d-%d-%d", g.domain, cur.server, cur.seq+1))
			x.gapIn[g.domain] = true
		}
	}
}

// format writes a GTID position, domains in order.
func format(at map[uint32]gtid) string {
	domains := make([]uint32, 0, len(at))
	for d := range at {
		domains = append(domains, d)
	}
	slices.Sort(domains)
	parts := make([]string, len(domains))
	for i, d := range domains {
		g := at[d]
		parts[i] = fmt.Sprintf("%d-%d-%d", g.domain, g.server, g.seq)
	}
	return strings.Join(parts, ",")
}

// SetSlavePos sets the target's gtid_slave_pos (its replication threads
// must be stopped; the account needs REPLICATION SLAVE ADMIN or SUPER).
func SetSlavePos(ctx context.Context, db *sql.DB, pos string) error {
	if _, err := db.ExecContext(ctx, "SET GLOBAL gtid_slave_pos = ?", pos); err != nil {
		return fmt.Errorf("setting the target's gtid_slave_pos to %s: %w", pos, err)
	}
	return nil
}
