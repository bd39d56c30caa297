package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// logged is one command of a general log: the connection that ran it and
// the statement, "USE `db`" for an Init DB command.
type logged struct {
	conn string
	text string
}

// entry matches the first line of a general log entry: an optional
// timestamp (the server writes one when the second changes), then tabs,
// the connection id, the command and its argument.
var entry = regexp.MustCompile(`^(?:\d{6}\s+\d{1,2}:\d{2}:\d{2})?\t+\s*(\d+) ([A-Za-z ]+?)\t(.*)$`)

// header matches the lines a server writes at the top of its general log
// when it opens it: they end the entry before them.
var header = regexp.MustCompile(`^(\S.* started with:|Tcp port: .*|Time\s+Id Command\s+Argument)$`)

// parseGeneralLog reads a MariaDB general log (log_output=FILE) and returns
// its Query and Init DB commands in the order the server logged them. A
// statement that spans lines keeps its newlines.
func parseGeneralLog(r io.Reader) ([]logged, error) {
	sc := bufio.NewScanner(r)
	// A statement is one line as long as the packet that carried it.
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var out []logged
	open := false // the last entry is a statement that may go on
	for sc.Scan() {
		line := sc.Text()
		if m := entry.FindStringSubmatch(line); m != nil {
			open = true
			switch m[2] {
			case "Query":
				out = append(out, logged{conn: m[1], text: m[3]})
			case "Init DB":
				out = append(out, logged{conn: m[1], text: "USE `" + strings.ReplaceAll(m[3], "`", "``") + "`"})
			default:
				open = false
			}
			continue
		}
		if header.MatchString(line) {
			open = false
			continue
		}
		if open && len(out) > 0 {
			out[len(out)-1].text += "\n" + line
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the general log: %w", err)
	}
	return out, nil
}
