package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// TestWatchSeparator: --watch writes no clear-screen codes into a pipe or
// a buffer, only an empty line between reports.
func TestWatchSeparator(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, out := range []io.Writer{w, &bytes.Buffer{}} {
		var got []string
		for n := range 3 {
			got = append(got, watchSeparator(out, n))
		}
		if strings.Join(got, "|") != "|\n|\n" {
			t.Errorf("%T: --watch writes %q before its reports, want nothing, then an empty line", out, got)
		}
	}
}
