package sandbox

// Release ends a server that a test started. If the test passed, the server
// is removed. If it failed, the server is only stopped: its directory is
// kept for inspection, and logf (the test's Logf) gets its path and the end
// of error.log. sandboxtest.ForTest calls it when a test ends; it lives here
// because it quotes the log as the package's own errors do.
func (s *Server) Release(failed bool, logf func(format string, args ...any)) error {
	if !failed {
		return s.Remove()
	}
	err := s.Stop()
	logf("sandbox %s: test failed, keeping %s\nend of %s:\n%s", s.Name, s.Dir, s.LogPath, tailFile(s.LogPath, logTail))
	return err
}
