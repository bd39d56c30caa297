package config

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// NotFromFile is a flag annotation: ApplyFile leaves the flag alone, as
// another command's, though the command has a flag of that name (status
// --target lists a target's streams; the file's target is the stream's).
const NotFromFile = "paraply/not-from-config-file"

// ApplyFile reads flag settings from path, one "name = value" per line
// ('#' starts a comment), and sets each flag the command line did not set:
// the command line wins over the file. One file serves every command: a
// name that is not one of flags but for which other(name) is true (another
// command's flag) is skipped; any other unknown name is an error, so that a
// typo does not pass unnoticed. other may be nil. Passwords do not belong
// in it: use the password-file flags.
func ApplyFile(flags *pflag.FlagSet, path string, other func(name string) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// What the command line set, before the file sets anything: a flag
	// that may be repeated (--include) takes every line of the file.
	onCommandLine := map[string]bool{}
	flags.Visit(func(fl *pflag.Flag) { onCommandLine[fl.Name] = true })
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = strings.TrimSpace(text[:i])
		}
		if text == "" {
			continue
		}
		name, value, ok := strings.Cut(text, "=")
		if !ok {
			return fmt.Errorf("%s:%d: want name = value", path, line)
		}
		name, value = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "--")), strings.TrimSpace(value)
		fl := flags.Lookup(name)
		if fl != nil && fl.Annotations[NotFromFile] != nil {
			continue // the command's own meaning of a shared name
		}
		if fl == nil {
			if other != nil && other(name) {
				continue
			}
			return fmt.Errorf("%s:%d: unknown setting %q", path, line, name)
		}
		if onCommandLine[fl.Name] {
			continue
		}
		if err := flags.Set(name, strings.Trim(value, `"`)); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", path, line, name, err)
		}
	}
	return sc.Err()
}
