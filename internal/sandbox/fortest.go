package sandbox

import "testing"

// ForTest starts a server for the test t and fails the test if it cannot.
// When the test ends, the server is removed. If the test failed, the server is
// only stopped: its directory is kept, and its path and the end of error.log
// are logged.
func ForTest(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			if err := s.Remove(); err != nil {
				t.Error(err)
			}
			return
		}
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
		t.Logf("sandbox %s: test failed, keeping %s\nend of %s:\n%s", s.Name, s.Dir, s.LogPath, tailFile(s.LogPath, logTail))
	})
	return s
}
