package relaylog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ownerFile is the file, in the log's directory, that names the
// checkpoint the log was written for (see Log.Owner).
const ownerFile = "OWNER"

// Owner is the identity of the checkpoint the log was written for, as
// SetOwner recorded it; "" when none was (a new log, or one an older
// paraply wrote). A relay log continues a checkpoint only when it was
// written for it: its indexes and resume position mean nothing beside
// another checkpoint (one made after the target was seeded again, or
// another target's), whose index may fall inside the log's range.
func (l *Log) Owner() (string, error) {
	b, err := os.ReadFile(filepath.Join(l.dir, ownerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("relaylog: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// SetOwner records id as the checkpoint the log is written for, durably:
// a crash leaves the old owner or the new one, never a torn file.
func (l *Log) SetOwner(id string) error {
	path := filepath.Join(l.dir, ownerFile)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("relaylog: %w", err)
	}
	_, err = f.WriteString(id + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(l.dir)
	}
	if err != nil {
		return fmt.Errorf("relaylog: recording the log's checkpoint: %w", err)
	}
	return nil
}

// SetAside moves the relay log in dir (its segments and owner) into a new
// directory inside dir, named for now, and returns that directory: a log
// that continues no checkpoint is kept for the operator to look at, never
// applied. As with Remove, the log must not be open.
func SetAside(dir string, now time.Time) (string, error) {
	lock, err := lockDir(filepath.Join(dir, "LOCK"))
	if err != nil {
		return "", err
	}
	defer lock.Close()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("relaylog: %w", err)
	}
	aside := filepath.Join(dir, "set-aside-"+now.UTC().Format("20060102T150405.000000000Z"))
	if err := os.Mkdir(aside, 0o700); err != nil {
		return "", fmt.Errorf("relaylog: %w", err)
	}
	for _, e := range ents {
		if _, seg := parseSegName(e.Name()); !(seg && e.Type().IsRegular()) && e.Name() != ownerFile {
			continue
		}
		if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(aside, e.Name())); err != nil {
			return "", fmt.Errorf("relaylog: setting the log aside: %w", err)
		}
	}
	if err := syncDir(dir); err != nil {
		return "", fmt.Errorf("relaylog: %w", err)
	}
	return aside, nil
}
