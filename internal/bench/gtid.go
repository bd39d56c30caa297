package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// position is a MariaDB GTID position (@@gtid_binlog_pos, @@gtid_slave_pos):
// the last sequence number of each replication domain.
type position map[uint64]uint64

// parsePosition parses "0-1-100,1-2-7". The empty string is the empty
// position.
func parsePosition(s string) (position, error) {
	p := position{}
	for _, g := range strings.Split(s, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		parts := strings.Split(g, "-")
		if len(parts) != 3 {
			return nil, fmt.Errorf("GTID %q: want domain-server-sequence", g)
		}
		domain, err1 := strconv.ParseUint(parts[0], 10, 32)
		_, err2 := strconv.ParseUint(parts[1], 10, 32)
		seq, err3 := strconv.ParseUint(parts[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("GTID %q: not numbers", g)
		}
		p[domain] = seq
	}
	return p, nil
}

// reached reports whether p includes every domain of want at least as far.
func (p position) reached(want position) bool {
	for d, seq := range want {
		if p[d] < seq {
			return false
		}
	}
	return true
}

// since counts the transactions from before to p, over all domains.
func (p position) since(before position) int64 {
	var n int64
	for d, seq := range p {
		n += int64(seq) - int64(before[d])
	}
	return n
}
