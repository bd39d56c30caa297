//go:build !unix

package relaylog

import (
	"fmt"
	"os"
)

// lockDir creates path; without flock the directory is not protected
// against a second writer.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("relaylog: %w", err)
	}
	return f, nil
}
