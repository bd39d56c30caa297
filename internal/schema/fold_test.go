package schema

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIndexFold: the case-insensitive search for a name in a
// statement's text.
func TestIndexFold(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"SELECT CONNECTION_ID()", true}, {"connection_id", true}, {"x Connection_Id(", true},
		{"connection id", false}, {"connection_i", false}, {"", false}, {"CONNECTIONXID", false},
		{"_connection_id_", true}, {"a_b connection_id", true}, {"x_connection", false},
	} {
		if got := IndexFold(c.s, "connection_id") >= 0; got != c.want {
			t.Errorf("IndexFold(%q) >= 0 = %v, want %v", c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"@@PSEUDO_THREAD_ID", true}, {"pseudo_thread_id", true}, {"pseudo_thread", false}, {"xpseudo_thread_idx", true}, {"pseudo-thread_id", false},
	} {
		if got := IndexFold(c.s, "pseudo_thread_id") >= 0; got != c.want {
			t.Errorf("IndexFold(%q, pseudo_thread_id) >= 0 = %v, want %v", c.s, got, c.want)
		}
	}
}

// TestIndexFoldAgainstLower: IndexFold finds what strings.Index finds in
// the lower-cased text, on random texts over a small alphabet (so that
// near misses are frequent).
func TestIndexFoldAgainstLower(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "mMaAtTcChH_ x"
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		for _, sub := range []string{"match", "m", "ch", "_x", "hh"} {
			if got, want := IndexFold(s, sub), strings.Index(strings.ToLower(s), sub); got != want {
				t.Fatalf("IndexFold(%q, %q) = %d, want %d", s, sub, got, want)
			}
		}
	}
}

// BenchmarkIndexFold: a sysbench INSERT, which holds none of the names
// looked for.
func BenchmarkIndexFold(b *testing.B) {
	q := "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5012, 49877, '68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441', '22195207048-70116052123-74140395089-76317954521-98694025897')"
	for b.Loop() {
		if IndexFold(q, "connection_id") >= 0 || IndexFold(q, "pseudo_thread_id") >= 0 || IndexFold(q, "match") >= 0 {
			b.Fatal("found")
		}
	}
}
