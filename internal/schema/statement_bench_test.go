package schema

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// sysbenchStatements are a write_only transaction's statements as a MIXED
// source logs them.
var sysbenchStatements = []string{
	"UPDATE sbtest3 SET k=k+1 WHERE id=5034",
	"UPDATE sbtest7 SET c='83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330' WHERE id=4953",
	"DELETE FROM sbtest2 WHERE id=5019",
	"INSERT INTO sbtest2 (id, k, c, pad) VALUES (5019, 4988, '68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441', '22195207048-70116052123-74140395089-76317954521-98694025897')",
}

// BenchmarkStatementReading is what the preparer reads of each statement
// of a statement-format transaction: whether it creates or drops a
// temporary table, what it changes, and the rows it writes. Each
// transaction's statements are new (as in a binlog).
func BenchmarkStatementReading(b *testing.B) {
	n := 0
	defer reportCPU(b, &n)()
	for b.Loop() {
		n++
		for _, q := range sysbenchStatements {
			q = fmt.Sprintf("%s /* %d */", q, n)
			TemporaryTables("sbtest", q)
			if _, err := StatementSubjects("sbtest", q); err != nil {
				b.Fatal(err)
			}
			if _, ok := StatementWrites("sbtest", q); !ok {
				b.Fatal(q)
			}
		}
	}
}

// BenchmarkStatementShapes is one statement of each of sysbench's four
// write_only shapes read once, each time with other literals: from its
// shape's template (cached), and parsed whole (uncached).
func BenchmarkStatementShapes(b *testing.B) {
	names := []string{"update_index", "update_non_index", "delete", "insert"}
	variants := sysbenchVariants(1024)
	for i, name := range names {
		b.Run("cached/"+name, func(b *testing.B) {
			c := newShapeCache(maxShapes, maxShapeBytes)
			n := 0
			defer reportCPU(b, &n)()
			for b.Loop() {
				if r := c.read("sbtest", variants[i][n%1024]); !r.writesOK {
					b.Fatal(r.query)
				}
				n++
			}
		})
		b.Run("uncached/"+name, func(b *testing.B) {
			n := 0
			defer reportCPU(b, &n)()
			for b.Loop() {
				if r := readFull("sbtest", variants[i][n%1024]); !r.writesOK {
					b.Fatal(r.query)
				}
				n++
			}
		})
	}
}

// reportCPU reports, when the function it returns is called, the CPU time
// the process spent (garbage collection included) per operation of *n:
// on a shared machine wall time per operation says more of the other
// processes than of this code.
func reportCPU(b *testing.B, n *int) func() {
	start := cpuTime()
	return func() {
		if *n > 0 {
			b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(*n), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
