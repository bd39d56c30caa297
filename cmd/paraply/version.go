package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go version paraply was built from",
		Long: `version prints what the binary records about its build (Go's build
information): the module version, the VCS revision and time it was built
from, whether the working tree had uncommitted changes, and the Go version.
A field the build did not record (go run, go test, a build outside a git
checkout, -buildvcs=false) says "unknown".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, ok := debug.ReadBuildInfo()
			if !ok {
				return errors.New("the binary has no build information (built without module support?)")
			}
			writeVersion(cmd.OutOrStdout(), info)
			return nil
		},
	}
}

// writeVersion prints info's version, VCS revision, modification flag
// and time, and Go version, one "name: value" a line.
func writeVersion(w io.Writer, info *debug.BuildInfo) {
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	or := func(v, unknown string) string {
		if v == "" {
			return unknown
		}
		return v
	}
	fmt.Fprintf(w, "paraply %s\n", or(info.Main.Version, "(unknown)"))
	revision := or(settings["vcs.revision"], "unknown")
	switch settings["vcs.modified"] {
	case "true":
		revision += " (modified: the tree had uncommitted changes)"
	case "false":
		revision += " (clean)"
	}
	fmt.Fprintf(w, "revision: %s\n", revision)
	fmt.Fprintf(w, "time: %s\n", or(settings["vcs.time"], "unknown"))
	fmt.Fprintf(w, "go: %s\n", or(info.GoVersion, "unknown"))
}

// versionLine is the version `paraply version` prints on its first line,
// without the name: what /status.json says serves it.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	var b strings.Builder
	writeVersion(&b, info)
	first, _, _ := strings.Cut(b.String(), "\n")
	return strings.TrimPrefix(first, "paraply ")
}
