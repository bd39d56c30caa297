package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRepointIndexes: a snapshot restored into another server's directory
// names its logs there, not in the server it was taken from (the
// non-durable cluster could not start on the durable one's binlog index).
func TestRepointIndexes(t *testing.T) {
	dir := t.TempDir()
	old := "/tmp/gone/binlog/"
	if err := os.WriteFile(filepath.Join(dir, "mariadb-bin.index"), []byte(old+"mariadb-bin.000001\n"+old+"mariadb-bin.000002\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "relay-bin.index"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := repointIndexes(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "mariadb-bin.index"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "mariadb-bin.000001") + "\n" + filepath.Join(dir, "mariadb-bin.000002") + "\n"
	if string(b) != want {
		t.Errorf("index = %q, want %q", b, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "relay-bin.index")); len(b) != 0 {
		t.Errorf("an empty index became %q", b)
	}
}
