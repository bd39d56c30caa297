package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
		if err := repointIndexes(dst); err != nil {
			return fmt.Errorf("restoring %s of %s: %w", part, s.Name, err)
		}
	}
	return s.Restart(ctx)
}

// repointIndexes makes the log index files in dir (mariadb-bin.index,
// relay-bin.index) name their logs in dir. The server writes them with
// the absolute paths of the server the snapshot was taken from: restored
// into another server (the initial data, loaded once, serves the durable
// and the non-durable cluster), they would name the first server's files,
// gone once its cluster is removed, and the server would not start.
func repointIndexes(dir string) error {
	indexes, err := filepath.Glob(filepath.Join(dir, "*.index"))
	if err != nil {
		return err
	}
	for _, idx := range indexes {
		b, err := os.ReadFile(idx)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(b)) == "" {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		for i, l := range lines {
			if l != "" {
				lines[i] = filepath.Join(dir, filepath.Base(l))
			}
		}
		if err := os.WriteFile(idx, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			return err
		}
	}
	return nil
}
