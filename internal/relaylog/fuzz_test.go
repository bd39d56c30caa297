package relaylog

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

var writeCorpus = flag.Bool("relaylog.write-corpus", false, "rewrite the fuzz seed corpus in testdata/fuzz")

// segmentSeed returns the bytes of a segment that the log wrote, holding
// transactions 1..n, with its creation time zeroed so that it is the same
// on every run.
func segmentSeed(t testing.TB, n int) []byte {
	t.Helper()
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := loadSmall(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := l.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	b, err := os.ReadFile(segPath(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	clear(b[16:24])
	le.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	return b
}

// openSeeds are whole and damaged last segments.
func openSeeds(t testing.TB) [][]byte {
	seg := segmentSeed(t, 3)
	flipped := append([]byte(nil), seg...)
	flipped[len(flipped)-10] ^= 1
	return [][]byte{
		seg,
		seg[:len(seg)-7],                // torn last record
		seg[:segHeaderSize+5],           // torn POSITION record
		seg[:segHeaderSize],             // header only
		seg[:11],                        // torn header
		flipped,                         // damaged last record
		{},                              // empty file
		[]byte("PRLY\x01\x00 \x00junk"), // a header of sorts
	}
}

// readSeeds are sealed segments holding transactions 1 and 2.
func readSeeds(t testing.TB) [][]byte {
	seg := segmentSeed(t, 2)
	flipped := append([]byte(nil), seg...)
	flipped[segHeaderSize+40] ^= 4
	return [][]byte{seg, seg[:len(seg)/2], flipped}
}

// FuzzOpen feeds arbitrary bytes as the last segment: Open must recover
// (never fail, never panic), everything it kept must read back, and the log
// must take the next append.
func FuzzOpen(f *testing.F) {
	for _, s := range openSeeds(f) {
		f.Add(s)
	}
	rec := smallRecords(f, 1)[0]
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(segPath(dir, 1), data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Open(Options{Dir: dir, Sync: SyncNever})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer l.Close()
		last, _ := l.Last()
		if l.First() != 1 {
			t.Fatalf("First = %d", l.First())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r := l.NewReader(1)
		defer r.Close()
		for i := uint64(1); i <= last; i++ {
			if _, err := r.Next(ctx); err != nil {
				t.Fatalf("index %d of %d recovered: %v", i, last, err)
			}
		}
		idx, err := l.Append(ctx, rec)
		if err != nil || idx != last+1 {
			t.Fatalf("Append = %d, %v; want %d", idx, err, last+1)
		}
		e, err := r.Next(ctx)
		if err != nil || e.Index != idx {
			t.Fatalf("reading the append back: %v %v", e, err)
		}
	})
}

// FuzzReadSegment feeds arbitrary bytes as a sealed segment that should
// hold transactions 1 and 2 (a later segment starts at 3): Open does not
// read it, and a Reader returns those entries or ErrCorrupt, never panics
// and never waits. The checksums in the input are made right first, so that
// the fuzzer reaches the payload decoders (FuzzOpen covers bad checksums).
func FuzzReadSegment(f *testing.F) {
	for _, s := range readSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(segPath(dir, 1), fixChecksums(data), 0o644); err != nil {
			t.Fatal(err)
		}
		w, _, err := createSegment(dir, 3, position{last: 2}, false)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		l, err := Open(Options{Dir: dir, Sync: SyncNever})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer l.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r := l.NewReader(1)
		defer r.Close()
		for i := uint64(1); i <= 2; i++ {
			e, err := r.Next(ctx)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("index %d: %v, want ErrCorrupt", i, err)
				}
				return
			}
			if e.Index != i || e.Txn.Format == nil || len(e.Txn.Events) == 0 {
				t.Fatalf("entry %d: %+v", i, e)
			}
		}
	})
}

// FuzzCursor is the in-memory core of FuzzReadSegment, thousands of times
// faster: a cursor steps through arbitrary segment bytes (checksums made
// right) and returns entries, errEnd or a CorruptError, never panics, and
// always advances.
func FuzzCursor(f *testing.F) {
	for _, s := range append(readSeeds(f), openSeeds(f)...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fixChecksums(data)
		c, err := newCursor(nopCloser{bytes.NewReader(b)}, "mem", 1, int64(len(b)))
		if err != nil {
			if !isCorrupt(err) {
				t.Fatalf("header: %v", err)
			}
			return
		}
		for {
			off := c.off
			e, err := c.step(int64(len(b)))
			if errors.Is(err, errEnd) {
				return
			}
			if err != nil {
				if !isCorrupt(err) {
					t.Fatalf("at %d: %v", off, err)
				}
				return
			}
			if c.off <= off {
				t.Fatalf("no progress at %d", off)
			}
			if e != nil && (e.Txn.Format == nil || len(e.Txn.Events) == 0) {
				t.Fatalf("entry %d incomplete", e.Index)
			}
		}
	})
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// fixChecksums returns a copy of a segment's bytes with the header's and
// each record's checksum computed from what they cover, as far as the
// length fields frame records.
func fixChecksums(data []byte) []byte {
	b := append([]byte(nil), data...)
	if len(b) < segHeaderSize {
		return b
	}
	le.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	for off := segHeaderSize; off+recHeaderSize <= len(b); {
		end := off + recHeaderSize + int(le.Uint32(b[off:]))
		if end > len(b) || end < off {
			break
		}
		le.PutUint32(b[off+4:], recordCRC(b[off+8], b[off+recHeaderSize:end]))
		off = end
	}
	return b
}

// TestWriteFuzzCorpus writes the seeds to testdata/fuzz, where go test
// runs them as part of the fuzz targets:
//
//	go test ./internal/relaylog -run TestWriteFuzzCorpus -relaylog.write-corpus
func TestWriteFuzzCorpus(t *testing.T) {
	if !*writeCorpus {
		t.Skip("-relaylog.write-corpus not set")
	}
	for name, seeds := range map[string][][]byte{
		"FuzzOpen":        openSeeds(t),
		"FuzzReadSegment": readSeeds(t),
		"FuzzCursor":      append(readSeeds(t), openSeeds(t)...),
	} {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s)))
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
