package binlog

import (
	"bytes"
	"fmt"

	"github.com/go-mysql-org/go-mysql/replication"
)

// A source writes the same table map before every statement on a table,
// and go-mysql decodes it anew each time, optional metadata included
// (column names, signedness, primary key: the larger part of its cost,
// allocated afresh for every transaction). The Decoder's parser skips the
// optional metadata (skipOptionalMeta), which registers the table map for
// the rows events that follow, and then gives it the fields of the same
// bytes decoded in full once (fullTableMaps).

// maxTableMaps bounds the decoded table maps kept; table ids change after
// DDL and when a server reopens a table, so a long stream meets new ones.
const maxTableMaps = 1024

// fullTableMaps holds table maps decoded in full, by their event body (table
// id, names, types, metadata), the header and checksum left out.
type fullTableMaps map[string]*fullTableMap

// fullTableMap is a table map decoded in full, with its names as strings
// (Rows.Schema and Rows.Name), converted once.
type fullTableMap struct {
	tm            *replication.TableMapEvent
	schema, table string
	// compressed holds the indexes of MariaDB's compressed columns, which
	// tm types as BLOB or VARCHAR (see compressed.go).
	compressed []int
}

// forgetTableMaps empties the table maps kept, and the full parser's.
func (d *Decoder) forgetTableMaps() error {
	d.maps = fullTableMaps{}
	d.full = d.newParser()
	d.full.SetFlavor(d.format.Flavor.String())
	_, err := parseWith(d.full, d.format.Event)
	return err
}

func skipOptionalMeta([]byte) error { return nil }

// tableMap decodes a table map event: the parser registers it for the
// rows events that follow, and it gets the optional metadata decoded once
// for the same bytes, from a private copy (events' bytes may be reused),
// in which compressed columns have their plain types (see compressed.go).
func (d *Decoder) tableMap(ev Event) (*replication.BinlogEvent, error) {
	be, err := parseWith(d.parser, ev)
	if err != nil {
		return nil, err
	}
	tm, ok := be.Event.(*replication.TableMapEvent)
	if !ok {
		return nil, fmt.Errorf("%w: a table map event decoded as %T", ErrCorrupt, be.Event)
	}
	body := d.body(ev)
	full, ok := d.maps[string(body)]
	if !ok {
		if len(d.maps) >= maxTableMaps {
			// The full parser registers every table map it decodes.
			if err := d.forgetTableMaps(); err != nil {
				return nil, err
			}
		}
		data := bytes.Clone(ev.Data)
		var compressed []int
		if d.tableIDLen(replication.TABLE_MAP_EVENT) == tableIDLen {
			compressed = plainCompressed(data)
		}
		fb, err := parseWith(d.full, Event{Data: data, Pos: ev.Pos})
		if err != nil {
			return nil, err
		}
		ftm, ok := fb.Event.(*replication.TableMapEvent)
		if !ok {
			return nil, fmt.Errorf("%w: a table map event decoded as %T", ErrCorrupt, fb.Event)
		}
		full = &fullTableMap{tm: ftm, schema: string(ftm.Schema), table: string(ftm.Table), compressed: compressed}
		d.maps[string(body)] = full
	}
	*tm = *full.tm // the registered event, now with every field
	d.tables[tm.TableID] = full
	return be, nil
}
