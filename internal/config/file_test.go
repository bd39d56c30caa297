package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// testFlags is a flag set shaped like replicate's, with the kinds of flag
// a config file sets.
func testFlags() *pflag.FlagSet {
	flags := pflag.NewFlagSet("replicate", pflag.ContinueOnError)
	flags.String("source", "", "")
	flags.String("relay-dir", "relay", "")
	flags.Int("workers", 4, "")
	flags.Bool("until-caught-up", false, "")
	flags.Duration("batch-max-delay", 0, "")
	flags.StringSlice("tables", nil, "")
	return flags
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "paraply.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestApplyFile: every accepted spelling sets its flag, and a flag given on
// the command line keeps the command line's value.
func TestApplyFile(t *testing.T) {
	path := writeConfig(t, `# paraply replicate settings

source = mysql://repl@db1:3306   # a comment after a value
--relay-dir=/var/lib/paraply/relay
workers = 16
until-caught-up = true
batch-max-delay = "5ms"
tables = app.a,app.b
`)
	flags := testFlags()
	if err := flags.Parse([]string{"--workers", "2"}); err != nil {
		t.Fatal(err)
	}
	if err := ApplyFile(flags, path, nil); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"source":          "mysql://repl@db1:3306",
		"relay-dir":       "/var/lib/paraply/relay",
		"workers":         "2", // the command line wins
		"until-caught-up": "true",
		"batch-max-delay": (5 * time.Millisecond).String(),
		"tables":          "[app.a,app.b]",
	} {
		if got := flags.Lookup(name).Value.String(); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestApplyFileErrors: a mistake names the file and line, and stops at the
// first one.
func TestApplyFileErrors(t *testing.T) {
	for _, c := range []struct {
		text string
		want string // in the error
	}{
		{"workers = 8\nworkres = 8\n", `:2: unknown setting "workres"`},
		{"\n# only a comment\nworkers 8\n", ":3: want name = value"},
		{"workers = many\n", ":1: workers: invalid argument"},
		{"until-caught-up = maybe\n", ":1: until-caught-up:"},
		{"= 8\n", `:1: unknown setting ""`},
	} {
		path := writeConfig(t, c.text)
		err := ApplyFile(testFlags(), path, nil)
		if err == nil || !strings.Contains(err.Error(), path+c.want) {
			t.Errorf("ApplyFile(%q) = %v, want an error containing %q", c.text, err, path+c.want)
		}
	}
	if err := ApplyFile(testFlags(), filepath.Join(t.TempDir(), "missing.conf"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ApplyFile of a missing file = %v, want fs.ErrNotExist", err)
	}
}

// TestApplyFileRepeatable: a repeatable flag takes every line of the file
// that names it (a second exclude line must not be dropped), unless the
// command line gives it.
func TestApplyFileRepeatable(t *testing.T) {
	path := writeConfig(t, "workers = 8\n# a comment\ninclude = app.%\ninclude = shop.orders\nexclude = %.tmp_%\nexclude = app.old\n")
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	workers := f.Int("workers", 1, "")
	include := f.StringArray("include", nil, "")
	exclude := f.StringArray("exclude", nil, "")
	if err := f.Parse([]string{"--workers", "2", "--include", "cli.%"}); err != nil {
		t.Fatal(err)
	}
	if err := ApplyFile(f, path, nil); err != nil {
		t.Fatal(err)
	}
	if *workers != 2 || !slices.Equal(*include, []string{"cli.%"}) {
		t.Errorf("the command line must win: workers %d, include %q", *workers, *include)
	}
	if want := []string{"%.tmp_%", "app.old"}; !slices.Equal(*exclude, want) {
		t.Errorf("exclude %q, want %q", *exclude, want)
	}
}

// TestApplyFileSharedByCommands: one file serves every command: another
// command's setting is skipped, a name no command has is still an error.
func TestApplyFileSharedByCommands(t *testing.T) {
	path := writeConfig(t, "source = mysql://repl@db1:3306\nworkers = 8\n")
	flags := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	flags.String("source", "", "")
	other := func(name string) bool { return name == "workers" }
	if err := ApplyFile(flags, path, other); err != nil {
		t.Fatal(err)
	}
	if got, _ := flags.GetString("source"); got != "mysql://repl@db1:3306" {
		t.Errorf("source = %q", got)
	}
	if err := ApplyFile(flags, writeConfig(t, "wrokers = 8\n"), other); err == nil || !strings.Contains(err.Error(), `unknown setting "wrokers"`) {
		t.Errorf("a typo: %v", err)
	}
}
