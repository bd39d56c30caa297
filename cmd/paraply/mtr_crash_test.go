package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
)

// A target server that dies while a file runs is a verdict of its own
// (verdictCrashed), not a replica that stopped: the harness keeps what
// mariadbd wrote about it (the signal, the stack, the query its thread
// ran) and says which server it was.

// mtrCrash is what a server that died left in its error log.
type mtrCrash struct {
	server  string // "paraply's target" or "MariaDB's replica"
	summary string // the signal, the first frames of the stack, the query
	excerpt string // the error log from the signal on
}

// mtrGone waits a little for a server whose connection failed to be seen
// exited (mariadbd writes its stack before it exits) and reports whether
// it has.
func mtrGone(s *sandbox.Server) bool {
	for range 50 {
		if !s.Running() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// mtrCrashReport reads what a server that exited wrote last to its error
// log (at path): from its last "got signal" line, or its last 40 lines
// when there is none (it exited without a signal).
func mtrCrashReport(server, path string) mtrCrash {
	b, err := os.ReadFile(path)
	if err != nil {
		return mtrCrash{server: server, summary: "its error log: " + err.Error()}
	}
	return mtrParseCrash(server, string(b), mtrDemangle)
}

// mtrDemangle turns the C++ names of stack frames (Debian's mariadbd
// prints them mangled: _ZN8ha_maria10drop_tableEPKc) into source names
// with c++filt, when there is one.
func mtrDemangle(names []string) []string {
	cmd := exec.Command("c++filt")
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n"))
	out, err := cmd.Output()
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil || len(got) != len(names) {
		return names
	}
	return got
}

// mtrFrame is a frame of mariadbd's stack trace: the function, in
// parentheses after the binary (mariadbd(ha_maria::drop_table(char
// const*)+0x1d)[0x...]), or after it, mangled.
var mtrFrame = regexp.MustCompile(`^\S*mariadbd\(([^()+]+(?:\([^)]*\))?)[^)]*\)`)

// mtrParseCrash takes a crash apart (see mtrCrashReport), demangling the
// names of the stack's frames.
func mtrParseCrash(server, log string, demangle func([]string) []string) mtrCrash {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	from := max(0, len(lines)-40)
	signal := ""
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "got signal") {
			from, signal = i, strings.TrimSpace(lines[i])
			break
		}
	}
	c := mtrCrash{server: server, excerpt: strings.Join(lines[from:], "\n")}
	var frames []string
	query := ""
	inQuery := false
	for _, l := range lines[from:] {
		switch {
		case inQuery && (strings.HasPrefix(l, "Connection ID") || strings.HasPrefix(l, "Status:")):
			inQuery = false
		case inQuery:
			query += " " + strings.TrimSpace(l)
		case strings.HasPrefix(l, "Query ("):
			_, q, _ := strings.Cut(l, "): ")
			query, inQuery = q, true
		default:
			if m := mtrFrame.FindStringSubmatch(l); m != nil && len(frames) < 8 {
				fn := m[1]
				if !strings.Contains(fn, "my_print_stacktrace") && !strings.Contains(fn, "handle_fatal_signal") {
					frames = append(frames, fn)
				}
			}
		}
	}
	parts := []string{}
	if signal != "" {
		_, sig, _ := strings.Cut(signal, "[ERROR] ")
		parts = append(parts, strings.TrimSpace(strings.TrimSuffix(sig, ";")))
	} else {
		parts = append(parts, "exited without a signal in its error log")
	}
	if len(frames) > 0 {
		parts = append(parts, "stack "+strings.Join(demangle(frames), " ← "))
	}
	if query != "" {
		parts = append(parts, "query "+abbrev(strings.TrimSpace(query), 300))
	}
	c.summary = strings.Join(parts, "; ")
	return c
}

// TestMTRParseCrash: a crash as mariadbd 10.11 writes it gives its signal,
// its stack from the failing function down (names demangled; c++filt
// comes with binutils, which the Go toolchain's cgo needs anyway), and
// the query.
func TestMTRParseCrash(t *testing.T) {
	log := `2026-11-20 10:00:00 5 [Note] something before
2026-11-20 10:00:01 0x7f2a [ERROR] mariadbd got signal 11 ;
Sorry, we probably made a mistake, and this is a bug.
Server version: 10.11.19-MariaDB-0+deb12u1-log source revision:
Thread pointer: 0x7f29e4000c68
Attempting backtrace. You can use the following information to find out
stack_bottom = 0x7f2a1c1c1000 thread_stack 0x49000
/usr/sbin/mariadbd(my_print_stacktrace+0x2e)[0x55d1]
/usr/sbin/mariadbd(handle_fatal_signal+0x475)[0x55d2]
libc.so.6(+0x3c050)[0x7f2a]
addr2line: 'mariadbd': No such file
mariadbd(_ZN8ha_maria10drop_tableEPKc+0x1d)[0x55d3]
/usr/sbin/mariadbd(free_tmp_table(THD*, TABLE*)+0x1a4)[0x55d4]
mariadbd(_Z19close_thread_tablesP3THD+0x2a1)[0x55d5]
Trying to get some variables.
Query (0x7f29e4012345): SELECT TABLE_SCHEMA, TABLE_NAME
FROM information_schema.TABLES
Connection ID (thread ID): 42
Status: NOT_KILLED
`
	c := mtrParseCrash("paraply's target", log, mtrDemangle)
	want := "mariadbd got signal 11; stack ha_maria::drop_table(char const*) ← free_tmp_table(THD*, TABLE*) ← close_thread_tables(THD*); " +
		"query SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
	if c.summary != want {
		t.Errorf("summary\n got %q\nwant %q", c.summary, want)
	}
	if !strings.HasPrefix(c.excerpt, "2026-11-20 10:00:01 0x7f2a [ERROR] mariadbd got signal 11") || !strings.HasSuffix(c.excerpt, "Status: NOT_KILLED") {
		t.Errorf("excerpt:\n%s", c.excerpt)
	}
	if c := mtrParseCrash("x", "a\nb\n", mtrDemangle); c.summary != "exited without a signal in its error log" || c.excerpt != "a\nb" {
		t.Errorf("no signal: %+v", c)
	}
}
