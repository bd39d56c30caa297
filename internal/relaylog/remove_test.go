package relaylog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveKeepsOtherFiles: a relay directory that also holds other files
// (the operator's --relay-dir may be "." or hold a password file) loses
// only the relay log's own files; a directory of its own goes entirely.
func TestRemoveKeepsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "target.password")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, l, smallRecords(t, 3))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if firsts, _ := listSegments(dir); len(firsts) == 0 {
		t.Fatal("no segment was written")
	}
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != "notes" || names[1] != "target.password" {
		t.Fatalf("left %v, want [notes target.password]", names)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "s3cret\n" {
		t.Fatalf("the other file changed: %q %v", b, err)
	}

	own := filepath.Join(t.TempDir(), "relay")
	l, err = Open(Options{Dir: own})
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, l, smallRecords(t, 2))
	l.Close()
	if err := Remove(own); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Fatalf("a relay directory of its own is still there: %v", err)
	}
}

// TestRemoveRefusesAnOpenLog: a log open elsewhere (another process, or
// another target given the same --relay-dir) is not removed under it.
func TestRemoveRefusesAnOpenLog(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendAll(t, l, smallRecords(t, 3))
	if err := Remove(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("Remove of an open log: %v, want ErrLocked", err)
	}
	if firsts, _ := listSegments(dir); len(firsts) == 0 {
		t.Fatal("the open log's segments were removed")
	}
}
