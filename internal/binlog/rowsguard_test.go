package binlog

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
)

// smallArray encodes a MySQL binary JSON small array (without its type
// byte) whose elements are all of type tp at offset off, followed by tail.
func smallArray(count int, tp byte, off uint16, tail []byte) []byte {
	size := 4 + 3*count + len(tail)
	b := binary.LittleEndian.AppendUint16(nil, uint16(count))
	b = binary.LittleEndian.AppendUint16(b, uint16(size))
	for range count {
		b = append(b, tp)
		b = binary.LittleEndian.AppendUint16(b, off)
	}
	return append(b, tail...)
}

func TestJSONWalkEnds(t *testing.T) {
	empty := smallArray(0, 0, 0, nil)
	nested := smallArray(1, replication.JSONB_SMALL_ARRAY, 7, empty)
	// An array whose element is the array itself: go-mysql recurses
	// until the stack overflows.
	self := smallArray(1, replication.JSONB_SMALL_ARRAY, 0, nil)
	// 40 levels of arrays whose two elements share one child: 2^40 visits.
	bomb := empty
	for range 40 {
		bomb = smallArray(2, replication.JSONB_SMALL_ARRAY, 10, bomb)
	}
	// Inline scalars and a string stored after the header.
	scalars := smallArray(2, replication.JSONB_INT16, 0, nil)
	str := smallArray(1, replication.JSONB_STRING, 7, []byte{2, 'h', 'i'})
	for _, c := range []struct {
		name string
		doc  []byte
		ends bool
	}{
		{"empty array", append([]byte{replication.JSONB_SMALL_ARRAY}, empty...), true},
		{"nested arrays", append([]byte{replication.JSONB_SMALL_ARRAY}, nested...), true},
		{"scalars", append([]byte{replication.JSONB_SMALL_ARRAY}, scalars...), true},
		{"string", append([]byte{replication.JSONB_SMALL_ARRAY}, str...), true},
		{"literal", []byte{replication.JSONB_LITERAL, 1}, true},
		{"truncated", []byte{replication.JSONB_SMALL_OBJECT, 1}, true},
		{"self reference", append([]byte{replication.JSONB_SMALL_ARRAY}, self...), false},
		{"shared children", append([]byte{replication.JSONB_SMALL_ARRAY}, bomb...), false},
	} {
		if got := jsonWalkEnds(c.doc); got != c.ends {
			t.Errorf("%s: jsonWalkEnds = %t, want %t", c.name, got, c.ends)
		}
	}
	// The same documents as the value of a partial update's diff:
	// Replace, path "$", value.
	diff := func(doc []byte) []byte {
		return append(append([]byte{byte(replication.JsonDiffOperationReplace), 1, '$'}, byte(len(doc))), doc...)
	}
	if !jsonDiffWalkEnds(diff(append([]byte{replication.JSONB_SMALL_ARRAY}, nested...))) ||
		jsonDiffWalkEnds(diff(append([]byte{replication.JSONB_SMALL_ARRAY}, self...))) ||
		!jsonDiffWalkEnds([]byte{byte(replication.JsonDiffOperationRemove), 1, '$'}) ||
		!jsonDiffWalkEnds([]byte{0, 0xfc}) {
		t.Error("jsonDiffWalkEnds")
	}
}

// TestRowsWithoutColumns decodes a real rows event whose column bitmap was
// zeroed (its checksum recomputed): go-mysql alone loops forever on it.
func TestRowsWithoutColumns(t *testing.T) {
	path := sharedPath("rust-us__mysql-cdc-rs/binlog.000733")
	raws := rawTxns(t, path)
	for _, rt := range raws {
		for i, ev := range rt.Events {
			if ev.Type() != replication.WRITE_ROWS_EVENTv2 {
				continue
			}
			// table id (6), flags (2), extra data (its length includes
			// itself), column count (< 251: one byte), then the bitmap.
			d := append([]byte(nil), ev.Data...)
			p := HeaderSize + 8
			p += int(binary.LittleEndian.Uint16(d[p:]))
			cols := int(d[p])
			for j := range (cols + 7) / 8 {
				d[p+1+j] = 0
			}
			writeCRC(d)
			damaged := &RawTxn{Events: append(append(append([]Event(nil), rt.Events[:i]...), Event{Data: d, Pos: ev.Pos}), rt.Events[i+1:]...), Format: rt.Format}
			done := make(chan error, 1)
			go func() {
				_, err := NewDecoder().Decode(damaged)
				done <- err
			}()
			select {
			case err := <-done:
				var pe *PosError
				if !errors.Is(err, ErrCorrupt) || !errors.As(err, &pe) || pe.Pos != ev.Pos {
					t.Errorf("decode: %v; want ErrCorrupt at %s", err, ev.Pos)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("decoding a rows event without columns does not end")
			}
			return
		}
	}
	t.Fatal("no WRITE_ROWS_EVENTv2 found")
}
