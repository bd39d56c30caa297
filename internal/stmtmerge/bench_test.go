package stmtmerge

import "testing"

// BenchmarkRecognizeSysbench reads the four statements of a sysbench
// write_only transaction as a MIXED source logs them, as the preparer does
// for every statement of such a stream.
func BenchmarkRecognizeSysbench(b *testing.B) {
	qs := []string{
		"UPDATE sbtest3 SET k=k+1 WHERE id=5034",
		"UPDATE sbtest7 SET c='83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330' WHERE id=4953",
		"DELETE FROM sbtest2 WHERE id=5019",
		"INSERT INTO sbtest2 (id, k, c, pad) VALUES (5019, 4988, '68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441', '22195207048-70116052123-74140395089-76317954521-98694025897')",
	}
	var r Recognizer
	b.ReportAllocs()
	for b.Loop() {
		for _, q := range qs {
			if _, ok := r.Recognize(q, "id"); !ok {
				b.Fatal(q)
			}
		}
	}
}
