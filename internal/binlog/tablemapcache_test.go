package binlog

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/fixtures"
)

// TestTableMapsAsGoMySQL decodes every transaction of real binlogs and
// compares the table map of each rows event with go-mysql's own decoding
// of the table map event before it: every field, optional metadata
// included, must be the same, whether the Decoder decoded those bytes now
// or reused an earlier decoding.
func TestTableMapsAsGoMySQL(t *testing.T) {
	paths := []string{simpleBinlog(t), filepath.Join(fixtures.Root(), "internal", "binlog", "testdata", "mariadb-10.11-fidelity.000001")}
	for _, name := range globShared(t) {
		paths = append(paths, sharedPath(name))
	}
	maps, reused := 0, 0
	for _, path := range paths {
		raws, err := FrameFile(path)
		if err != nil {
			continue // files the framer refuses are the shared-binlog tests' business
		}
		d := NewDecoder()
		var ref *replication.BinlogParser
		var refFormat *Format
		for _, rt := range raws {
			txn, err := d.Decode(rt)
			if err != nil {
				continue // the shared-binlog tests check the errors
			}
			if rt.Format != refFormat {
				ref, refFormat = plainParser(t, rt.Format), rt.Format
			}
			want := map[uint64]*replication.TableMapEvent{}
			for _, ev := range rt.Events {
				if ev.Type() != replication.TABLE_MAP_EVENT {
					continue
				}
				be, err := ref.Parse(ev.Data)
				if err != nil {
					t.Fatalf("%s at %s: go-mysql: %v", filepath.Base(path), ev.Pos, err)
				}
				tm := be.Event.(*replication.TableMapEvent)
				want[tm.TableID] = tm
				maps++
			}
			for i, r := range txn.Rows {
				w, ok := want[r.Table.TableID]
				if !ok {
					continue // a table map inside a compressed payload
				}
				if !reflect.DeepEqual(*r.Table, *w) {
					t.Errorf("%s at %s, rows event %d: table map\n decoded  %+v\n go-mysql %+v", filepath.Base(path), rt.Events[0].Pos, i, *r.Table, *w)
				}
			}
		}
		reused += maps - len(d.maps)
	}
	if maps == 0 || reused == 0 {
		t.Errorf("%d table maps, %d decoded once and reused: want some of each", maps, reused)
	}
	t.Logf("%d table maps in %d files", maps, len(paths))
}

// plainParser is go-mysql's parser as NewDecoder configures it, without
// the table map hook, ready for events under fm.
func plainParser(t *testing.T, fm *Format) *replication.BinlogParser {
	t.Helper()
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(false)
	p.SetUseDecimal(false)
	p.SetParseTime(false)
	p.SetTimestampStringLocation(time.UTC)
	p.SetRenderJSONAsMySQLText(true)
	p.SetFlavor(fm.Flavor.String())
	if _, err := p.Parse(fm.Event.Data); err != nil {
		t.Fatal(err)
	}
	return p
}
