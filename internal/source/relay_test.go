package source

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
)

// TestAdvanceAsGoMySQL: advance moves a position as go-mysql's Update
// does and formats it as its String does, for one domain and several,
// a new server in a domain, and MySQL positions.
func TestAdvanceAsGoMySQL(t *testing.T) {
	maria := func(d, s uint32, n uint64) binlog.GTID {
		return binlog.GTID{Flavor: binlog.FlavorMariaDB, Domain: d, Server: s, Seq: n}
	}
	sid := [16]byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	cases := []struct {
		flavor, start string
		steps         []binlog.GTID
	}{
		{mysql.MariaDBFlavor, "", []binlog.GTID{maria(0, 1, 1), maria(0, 1, 2), maria(0, 1, 3)}},
		{mysql.MariaDBFlavor, "0-1-5", []binlog.GTID{maria(0, 2, 6), maria(0, 1, 7)}},
		{mysql.MariaDBFlavor, "0-1-5,1-1-9", []binlog.GTID{maria(0, 1, 6), maria(1, 2, 10), maria(2, 3, 1)}},
		{mysql.MariaDBFlavor, "", []binlog.GTID{maria(7, 1, 1), maria(0, 1, 1), maria(7, 1, 2)}},
		{mysql.MySQLFlavor, "", []binlog.GTID{{Flavor: binlog.FlavorMySQL, SID: sid, Seq: 1}, {Flavor: binlog.FlavorMySQL, SID: sid, Seq: 2}}},
	}
	for _, c := range cases {
		pos, err := mysql.ParseGTIDSet(c.flavor, c.start)
		if err != nil {
			t.Fatal(err)
		}
		ref := pos.Clone()
		for _, g := range c.steps {
			got, err := advance(pos, g, g.String())
			if err != nil {
				t.Fatalf("from %q past %s: %v", c.start, g, err)
			}
			if err := ref.Update(g.String()); err != nil {
				t.Fatal(err)
			}
			if want := ref.String(); got != want || pos.String() != want {
				t.Errorf("from %q past %s: %q (position %q), go-mysql %q", c.start, g, got, pos.String(), want)
			}
		}
	}
}
