package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// TestApplyFile: the command line wins, and a repeatable flag takes every
// line of the file that names it (a second --exclude line must not be
// dropped).
func TestApplyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "paraply.conf")
	conf := "workers = 8\n# a comment\ninclude = app.%\ninclude = shop.orders\nexclude = %.tmp_%\nexclude = app.old\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	workers := f.Int("workers", 1, "")
	include := f.StringArray("include", nil, "")
	exclude := f.StringArray("exclude", nil, "")
	if err := f.Parse([]string{"--workers", "2", "--include", "cli.%"}); err != nil {
		t.Fatal(err)
	}
	if err := ApplyFile(f, path); err != nil {
		t.Fatal(err)
	}
	if *workers != 2 || !slices.Equal(*include, []string{"cli.%"}) {
		t.Errorf("the command line must win: workers %d, include %q", *workers, *include)
	}
	if want := []string{"%.tmp_%", "app.old"}; !slices.Equal(*exclude, want) {
		t.Errorf("exclude %q, want %q", *exclude, want)
	}
}
