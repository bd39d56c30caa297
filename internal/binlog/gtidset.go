package binlog

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// GoMySQL is the flavor's name in go-mysql (mysql.MySQLFlavor or
// mysql.MariaDBFlavor), which says how its GTID sets are written.
func (f Flavor) GoMySQL() string {
	if f == FlavorMySQL {
		return mysql.MySQLFlavor
	}
	return mysql.MariaDBFlavor
}

// ParseGTIDSet reads a GTID set of flavor f: a position, or a set of
// transactions. Its error quotes s and says how the flavor writes one
// (go-mysql's says "invalid Mariadb GTID x, must domain-server-sequence").
func ParseGTIDSet(f Flavor, s string) (mysql.GTIDSet, error) {
	set, err := mysql.ParseGTIDSet(f.GoMySQL(), s)
	if err == nil {
		return set, nil
	}
	if f == FlavorMySQL {
		return nil, fmt.Errorf("GTID set %q is not a MySQL one: write it uuid:N[-M][:N[-M]...], comma-separated "+
			"(such as 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-77): %w", s, err)
	}
	for _, g := range strings.Split(s, ",") {
		if _, err := mysql.ParseMariadbGTID(g); err != nil {
			return nil, fmt.Errorf("GTID position %q is not a MariaDB one (%q is no GTID): write each domain's last GTID as domain-server-sequence, "+
				"three numbers, comma-separated (such as 0-1-4711 or 0-1-4711,1-2-300)", s, g)
		}
	}
	return nil, fmt.Errorf("GTID position %q: %w", s, err)
}

// Covers reports whether position, a GTID set of flavor f, includes every
// transaction of set. Any position covers an empty set; a position that
// does not parse covers nothing else.
func Covers(f Flavor, position string, set mysql.GTIDSet) bool {
	if set.IsEmpty() {
		return true
	}
	if m, ok := set.(*mysql.MariadbGTIDSet); ok && f == FlavorMariaDB {
		if covers, read := coversMariaDB(position, m); read {
			return covers
		}
	}
	p, err := ParseGTIDSet(f, position)
	return err == nil && p.Contain(set)
}

// coversMariaDB is Covers for a MariaDB position as servers write one
// (domain-server-sequence, comma-separated), read in place: the applier
// asks it once a transaction, and parsing the position into a set cost
// 3% of its CPU and 15% of its allocations. read is false where the
// answer needs the full parse; false answers need no check of the whole
// text, since a position that does not parse covers nothing either. As
// go-mysql's, the last entry of a domain is its position.
func coversMariaDB(position string, set *mysql.MariadbGTIDSet) (covers, read bool) {
	for domain, want := range set.Sets {
		seq, found, ok := lastMariaDBSeq(position, domain)
		if !ok {
			return false, false
		}
		if !found || seq < want.SequenceNumber {
			return false, true
		}
	}
	return true, true
}

// lastMariaDBSeq returns the sequence number of domain's last entry in
// position, and ok false unless every entry is a MariaDB GTID
// (parseMariaDBGTID).
func lastMariaDBSeq(position string, domain uint32) (seq uint64, found, ok bool) {
	for entry := range strings.SplitSeq(position, ",") {
		g, ok := parseMariaDBGTID(entry)
		if !ok {
			return 0, false, false
		}
		if g.Domain == domain {
			seq, found = g.Seq, true
		}
	}
	return seq, found, true
}

// CheckPosition reports whether s, a position a user gave, is a GTID
// position of either flavor ("" is none, and is one): MariaDB's
// domain-server-sequence list, or MySQL's uuid:interval set. It reads each
// GTID whole, so that a typo ("0-1-13683x") is refused before anything is
// written, not taken for another position.
func CheckPosition(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	maria := true
	for g := range strings.SplitSeq(s, ",") {
		if p, err := ParseGTID(g); err != nil || p.Flavor != FlavorMariaDB {
			maria = false
			break
		}
	}
	if maria {
		return nil
	}
	if _, err := mysql.ParseMysqlGTIDSet(s); err == nil && strings.Contains(s, ":") {
		return nil
	}
	return fmt.Errorf("%q is not a GTID position: MariaDB's is domain-server-sequence, as 0-1-4711 (one per domain, comma-separated; "+
		"gtid_binlog_pos and gtid_slave_pos are written so), MySQL's uuid:interval, as 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4711", s)
}

// Count is how many transactions a GTID position of flavor f stands for:
// the sum of its domains' sequence numbers (MariaDB, whose sequence
// numbers count a domain's transactions), or of its intervals' lengths
// (MySQL). Two positions' counts differ by the transactions between them,
// which makes a source's write rate of two readings of its position.
func Count(f Flavor, position string) (int64, error) {
	set, err := ParseGTIDSet(f, position)
	if err != nil {
		return 0, err
	}
	var n int64
	switch s := set.(type) {
	case *mysql.MariadbGTIDSet:
		for _, g := range s.Sets {
			n += int64(g.SequenceNumber)
		}
	case *mysql.MysqlGTIDSet:
		for _, tags := range *s {
			for _, ivs := range tags {
				for _, iv := range ivs {
					n += iv.Stop - iv.Start
				}
			}
		}
	}
	return n, nil
}
