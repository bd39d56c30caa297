package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// A test file of MariaDB's suite drops its tables as it goes and at its
// end, so comparing the servers only after it ran would compare almost
// nothing. mtrCheckpoints therefore copies the file with a checkpoint
// line inserted before every statement that throws data away (DROP
// TABLE/DATABASE/SCHEMA/VIEW/SEQUENCE, DROP TEMPORARY TABLE, TRUNCATE)
// and one at its end. The checkpoint is an --exec of a command that
// returns once the harness has compared the servers, so that the test
// waits there.
//
// mysqltest's syntax decides where a line can go:
//   - a statement can span lines: only the line a statement starts on is
//     looked at, and the end of a statement is its delimiter outside
//     quotes;
//   - "perl", "write_file" and "append_file" take the lines up to a
//     terminator line (EOF by default) as data;
//   - after "delimiter X" the file defines routines and triggers, whose
//     bodies hold statements that run later, not here: no checkpoint goes
//     in until the delimiter is ";" again;
//   - "error", "replace_result", "sorted_result", "send" and the like
//     apply to the next statement, so the checkpoint goes before them,
//     not between them and their statement.
//
// Files that --source include files are not followed into them.

// mtrDropStmt matches a statement line that discards tables or rows.
var mtrDropStmt = regexp.MustCompile(`(?i)^(--\s*eval\s+|eval\s+)?(drop\s+(temporary\s+)?(table|database|schema|view|sequence)\b|truncate\b)`)

// mtrModifiers are the mysqltest commands that apply to the statement
// after them.
var mtrModifiers = map[string]bool{
	"error": true, "replace_result": true, "replace_column": true, "replace_regex": true, "replace_numeric_round": true,
	"sorted_result": true, "partially_sorted_result": true, "lowercase_result": true, "send": true,
}

// mtrBlockCommands start a block of data lines that ends at a
// terminator line.
var mtrBlockCommands = map[string]bool{"perl": true, "write_file": true, "append_file": true}

// mtrCheckpoints returns the lines of a test file with checkLine(n)
// inserted before each discarding statement that starts on line n (1-based)
// and checkLine(0) at the end, and how many it inserted.
func mtrCheckpoints(text string, checkLine func(line int) string) (string, int) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []string
	delim := ";"
	inStmt := false  // inside a statement that started on an earlier line
	var quote byte   // the open quote of that statement, 0 if none
	terminator := "" // inside a data block until this line
	anchor := -1     // where in out the run of modifier lines before the next statement started
	inserted := 0
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case terminator != "":
			if trimmed == terminator {
				terminator = ""
			}
		case inStmt:
			inStmt = !mtrEnds(trimmed, delim, &quote)
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			// Comments keep a pending modifier run: "--error X", a
			// comment, then the statement is still one unit.
			out = append(out, line)
			continue
		default:
			cmd, rest, dashed := mtrCommand(trimmed)
			if mtrDropStmt.MatchString(trimmed) && delim == ";" {
				at := len(out)
				if anchor >= 0 {
					at = anchor
				}
				out = append(out[:at], append([]string{checkLine(i + 1)}, out[at:]...)...)
				inserted++
			}
			switch {
			case mtrModifiers[cmd]:
				if anchor < 0 {
					anchor = len(out)
				}
				out = append(out, line)
				if !dashed && !strings.HasSuffix(trimmed, delim) {
					inStmt = !mtrEnds(trimmed, delim, &quote)
				}
				continue
			case cmd == "delimiter":
				d := strings.TrimSpace(rest)
				if !dashed {
					d = strings.TrimSpace(strings.TrimSuffix(d, delim))
				}
				if d != "" {
					delim = d
				}
			case mtrBlockCommands[cmd]:
				terminator = mtrTerminator(cmd, rest, dashed, delim)
			case dashed || cmd == "if" || cmd == "while" || strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "}"):
				// one line, or the head or end of a block
			default:
				quote = 0
				inStmt = !mtrEnds(trimmed, delim, &quote)
			}
		}
		anchor = -1
		out = append(out, line)
	}
	out = append(out, "", checkLine(0), "")
	return strings.Join(out, "\n"), inserted
}

// mtrCommand splits a line that starts a command into its lower-case first
// word (without the leading "--") and the rest; dashed says it had "--",
// which makes it a one-line command.
func mtrCommand(trimmed string) (cmd, rest string, dashed bool) {
	s, dashed := strings.CutPrefix(trimmed, "--")
	s = strings.TrimLeft(s, " \t")
	end := strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == ';' || r == '(' })
	if end < 0 {
		end = len(s)
	}
	return strings.ToLower(s[:end]), s[end:], dashed
}

// mtrTerminator is the line that ends the data block a perl, write_file
// or append_file command starts.
func mtrTerminator(cmd, rest string, dashed bool, delim string) string {
	rest = strings.TrimSpace(rest)
	if !dashed {
		rest = strings.TrimSpace(strings.TrimSuffix(rest, delim))
	}
	f := strings.Fields(rest)
	switch {
	case cmd == "perl" && len(f) >= 1:
		return f[0]
	case cmd != "perl" && len(f) >= 2:
		return f[1]
	}
	return "EOF"
}

// mtrEnds reports whether the statement text on a line reaches the
// delimiter outside quotes; quote carries an open quote from line to line.
func mtrEnds(s, delim string, quote *byte) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case *quote != 0:
			if c == '\\' && *quote != '`' {
				i++
			} else if c == *quote {
				*quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			*quote = c
		case strings.HasPrefix(s[i:], delim):
			return true
		}
	}
	return false
}

// TestMTRCheckpoints pins where checkpoints go in mysqltest syntax.
func TestMTRCheckpoints(t *testing.T) {
	in := `--source include/have_innodb.inc
drop table if exists t1;
create table t1 (a int,
  b varchar(10) default 'x;y');
--error ER_BAD_TABLE_ERROR
# a comment between
DROP TABLE t2;
insert into t1 values (1, 'drop table t1;'),
(2, 'b');
delimiter |;
create procedure p() begin drop table t1; end|
delimiter ;|
perl;
drop table t1;
EOF
--write_file $MYSQL_TMP_DIR/x.sql END
drop table t1;
END
if ($x)
{
  eval truncate table t$x;
}
--replace_result $a A
--eval drop view v1
--echo drop table t9;
Drop Temporary Table t3;`
	got, n := mtrCheckpoints(in, func(line int) string { return fmt.Sprintf("CHECK %d", line) })
	want := `--source include/have_innodb.inc
CHECK 2
drop table if exists t1;
create table t1 (a int,
  b varchar(10) default 'x;y');
CHECK 7
--error ER_BAD_TABLE_ERROR
# a comment between
DROP TABLE t2;
insert into t1 values (1, 'drop table t1;'),
(2, 'b');
delimiter |;
create procedure p() begin drop table t1; end|
delimiter ;|
perl;
drop table t1;
EOF
--write_file $MYSQL_TMP_DIR/x.sql END
drop table t1;
END
if ($x)
{
CHECK 21
  eval truncate table t$x;
}
CHECK 24
--replace_result $a A
--eval drop view v1
--echo drop table t9;
CHECK 26
Drop Temporary Table t3;

CHECK 0
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if n != 5 {
		t.Errorf("inserted %d checkpoints, want 5", n)
	}
}
