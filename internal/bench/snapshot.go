package bench

import (
	"context"
	"fmt"
	"io"
	"io/fs"
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
		if err := copyTree(serverPart(s, part), filepath.Join(dst, part)); err != nil {
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
		if err := copyTree(filepath.Join(sn.dir, part), dst); err != nil {
			return fmt.Errorf("restoring %s of %s: %w", part, s.Name, err)
		}
	}
	return s.Restart(ctx)
}

// copyTree copies the directories and regular files under src to dst,
// which must not exist.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o700)
		case d.Type().IsRegular():
			return copyFile(path, target)
		default:
			return fmt.Errorf("unexpected file type %v at %s", d.Type(), path)
		}
	})
}

// copyFile copies src to dst, which must not exist. io.Copy between two
// files becomes copy_file_range, so the data stays in the kernel.
func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}
