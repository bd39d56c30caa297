package schema

import "testing"

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
