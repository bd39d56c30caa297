package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/paraply/paraply/internal/sandbox"
)

// snapshot is a copy of a server's state on disk, taken while it was
// stopped cleanly: its data directory, binary logs and relay logs (see the
// layout in the sandbox package doc). Restoring one puts a server back in
// exactly that state, GTID positions included.
type snapshot struct {
	dir string // holds one subdirectory per name in snapshotParts
}

// snapshotParts are the directories of a sandbox that a snapshot covers.
var snapshotParts = []string{"data", "binlog", "relaylog"}

// serverPart returns the path of one snapshot part in s's directory.
func serverPart(s *sandbox.Server, part string) string {
	return filepath.Join(s.Dir, part)
}

// takeSnapshot stops s, copies its state into dst and starts it again.
func takeSnapshot(ctx context.Context, s *sandbox.Server, dst string) (*snapshot, error) {
	if err := s.Stop(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return nil, err
	}
	sn := &snapshot{dir: dst}
	for _, part := range snapshotParts {
		if err := sandbox.CopyTree(serverPart(s, part), filepath.Join(dst, part)); err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", s.Name, err)
		}
	}
	if err := s.Restart(ctx); err != nil {
		return nil, err
	}
	return sn, nil
}

// restore kills s, replaces the given parts of its state (all of them when
// parts is empty) with the snapshot's and starts it again. Parts not
// restored are emptied. Killing is safe because everything it would lose
// is replaced, and it takes milliseconds where a clean shutdown of a
// server full of dirty pages takes seconds.
func (sn *snapshot) restore(ctx context.Context, s *sandbox.Server, parts ...string) error {
	if len(parts) == 0 {
		parts = snapshotParts
	}
	if err := s.Kill(); err != nil {
		return err
	}
	for _, part := range snapshotParts {
		dst := serverPart(s, part)
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		if !slices.Contains(parts, part) {
			if err := os.Mkdir(dst, 0o700); err != nil {
				return err
			}
			continue
		}
		if err := sandbox.CopyTree(filepath.Join(sn.dir, part), dst); err != nil {
			return fmt.Errorf("restoring %s of %s: %w", part, s.Name, err)
		}
	}
	return s.Restart(ctx)
}
