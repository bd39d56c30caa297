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
