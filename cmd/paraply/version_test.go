package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/buildinfo"
)

// TestVersion runs `paraply version` as the command line does: one line
// for each field, and the Go version line is the Go that built the
// binary running it. (A test binary has no stamp and records no VCS
// revision, so those lines say unknown here; TestWriteVersion checks how
// they are printed, TestMakeBuildStampsVersion what make build stamps.)
func TestVersion(t *testing.T) {
	cmd := versionCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	prefixes := []string{"paraply ", "revision: ", "time: ", "go: "}
	if len(lines) != len(prefixes) {
		t.Fatalf("paraply version printed %d lines, want %d:\n%s", len(lines), len(prefixes), out.String())
	}
	for i, p := range prefixes {
		if !strings.HasPrefix(lines[i], p) || len(lines[i]) == len(p) {
			t.Errorf("line %d = %q, want %q and a value", i+1, lines[i], p+"...")
		}
	}
	if want := "go: " + runtime.Version(); lines[3] != want {
		t.Errorf("the Go version line is %q, want %q", lines[3], want)
	}
}

// TestWriteVersion checks how the fields of a build's information are
// printed: a release's, a modified tree's, and a build that recorded
// nothing.
func TestWriteVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		info buildinfo.Info
		want string
	}{
		{"release", buildinfo.Info{Version: "v1.2.0", Revision: "bea6dfb7297567e1455504b95013eaa0796adadb", Tree: "clean",
			Time: "2026-11-28T02:23:28Z", Go: "go1.26.8"},
			"paraply v1.2.0\n" +
				"revision: bea6dfb7297567e1455504b95013eaa0796adadb (clean)\n" +
				"time: 2026-11-28T02:23:28Z\n" +
				"go: go1.26.8\n"},
		{"modified", buildinfo.Info{Version: "v1.2.0-dirty", Revision: "bea6dfb", Tree: "modified", Go: "go1.26.8"},
			"paraply v1.2.0-dirty\n" +
				"revision: bea6dfb (modified: the tree had uncommitted changes)\n" +
				"time: unknown\n" +
				"go: go1.26.8\n"},
		{"nothing recorded", buildinfo.Info{}, "paraply (unknown)\nrevision: unknown\ntime: unknown\ngo: unknown\n"},
	} {
		var out bytes.Buffer
		writeVersion(&out, tc.info)
		if out.String() != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, out.String(), tc.want)
		}
	}
}

// TestMakeBuildStampsVersion builds paraply with `make build` on a
// machine whose GOFLAGS turn Go's VCS stamping off (-buildvcs=false) and
// checks that `paraply version` still says the version git describe
// gives (the string the Debian package's version is made from), the
// commit, and whether the tree was modified.
func TestMakeBuildStampsVersion(t *testing.T) {
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", "../.."}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	describe, head := git("describe", "--tags", "--always", "--dirty"), git("rev-parse", "HEAD")
	bin := filepath.Join(t.TempDir(), "paraply")
	build := exec.Command("make", "-C", "../..", "build", "BIN="+bin)
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("paraply version: %v\n%s", err, out)
	}
	tree := "(clean)"
	if strings.HasSuffix(describe, "-dirty") {
		tree = "(modified: the tree had uncommitted changes)"
	}
	for _, want := range []string{"paraply " + describe + "\n", "revision: " + head + " " + tree + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make build's paraply version does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "unknown") {
		t.Errorf("make build's paraply version has a field it does not know:\n%s", out)
	}
}
