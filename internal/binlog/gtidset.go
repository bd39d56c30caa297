package binlog

import "github.com/go-mysql-org/go-mysql/mysql"

// GoMySQL is the flavor's name in go-mysql (mysql.MySQLFlavor or
// mysql.MariaDBFlavor), which says how its GTID sets are written.
func (f Flavor) GoMySQL() string {
	if f == FlavorMySQL {
		return mysql.MySQLFlavor
	}
	return mysql.MariaDBFlavor
}

// ParseGTIDSet reads a GTID set of flavor f: a position, or a set of
// transactions.
func ParseGTIDSet(f Flavor, s string) (mysql.GTIDSet, error) {
	return mysql.ParseGTIDSet(f.GoMySQL(), s)
}

// Covers reports whether position, a GTID set of flavor f, includes every
// transaction of set. Any position covers an empty set; a position that
// does not parse covers nothing else.
func Covers(f Flavor, position string, set mysql.GTIDSet) bool {
	if set.IsEmpty() {
		return true
	}
	p, err := ParseGTIDSet(f, position)
	return err == nil && p.Contain(set)
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
