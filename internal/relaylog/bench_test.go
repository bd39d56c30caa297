package relaylog

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// benchRecords are the transactions of a MySQL 8 production-like binlog
// (about 3.4 KB each) and MySQL 5.7 GTID transactions (about 550 bytes).
func benchRecords(b *testing.B) (large, small []Record) {
	large, err := readBinlog(filepath.Join(binlogDir, "rust-us__mysql-cdc-rs/binlog.000693"))
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []string{"flike__kingbus/mysql_bin.000011", "flike__kingbus/mysql_bin.000012"} {
		recs, err := readBinlog(filepath.Join(binlogDir, f))
		if err != nil {
			b.Fatal(err)
		}
		small = append(small, recs...)
	}
	return large, small
}

// BenchmarkAppend appends real transactions with 64 MiB segments, purging
// behind itself so that the log never fills. MB/s counts event bytes.
func BenchmarkAppend(b *testing.B) {
	large, small := benchRecords(b)
	for _, sync := range []struct {
		name   string
		policy SyncPolicy
	}{
		{"SyncNever", SyncNever},
		{"SyncInterval100ms", SyncInterval(100 * time.Millisecond)},
		{"SyncEveryTxn", SyncEveryTxn},
	} {
		for _, set := range []struct {
			name string
			recs []Record
		}{{"txn3KB", large}, {"txn550B", small}} {
			b.Run(sync.name+"/"+set.name, func(b *testing.B) {
				benchAppend(b, set.recs, sync.policy)
			})
		}
	}
}

func benchAppend(b *testing.B, recs []Record, policy SyncPolicy) {
	var bytes int64
	for _, r := range recs {
		bytes += int64(r.Txn.Bytes())
	}
	b.SetBytes(bytes / int64(len(recs)))
	l, err := Open(Options{Dir: b.TempDir(), Sync: policy})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		idx, err := l.Append(ctx, recs[i%len(recs)])
		if err != nil {
			b.Fatal(err)
		}
		if idx%4096 == 0 {
			if err := l.Purge(idx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txn/s")
}

// BenchmarkRead reads back what was appended, through a Reader.
func BenchmarkRead(b *testing.B) {
	large, _ := benchRecords(b)
	l, err := Open(Options{Dir: b.TempDir(), Sync: SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	var bytes int64
	for _, r := range large {
		bytes += int64(r.Txn.Bytes())
		if _, err := l.Append(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(bytes / int64(len(large)))
	var r *Reader
	for i := 0; b.Loop(); i++ {
		if i%len(large) == 0 {
			if r != nil {
				r.Close()
			}
			r = l.NewReader(1)
		}
		if _, err := r.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	r.Close()
}
