// Package buildinfo says which paraply a binary is: the version, commit
// and commit time that `make build` and `make release` stamp into it, and,
// where nothing was stamped (go build, go run, go test), what Go recorded
// of the build.
//
// One version string names a build everywhere: `git describe --tags
// --always --dirty` at build time (v1.2.0, v1.2.0-3-gabc1234-dirty, or the
// abbreviated commit alone before the first tag). `paraply version` prints
// it, and scripts/mkdeb.sh derives the Debian package's version from the
// same string in one documented way (the leading v dropped, "-" made "+",
// 0.0.0+g<commit> before the first tag). It is stamped with -ldflags -X
// rather than read from Go's VCS stamping, which GOFLAGS=-buildvcs=false
// (or a tree copied without .git) turns off and which spells an untagged
// commit as a pseudo-version (v0.0.0-20261128022328-731a7937b768) that
// matches neither git nor dpkg.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Set by the Makefile's STAMP (-ldflags -X), empty otherwise.
var (
	version    string // git describe --tags --always --dirty
	revision   string // git rev-parse HEAD
	commitTime string // the commit's time, UTC, RFC 3339
)

// Info is what a binary knows of its build. A field it does not know is
// "".
type Info struct {
	// Version is git describe's string when stamped, else Go's module
	// version ("(devel)", or a pseudo-version with VCS stamping).
	Version string
	// Revision is the full commit hash the binary was built from.
	Revision string
	// Tree is "clean" or "modified": whether the working tree had
	// uncommitted changes.
	Tree string
	// Time is the commit's time.
	Time string
	// Go is the Go version that built the binary.
	Go string
}

// Read returns this binary's Info.
func Read() Info {
	info, _ := debug.ReadBuildInfo()
	return merge(Info{Version: version, Revision: revision, Time: commitTime}, info)
}

// Version is this binary's version string (Read().Version, "(unknown)"
// when there is none).
func Version() string {
	if v := Read().Version; v != "" {
		return v
	}
	return "(unknown)"
}

// merge completes stamped, the Makefile's stamp, from Go's build
// information info (nil if the binary has none). A stamped version says
// whether the tree was modified (git describe's -dirty); Go's records say
// it as vcs.modified.
func merge(stamped Info, info *debug.BuildInfo) Info {
	settings := map[string]string{}
	if info != nil {
		stamped.Go = info.GoVersion
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	if stamped.Version != "" {
		stamped.Tree = "clean"
		if strings.HasSuffix(stamped.Version, "-dirty") {
			stamped.Tree = "modified"
		}
		return stamped
	}
	if info != nil {
		stamped.Version = info.Main.Version
	}
	stamped.Revision, stamped.Time = settings["vcs.revision"], settings["vcs.time"]
	switch settings["vcs.modified"] {
	case "true":
		stamped.Tree = "modified"
	case "false":
		stamped.Tree = "clean"
	}
	return stamped
}
