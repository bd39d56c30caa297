package schema

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Warning is a statement of a dump that could not be applied as written.
type Warning struct {
	File string // the name given to Parse
	Line int    // line where the statement starts
	// Table is the table the statement names first, if there is one.
	Table TableName
	// Err wraps ErrUnparsed or ErrMismatch.
	Err error
}

// String formats the warning as "file:line: `db`.`t`: error".
func (w Warning) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: ", w.File, w.Line)
	if w.Table != (TableName{}) {
		b.WriteString(w.Table.String() + ": ")
	}
	b.WriteString(w.Err.Error())
	return b.String()
}

// ParseFile reads a schema dump from a file; see Parse.
func ParseFile(path string) (*Catalog, []Warning, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("schema: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

var (
	dumpDatabase = regexp.MustCompile(`(?m)^-- Host: .*\bDatabase: (\S+)\s*$`)
	dumpMySQL    = regexp.MustCompile(`(?m)^-- MySQL dump `)
	dumpMySQL5   = regexp.MustCompile(`(?m)^-- Server version\s+5\.`)
)

// Parse reads a schema dump, as `mariadb-dump --no-data` and `mysqldump
// --no-data` write it, named name in warnings, and returns its catalog.
//
// It reads the script as the mariadb client does: comments, versioned
// comments (/*!40101 ... */, /*M!100616 ... */, whose bodies count) and
// DELIMITER blocks (triggers, routines) are honoured; USE switches the
// current database; every statement goes through ApplyDDL's logic, so DROP
// TABLE IF EXISTS before CREATE TABLE, views, SET, LOCK TABLES and the like
// work as on a server. A dump of one database without USE gets its database
// from the "-- Host: ... Database: db" header. A dump by mysqldump ("--
// MySQL dump" header) is read with the MySQL flavor (see SetFlavor).
//
// A statement that cannot be understood gives a Warning naming its line and
// table, and the table is marked Unknown: never a silent wrong key. The
// error is for failures to read.
func Parse(r io.Reader, name string) (*Catalog, []Warning, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	c := NewCatalog()
	cur := ""
	head, _ := br.Peek(4096)
	if m := dumpDatabase.FindSubmatch(head); m != nil {
		cur = string(m[1])
	}
	if dumpMySQL.Match(head) {
		c.SetFlavor(MySQL)
		if dumpMySQL5.Match(head) {
			c.SetCharsetDefault("utf8mb4", "utf8mb4_general_ci")
		}
	}
	var warnings []Warning
	s := newSplitter(br, true)
	for {
		st, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, warnings, fmt.Errorf("schema: read %s: %w", name, err)
		}
		toks := tokenize(st.text)
		if len(toks) >= 2 && toks[0].is("USE") && toks[1].isName() {
			cur = toks[1].val
			continue
		}
		a := newApplier(c, cur)
		a.dump = true
		err = a.apply(st.text)
		if err == nil {
			for _, t := range a.change().Tables {
				if t.Schema == "" && c.tables[t] != nil {
					err = fmt.Errorf("%w: table %s is in no database (no USE before it)", ErrMismatch, QuoteIdent(t.Name))
					break
				}
			}
		}
		if err != nil {
			warnings = append(warnings, Warning{File: name, Line: st.line, Table: firstTable(toks, cur), Err: err})
		}
	}
	return c, warnings, nil
}

// firstTable returns the table a statement names first (after TABLE, ON,
// ...), or the zero TableName.
func firstTable(toks []token, cur string) TableName {
	for i, t := range toks {
		if t.kind == tokWord && tableWords[strings.ToUpper(t.val)] {
			j := i + 1
			for j < len(toks) && (toks[j].is("IF") || toks[j].is("NOT") || toks[j].is("EXISTS")) {
				j++
			}
			if n, _, ok := qualifiedName(toks, j, cur); ok {
				return n
			}
		}
	}
	return TableName{}
}
