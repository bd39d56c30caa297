package relaylog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Remove deletes the relay log in dir: its segment files, its owner and
// its LOCK file, nothing else. The directory itself goes only if that leaves it
// empty: an operator's --relay-dir may be "." or hold other files (a
// password file, say), which must survive a relay log started again. The
// log must not be open, here or in another process (ErrLocked): two
// targets given one --relay-dir must not wipe each other's log.
func Remove(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("relaylog: %w", err)
	}
	lock, err := lockDir(filepath.Join(dir, "LOCK"))
	if err != nil {
		return err
	}
	defer lock.Close()
	others := 0
	for _, e := range ents {
		_, seg := parseSegName(e.Name())
		if !(seg && e.Type().IsRegular()) && e.Name() != "LOCK" && e.Name() != ownerFile {
			others++
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("relaylog: %w", err)
		}
	}
	if others == 0 {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("relaylog: %w", err)
		}
	}
	return nil
}
