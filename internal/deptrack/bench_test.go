package deptrack

import (
	"strconv"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// benchSchema has one table per kind of key the extractor hashes on the hot
// path: integers, ASCII strings under the common collations, bytes.
const benchSchema = `
CREATE DATABASE d;
USE d;
CREATE TABLE ints (id BIGINT PRIMARY KEY, k INT NOT NULL, UNIQUE KEY k (k));
CREATE TABLE gen (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL, UNIQUE KEY email (email)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
CREATE TABLE lat (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL, UNIQUE KEY email (email)) DEFAULT CHARSET=latin1;
CREATE TABLE bin (id INT PRIMARY KEY, h VARBINARY(32) NOT NULL, UNIQUE KEY h (h));
CREATE TABLE uni (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL, UNIQUE KEY email (email)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE u09 (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL, UNIQUE KEY email (email)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;
`

// BenchmarkExtract measures the writeset of a 100-row insert.
func BenchmarkExtract(b *testing.B) {
	cat, _, err := schema.Parse(strings.NewReader(benchSchema), "bench.sql")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		table string
		val   func(i int) any
	}{
		{"ints", func(i int) any { return int32(i) }},
		{"gen", func(i int) any { return "user" + strconv.Itoa(i) + "@example.com" }},
		{"lat", func(i int) any { return []byte("user" + strconv.Itoa(i) + "@example.com") }},
		{"bin", func(i int) any { return []byte("0123456789abcdef" + strconv.Itoa(i)) }},
		{"uni", func(i int) any { return "user" + strconv.Itoa(i) + "@example.com" }},
		{"u09", func(i int) any { return "user" + strconv.Itoa(i) + "@example.com" }},
	} {
		b.Run(tc.table, func(b *testing.B) {
			var images [][]any
			for i := range 100 {
				images = append(images, []any{int64(i), tc.val(i)})
			}
			txn := &binlog.Txn{Rows: []*binlog.Rows{rows(cat, tc.table, binlog.Insert, images...)}}
			x := NewExtractor(cat)
			ws := &Writeset{}
			b.ReportAllocs()
			for b.Loop() {
				x.Extract(txn, ws)
			}
			if len(ws.Keys) < 101 {
				b.Fatalf("%d keys", len(ws.Keys))
			}
		})
	}
}
