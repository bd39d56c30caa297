package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion runs `paraply version` as the command line does: one line
// for each field, and the Go version line is the Go that built the
// binary running it. (A test binary records no VCS revision, so those
// lines say unknown here; TestWriteVersion checks how they are printed.)
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

// TestWriteVersion checks the fields of a release build's information,
// as `go build` records them from a git checkout, and of a build that
// recorded none.
func TestWriteVersion(t *testing.T) {
	release := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/paraply/paraply", Version: "v1.2.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "bea6dfb7297567e1455504b95013eaa0796adadb"},
			{Key: "vcs.time", Value: "2026-11-28T02:23:28Z"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"release", release, "paraply v1.2.0\n" +
			"revision: bea6dfb7297567e1455504b95013eaa0796adadb (clean)\n" +
			"time: 2026-11-28T02:23:28Z\n" +
			"go: go1.26.8\n"},
		{"modified", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "bea6dfb"}, {Key: "vcs.modified", Value: "true"}}},
			"paraply v1.2.0+dirty\n" +
				"revision: bea6dfb (modified: the tree had uncommitted changes)\n" +
				"time: unknown\n" +
				"go: go1.26.8\n"},
		{"nothing recorded", &debug.BuildInfo{}, "paraply (unknown)\nrevision: unknown\ntime: unknown\ngo: unknown\n"},
	} {
		var out bytes.Buffer
		writeVersion(&out, tc.info)
		if out.String() != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, out.String(), tc.want)
		}
	}
}
