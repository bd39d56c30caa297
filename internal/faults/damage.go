package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Segments returns the relay log segment files in dir, oldest first.
func Segments(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "relay-*.seg"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files) // the names hold zero-padded first indexes
	return files, nil
}

// FlipBit inverts the lowest bit of the byte at offset in path, as a disk
// or memory fault would.
func FlipBit(path string, offset int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, offset); err != nil {
		return fmt.Errorf("faults: reading %s at %d: %w", path, offset, err)
	}
	b[0] ^= 1
	if _, err := f.WriteAt(b, offset); err != nil {
		return err
	}
	return f.Sync()
}

// Size returns the size of the file at path.
func Size(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
