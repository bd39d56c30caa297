package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/fixtures"
)

// TestDecodeChecksSkippedEvents: the Decoder takes nothing from XID and
// annotate rows events and does not hand them to go-mysql, but an XID
// event too short to hold an XID is still corrupt, as go-mysql found, and
// a transaction decodes the same whatever its annotations say.
func TestDecodeChecksSkippedEvents(t *testing.T) {
	raws, err := FrameFile(filepath.Join(fixtures.Root(), "internal", "binlog", "testdata", "mariadb-10.11-fidelity.000001"))
	if err != nil {
		t.Fatal(err)
	}
	// cut returns rt with event i one byte shorter before its checksum.
	cut := func(rt *RawTxn, i int) *RawTxn {
		ev := rt.Events[i]
		at := len(ev.Data) - 5
		data := append(append([]byte(nil), ev.Data[:at]...), ev.Data[at+1:]...)
		binary.LittleEndian.PutUint32(data[9:], uint32(len(data)))
		c := *rt
		c.Events = slices.Clone(rt.Events)
		c.Events[i].Data = data
		return &c
	}
	xids, notes := 0, 0
	for _, rt := range raws {
		want, err := NewDecoder().Decode(rt)
		if err != nil {
			continue
		}
		for i, ev := range rt.Events {
			switch ev.Type() {
			case replication.XID_EVENT:
				xids++
				_, err := NewDecoder().Decode(cut(rt, i))
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", ev.Pos.Offset)) {
					t.Errorf("XID event at %s one byte short: %v; want ErrCorrupt naming its position", ev.Pos, err)
				}
			case replication.MARIADB_ANNOTATE_ROWS_EVENT:
				notes++
				got, err := NewDecoder().Decode(cut(rt, i))
				if err != nil {
					t.Fatalf("annotate rows event at %s one byte short: %v", ev.Pos, err)
				}
				got.Bytes, got.End = want.Bytes, want.End
				if !reflect.DeepEqual(got, want) {
					t.Errorf("annotate rows event at %s one byte short: the transaction decodes differently", ev.Pos)
				}
			}
		}
	}
	if xids == 0 || notes == 0 {
		t.Errorf("%d XID and %d annotate rows events: want some of each", xids, notes)
	}
}
