package relaylog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/fixtures"
)

// binlogDir holds real binlog files (see its README.md).
var binlogDir = fixtures.Binlogs()

// corpusFiles are real binlogs of both flavors, with and without GTIDs and
// checksums, and with transactions from 200 bytes to 150 KB.
var corpusFiles = []string{
	"blackbeam__rust_mysql_common/mariadb-bin.000001",                      // MariaDB 10.5 GTIDs
	"go-mysql-org__go-mysql/tcb-eval002c-bin.003320",                       // MySQL 5.6, no GTID
	"flike__kingbus/mysql_bin.000011",                                      // MySQL 5.7 GTIDs
	"blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001", // MySQL 9 tagged GTID
	"osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none",        // no CRC32
	"blackbeam__rust_mysql_common/ver_5_1_23.001",                          // 150 KB transactions
	"zendesk__maxwell/binlog.000004",                                       // MySQL GTIDs
	"flike__kingbus/mysql_bin.000012",
}

var (
	corpusOnce sync.Once
	corpus     []Record
	corpusErr  error
)

// corpusRecords returns the transactions of corpusFiles as Records, in file
// order. Callers must not modify them.
func corpusRecords(t testing.TB) []Record {
	t.Helper()
	recs, err := loadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func loadCorpus() ([]Record, error) {
	corpusOnce.Do(func() {
		for _, f := range corpusFiles {
			recs, err := readBinlog(filepath.Join(binlogDir, f))
			if err != nil {
				corpusErr = err
				return
			}
			corpus = append(corpus, recs...)
		}
	})
	return corpus, corpusErr
}

// readBinlog frames a binlog file into Records: the GTID as the decoder
// finds it, and a resume position naming where the next transaction starts.
// Positions name the file without its directory, as a stream does.
func readBinlog(path string) ([]Record, error) {
	base := filepath.Base(path)
	rts, err := binlog.FrameFile(path)
	if err != nil {
		return nil, err
	}
	dec := binlog.NewDecoder()
	out := make([]Record, 0, len(rts))
	for _, rt := range rts {
		tx, err := dec.Decode(rt)
		if err != nil {
			return nil, err
		}
		for i := range rt.Events {
			rt.Events[i].Pos.File = base
		}
		rt.Format.Event.Pos.File = base
		resume := fmt.Sprintf("%s:%d", base, tx.End)
		if !tx.GTID.IsZero() {
			resume = tx.GTID.String()
		}
		out = append(out, Record{Txn: rt, GTID: tx.GTID, Resume: resume})
	}
	return out, nil
}

// smallRecords returns n corpus records of at most 2 KB, cycling.
func smallRecords(t testing.TB, n int) []Record {
	t.Helper()
	recs, err := loadSmall(n)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func loadSmall(n int) ([]Record, error) {
	all, err := loadCorpus()
	if err != nil {
		return nil, err
	}
	var small []Record
	for _, r := range all {
		if r.Txn.Bytes() <= 2048 {
			small = append(small, r)
		}
	}
	out := make([]Record, n)
	for i := range out {
		out[i] = small[i%len(small)]
	}
	return out, nil
}

// openLog opens a log in dir and closes it when the test ends.
func openLog(t testing.TB, opts Options) *Log {
	t.Helper()
	l, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendAll(t testing.TB, l *Log, recs []Record) {
	t.Helper()
	for _, r := range recs {
		last, _ := l.Last()
		idx, err := l.Append(context.Background(), r)
		if err != nil {
			t.Fatalf("append after %d: %v", last, err)
		}
		if idx != last+1 {
			t.Fatalf("append after %d returned index %d", last, idx)
		}
	}
}

// readAll reads n entries from index from, failing on any error or a
// wait longer than a few seconds.
func readAll(t testing.TB, l *Log, from uint64, n int) []*Entry {
	t.Helper()
	r := l.NewReader(from)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := make([]*Entry, 0, n)
	for range n {
		e, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("reading index %d: %v", from+uint64(len(out)), err)
		}
		out = append(out, e)
	}
	return out
}

// checkEntry compares an entry with the record appended as index idx.
func checkEntry(t testing.TB, e *Entry, idx uint64, rec Record) {
	t.Helper()
	if e.Index != idx {
		t.Fatalf("entry index %d, want %d", e.Index, idx)
	}
	if e.GTID != rec.GTID || e.Resume != rec.Resume {
		t.Fatalf("index %d: GTID %q resume %q, want %q %q", idx, e.GTID, e.Resume, rec.GTID, rec.Resume)
	}
	if len(e.Txn.Events) != len(rec.Txn.Events) {
		t.Fatalf("index %d: %d events, want %d", idx, len(e.Txn.Events), len(rec.Txn.Events))
	}
	for i, ev := range rec.Txn.Events {
		got := e.Txn.Events[i]
		if got.Pos != ev.Pos || !bytes.Equal(got.Data, ev.Data) {
			t.Fatalf("index %d event %d differs: pos %s want %s", idx, i, got.Pos, ev.Pos)
		}
	}
	if f := e.Txn.Format; f == nil || !sameEvent(f.Event, rec.Txn.Format.Event) || f.Flavor != rec.Txn.Format.Flavor {
		t.Fatalf("index %d: format differs", idx)
	}
}

func segPath(dir string, first uint64) string { return filepath.Join(dir, segName(first)) }

// segFirsts lists the segments of dir.
func segFirsts(t testing.TB, dir string) []uint64 {
	t.Helper()
	firsts, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	return firsts
}

// recInfo is a record's place in a segment file.
type recInfo struct {
	off, end int64
	typ      byte
	index    uint64 // of a TXN record
}

// scanRecords lists the records of an intact segment file.
func scanRecords(t testing.TB, path string, first uint64) []recInfo {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	c, err := openCursor(path, first, size)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []recInfo
	for {
		off := c.off
		e, err := c.step(size)
		if errors.Is(err, errEnd) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ri := recInfo{off: off, end: c.off, typ: data[off+8]}
		if e != nil {
			ri.index = e.Index
		}
		out = append(out, ri)
	}
}

// copyDir copies the segment files of src into a new temporary directory.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	for _, first := range segFirsts(t, src) {
		b, err := os.ReadFile(segPath(src, first))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(segPath(dst, first), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// flipByte inverts one bit of the byte at off in path.
func flipByte(t testing.TB, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x10
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects what a Log logs, safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
