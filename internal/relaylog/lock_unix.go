//go:build unix

package relaylog

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive flock on path, creating it, so that two
// processes (or two Logs in one process) never append to one log. The lock
// goes with the file descriptor: closing the returned file releases it,
// and so does the death of the process.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("relaylog: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("relaylog: %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("relaylog: locking %s: %w", path, err)
	}
	return f, nil
}
