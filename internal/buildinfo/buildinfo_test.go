package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestMerge checks what a binary says of its build: the Makefile's stamp
// first (its -dirty saying whether the tree was modified), and without
// one what Go recorded (a git checkout built with VCS stamping, and a
// build that recorded nothing).
func TestMerge(t *testing.T) {
	goVCS := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/paraply/paraply", Version: "v0.0.0-20261128022328-bea6dfb72975"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "bea6dfb7297567e1455504b95013eaa0796adadb"},
			{Key: "vcs.time", Value: "2026-11-28T02:23:28Z"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	noVCS := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/paraply/paraply", Version: "(devel)"}}
	stamp := Info{Version: "v1.2.0-3-gbea6dfb", Revision: "bea6dfb7297567e1455504b95013eaa0796adadb", Time: "2026-11-28T02:23:28Z"}
	dirty := stamp
	dirty.Version += "-dirty"
	for _, tc := range []struct {
		name  string
		stamp Info
		info  *debug.BuildInfo
		want  Info
	}{
		{"stamped, Go's VCS stamping off", stamp, noVCS,
			Info{Version: "v1.2.0-3-gbea6dfb", Revision: stamp.Revision, Tree: "clean", Time: stamp.Time, Go: "go1.26.8"}},
		{"stamped wins over Go's pseudo-version", dirty, goVCS,
			Info{Version: "v1.2.0-3-gbea6dfb-dirty", Revision: stamp.Revision, Tree: "modified", Time: stamp.Time, Go: "go1.26.8"}},
		{"Go's records only", Info{}, goVCS,
			Info{Version: "v0.0.0-20261128022328-bea6dfb72975", Revision: stamp.Revision, Tree: "clean", Time: stamp.Time, Go: "go1.26.8"}},
		{"nothing recorded", Info{}, noVCS, Info{Version: "(devel)", Go: "go1.26.8"}},
		{"no build information", Info{}, nil, Info{}},
	} {
		if got := merge(tc.stamp, tc.info); got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}
