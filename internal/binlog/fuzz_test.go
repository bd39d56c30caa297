package binlog

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// A FuzzDecodeTxn input is one byte that picks a format description event
// from fuzzFormats, then raw events, concatenated as in a binlog file. The
// target pushes the format description and then each event (cut where its
// header's size field says, the rest of the input when that size is
// impossible) through a Framer, decodes every transaction the Framer
// completes, and checks that nothing panics and every error is a
// *PosError wrapping a sentinel.
//
// When the chosen format has checksums, the target writes each event's
// CRC32 before pushing it, so that mutations reach the decoder instead of
// stopping at the checksum; the top bit of the first byte turns that off,
// to fuzz the checksum path too.
//
// The seed corpus in testdata/fuzz/FuzzDecodeTxn holds real transactions,
// each paired with the format of the binlog it comes from; `go test` runs
// them, and TestFuzzCorpus checks that they still decode as in their
// files. -update-fuzz-corpus rewrites them (it starts a MariaDB sandbox).

// fuzzFormats are the binlogs whose format description events a fuzz input
// can pick. The order is part of the corpus format: append, never reorder.
var fuzzFormats = []string{
	"rust-us__mysql-cdc-rs/binlog.000733",                                  // MySQL 8.0.31, CRC32
	"blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001", // MySQL 9.6.0, tagged GTIDs
	"osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none",        // MySQL 5.7.20, no checksums
	"blackbeam__rust_mysql_common/write-full-row.binlog",                   // MySQL 5.1.37 NDB, before checksums
	"blackbeam__rust_mysql_common/mariadb-bin.000001",                      // MariaDB 10.5.15, CRC32
	"pingcap__tiflow/mysql-bin.000001",                                     // MariaDB 10.0.17, no checksums
	"testdata/mariadb-10.11.fde",                                           // MariaDB 10.11 (sandbox), CRC32
	"blackbeam__rust_mysql_common/json.binlog.000001",                      // MySQL 8.0.22, partial JSON
	"osheroff__mysql-binlog-connector-java/mysql-bin.compressed",           // MySQL 8.0.28, compressed
	"github__gh-ost/mysql-bin.000066",                                      // MySQL 5.6.28, CRC32, minimal rows
	"blackbeam__rust_mysql_common/ver_5_1_23.001",                          // MySQL 5.1.23, statements
	"alibaba__canal/tsdb__mysql-bin.000003",                                // MySQL 5.7.19, CRC32
	"blackbeam__rust_mysql_common/json-opaque.binlog",                      // MySQL 9.0.1, CRC32
	"blackbeam__rust_mysql_common/binlog_transaction.000001",               // MySQL 5.0.86
	"apecloud__mysql-binlog-connector-rust/mysql-bin.000057",               // MySQL 8.0.31, compressed, GTIDs
	"flike__kingbus/mysql_bin.000011",                                      // MySQL 5.7.23, GTIDs
	"zendesk__maxwell/binlog.000004",                                       // MySQL 8.0.29, GTIDs
	"rust-us__mysql-cdc-rs/5.7__14_user_var__log.bin",                      // MySQL 5.7.30, USER_VAR
}

// mariadbFDEPath holds the format description of the sandbox's MariaDB, so
// that the fuzz target does not need a server.
const mariadbFDEPath = "testdata/mariadb-10.11.fde"

// fuzzFormat is a format description event a fuzz input starts with.
type fuzzFormat struct {
	name     string
	fde      []byte
	checksum bool
}

// loadFuzzFormats reads the format description event of each of
// fuzzFormats.
func loadFuzzFormats(t testing.TB) []fuzzFormat {
	t.Helper()
	var out []fuzzFormat
	for _, name := range fuzzFormats {
		var fde []byte
		if strings.HasPrefix(name, "testdata/") {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatalf("%v (regenerate with -update-fuzz-corpus)", err)
			}
			fde = b
		} else {
			fr := NewFileReader(sharedPath(name))
			ev, err := fr.Next()
			fr.Close()
			if err != nil {
				t.Fatal(err)
			}
			fde = ev.Data
		}
		fm, err := ParseFormat(Event{Data: fde, Pos: Pos{File: name, Offset: 4}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, fuzzFormat{name: name, fde: fde, checksum: fm.Checksum})
	}
	return out
}

func FuzzDecodeTxn(f *testing.F) {
	formats := loadFuzzFormats(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		fm := formats[int(in[0]&0x7f)%len(formats)]
		decodeFuzzInput(t, fm, in[0]&0x80 == 0, in[1:])
	})
}

// decodeFuzzInput frames and decodes events as FuzzDecodeTxn describes and
// returns the transactions decoded without error.
func decodeFuzzInput(t *testing.T, fm fuzzFormat, fixCRC bool, data []byte) []*Txn {
	const file = "fuzz-input"
	fr := NewFramer()
	if err := fr.Push(Event{Data: fm.fde, Pos: Pos{File: file, Offset: 4}}); err != nil {
		t.Fatalf("format description %s: %v", fm.name, err)
	}
	dec := NewDecoder()
	var txns []*Txn
	drain := func() {
		for rt := fr.Next(); rt != nil; rt = fr.Next() {
			txn, err := dec.Decode(rt)
			if err != nil {
				checkReaderError(t, "Decode", err)
				continue
			}
			exerciseTxn(t, txn, file)
			txns = append(txns, txn)
		}
	}
	off := int64(4 + len(fm.fde))
	for len(data) > 0 {
		n := len(data)
		if len(data) >= HeaderSize {
			if size := binary.LittleEndian.Uint32(data[9:]); size >= HeaderSize && int64(size) <= int64(len(data)) {
				n = int(size)
			}
		}
		ev := Event{Data: slices.Clone(data[:n]), Pos: Pos{File: file, Offset: off}}
		if fixCRC && fm.checksum && n >= HeaderSize+4 {
			writeCRC(ev.Data)
		}
		err := fr.Push(ev)
		drain()
		if err != nil {
			checkReaderError(t, "Push", err)
			return txns
		}
		off += int64(n)
		data = data[n:]
	}
	if err := fr.End(); err != nil {
		checkReaderError(t, "End", err)
	}
	drain()
	return txns
}

// writeCRC stores the CRC32 of an event in its last four bytes, as a server
// computes it (a format description with its in-use flag cleared).
func writeCRC(d []byte) {
	body := d[:len(d)-4]
	var sum uint32
	if replication.EventType(d[4]) == replication.FORMAT_DESCRIPTION_EVENT {
		hdr := slices.Clone(body[:HeaderSize])
		hdr[17] &^= byte(replication.LOG_EVENT_BINLOG_IN_USE_F)
		sum = crc32.Update(crc32.ChecksumIEEE(hdr), crc32.IEEETable, body[HeaderSize:])
	} else {
		sum = crc32.ChecksumIEEE(body)
	}
	binary.LittleEndian.PutUint32(d[len(d)-4:], sum)
}

// exerciseTxn calls what the rest of paraply calls on a decoded
// transaction, so that a panic there shows up, and checks what must hold
// for any transaction the decoder accepts.
func exerciseTxn(t *testing.T, txn *Txn, file string) {
	if txn.Start.File != file || txn.End <= txn.Start.Offset || txn.Bytes <= 0 {
		t.Errorf("transaction at %s, end %d, %d bytes", txn.Start, txn.End, txn.Bytes)
	}
	_ = txn.ID()
	_ = txn.Schemas()
	n := 0
	for _, r := range txn.Rows {
		if r.Table == nil {
			t.Fatalf("rows without a table map")
		}
		if r.Op == Update && len(r.Images)%2 != 0 {
			t.Errorf("update with %d images", len(r.Images))
		}
		for c := 0; c < int(min(r.Table.ColumnCount, 4096)); c++ {
			r.Present(c, false)
			r.Present(c, true)
		}
		n += r.Changes()
	}
	if n != txn.RowCount() {
		t.Errorf("RowCount %d, rows events hold %d", txn.RowCount(), n)
	}
	for _, s := range txn.Statements {
		ClassifyStatement(s.Query)
	}
	_ = renderTxn(txn)
	if !txn.GTID.IsZero() {
		if g, err := ParseGTID(txn.GTID.String()); err != nil || g != txn.GTID {
			t.Errorf("GTID %+v prints as %q, which parses as %+v, %v", txn.GTID, txn.GTID, g, err)
		}
	}
}

var updateFuzzCorpus = flag.Bool("update-fuzz-corpus", false, "rewrite testdata/fuzz/FuzzDecodeTxn and "+mariadbFDEPath)

const fuzzCorpusDir = "testdata/fuzz/FuzzDecodeTxn"

// TestFuzzCorpus checks the seed corpus: every seed is a real transaction
// that the fuzz target decodes exactly as the Reader decodes it in its
// file, and the seeds cover both flavors, compressed payloads, partial
// JSON, statements and every format. With -update-fuzz-corpus it first
// writes the corpus afresh.
func TestFuzzCorpus(t *testing.T) {
	if *updateFuzzCorpus {
		writeFuzzCorpus(t)
	}
	formats := loadFuzzFormats(t)
	entries, err := os.ReadDir(fuzzCorpusDir)
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]int{}
	var all strings.Builder
	seeds := 0
	for _, e := range entries {
		in := readCorpusFile(t, filepath.Join(fuzzCorpusDir, e.Name()))
		if !realSeed.MatchString(e.Name()) {
			continue // an input the fuzzer found: FuzzDecodeTxn runs it
		}
		seeds++
		if len(in) < 1+HeaderSize {
			t.Errorf("%s: %d bytes", e.Name(), len(in))
			continue
		}
		sel := int(in[0]) % len(formats)
		used[sel]++
		txns := decodeFuzzInput(t, formats[sel], true, in[1:])
		if len(txns) != 1 {
			t.Errorf("%s: %d transactions, want 1", e.Name(), len(txns))
			continue
		}
		// Checksums must already be right: the seed is the file's bytes.
		if again := decodeFuzzInput(t, formats[sel], false, in[1:]); len(again) != 1 {
			t.Errorf("%s: does not decode with its own checksums", e.Name())
		}
		all.WriteString(renderTxn(txns[0]))
	}
	if seeds < 40 {
		t.Errorf("%d seeds; regenerate with -update-fuzz-corpus", seeds)
	}
	for i, f := range fuzzFormats {
		if used[i] == 0 {
			t.Errorf("no seed uses format %d (%s)", i, f)
		}
	}
	s := all.String()
	for _, want := range []string{"partial=true", "gtid=\"0-1-", "  insert ", "  update ", "  delete ", "  stmt "} {
		if !strings.Contains(s, want) {
			t.Errorf("no seed decodes to %q", want)
		}
	}
}

// realSeed matches the names writeFuzzCorpus gives the seeds it extracts
// from real binlogs; the other files are inputs the fuzzer found (named
// regress-*), kept as regression tests.
var realSeed = regexp.MustCompile(`^[0-9]{2}-`)

// readCorpusFile reads a file in Go's fuzz corpus format holding one
// []byte.
func readCorpusFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const head = "go test fuzz v1\n[]byte("
	s := strings.TrimSpace(string(b))
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, ")") {
		t.Fatalf("%s: not a fuzz corpus file of one []byte", path)
	}
	v, err := strconv.Unquote(s[len(head) : len(s)-1])
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(v)
}

// writeFuzzCorpus extracts seeds: from the binlog of each of fuzzFormats,
// up to four transactions of different shapes (event type sequences), and
// from a sandbox MariaDB binlog up to eight, each at most 8 KiB.
func writeFuzzCorpus(t *testing.T) {
	maria := mariadbBinlog(t)
	mariaPath := filepath.Join(t.TempDir(), "mariadb-bin.000001")
	if err := os.WriteFile(mariaPath, maria, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(fuzzCorpusDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadDir(fuzzCorpusDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range old {
		if realSeed.MatchString(e.Name()) {
			if err := os.Remove(filepath.Join(fuzzCorpusDir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	fde := fileEvents(t, mariaPath)[0]
	if err := os.WriteFile(mariadbFDEPath, maria[fde.off:fde.off+fde.size], 0o644); err != nil {
		t.Fatal(err)
	}
	formats := loadFuzzFormats(t)
	unsafe := regexp.MustCompile(`[^A-Za-z0-9._-]+`)
	for sel, name := range fuzzFormats {
		path, limit := sharedPath(name), 4
		if name == mariadbFDEPath {
			path, limit = mariaPath, 8
		}
		shapes := map[string]bool{}
		for i, rt := range rawTxns(t, path) {
			var shape strings.Builder
			in := []byte{byte(sel)}
			for _, ev := range rt.Events {
				fmt.Fprintf(&shape, "%d,", ev.Type())
				in = append(in, ev.Data...)
			}
			if shapes[shape.String()] || len(in) > 8<<10 || len(shapes) == limit {
				continue
			}
			if len(decodeFuzzInput(t, formats[sel], false, in[1:])) != 1 {
				continue // the pingcap file's last transactions do not decode
			}
			shapes[shape.String()] = true
			file := fmt.Sprintf("%02d-%s-txn%03d", sel, unsafe.ReplaceAllString(filepath.Base(path), "_"), i+1)
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", in)
			if err := os.WriteFile(filepath.Join(fuzzCorpusDir, file), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestFuzzDecodeMatchesReader checks that the fuzz target decodes a real
// transaction as the Reader does, so that the fuzzer explores the real
// decoding path: every transaction of a few files, each pushed alone.
func TestFuzzDecodeMatchesReader(t *testing.T) {
	formats := loadFuzzFormats(t)
	for _, sel := range []int{0, 4, 7, 8} {
		path := sharedPath(fuzzFormats[sel])
		res := readAll(path)
		raws := rawTxns(t, path)
		if res.err != nil || len(raws) != len(res.txns) {
			t.Fatalf("%s: %d transactions, %d raw, %v", path, len(res.txns), len(raws), res.err)
		}
		for i, rt := range raws {
			var in bytes.Buffer
			for _, ev := range rt.Events {
				in.Write(ev.Data)
			}
			got := decodeFuzzInput(t, formats[sel], false, in.Bytes())
			if len(got) != 1 {
				t.Fatalf("%s transaction %d: %d decoded", path, i+1, len(got))
			}
			if a, b := txnBody(renderTxn(res.txns[i])), txnBody(renderTxn(got[0])); a != b {
				t.Errorf("%s transaction %d: %s", path, i+1, diffLine(a, b))
			}
		}
	}
}

// txnBody drops the position fields of a rendered transaction.
func txnBody(s string) string {
	return regexp.MustCompile(`#[0-9]+ |start=\S+ end=[0-9]+ `).ReplaceAllString(s, "")
}
