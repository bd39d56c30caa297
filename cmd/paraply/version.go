package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/buildinfo"
)

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go version paraply was built from",
		Long: `version prints which paraply this is: its version, the commit it was built
from, whether the working tree had uncommitted changes, the commit's time,
and the Go version.

make build and make release stamp the version: git describe --tags --always
--dirty (v1.2.0, v1.2.0-3-gabc1234-dirty, or the abbreviated commit before
the first tag), whatever GOFLAGS says. The Debian package's version is the
same string made a Debian one: the leading v dropped, "-" made "+", and
0.0.0+g<commit> before the first tag (scripts/mkdeb.sh), so v1.2.0-3-gabc1234
is package version 1.2.0+3+gabc1234. A binary built otherwise (go build, go
install) says what Go recorded of its build, and "unknown" where that is
nothing (-buildvcs=false, a tree without .git).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			writeVersion(cmd.OutOrStdout(), buildinfo.Read())
			return nil
		},
	}
}

// writeVersion prints info one "name: value" a line, "unknown" for what
// the build did not record.
func writeVersion(w io.Writer, info buildinfo.Info) {
	or := func(v, unknown string) string {
		if v == "" {
			return unknown
		}
		return v
	}
	revision := or(info.Revision, "unknown")
	switch info.Tree {
	case "modified":
		revision += " (modified: the tree had uncommitted changes)"
	case "clean":
		revision += " (clean)"
	}
	fmt.Fprintf(w, "paraply %s\n", or(info.Version, "(unknown)"))
	fmt.Fprintf(w, "revision: %s\n", revision)
	fmt.Fprintf(w, "time: %s\n", or(info.Time, "unknown"))
	fmt.Fprintf(w, "go: %s\n", or(info.Go, "unknown"))
}
