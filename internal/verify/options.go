package verify

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/filter"
)

// Defaults for the zero fields of Options.
const (
	DefaultChunkSize = 1000
	DefaultParallel  = 2
	DefaultMaxRows   = 10
)

// excludedSchemas are not compared unless named in Options.Schemas or
// Options.Tables: the server's own; nor are the databases of paraply's
// bookkeeping (checkpoint.IsBookkeeping), which differ between source and
// target by design.
var excludedSchemas = []string{"mysql", "information_schema", "performance_schema", "sys"}

// Options configure Run.
type Options struct {
	// Source and Target are the servers to compare. Run holds at most
	// Parallel connections of each, plus one for reading information_schema.
	// Run does not change their session settings.
	Source, Target *sql.DB

	// SourceName and TargetName label the servers in the report, e.g. their
	// endpoints without password. Default "source" and "target".
	SourceName, TargetName string

	// Tables, if not empty, are the tables to compare. Otherwise Schemas, if
	// not empty, are the schemas whose base tables to compare. Otherwise
	// every schema but the system ones and paraply's is compared. At most
	// one of the two may be set.
	Tables  []TableName
	Schemas []string

	// ChunkSize is the number of source rows per chunk. Default 1000.
	ChunkSize int

	// Parallel is how many tables are compared at a time. Default 2.
	Parallel int

	// MaxRows is how many differing rows are listed per table. Default 10.
	MaxRows int

	// Filter, if not nil, is what replication was told to filter and
	// rename (--include, --exclude, --rewrite-db): each source table is
	// compared with the target table of the name the rules give it (its
	// database renamed by Filter.Database), and only the tables the rules
	// include (Filter.Table, on that target name) are compared; the others
	// are left out on both sides, and not reported missing. Tables and
	// Schemas still name source tables and schemas, and narrow what the
	// rules include; a table in Tables that the rules leave out is an
	// error. Run only reads the rules.
	Filter *filter.Rules

	// Stream is the paraply stream that replicates Source to Target
	// (replicate --name; "" is checkpoint.DefaultStream). On a target that
	// holds other streams' bookkeeping too, the target tables that are
	// theirs are left out instead of reported missing on the source (see
	// streams.go); a Stream other than the default that the target does
	// not hold is an error.
	Stream string
}

// withDefaults returns a copy of o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.SourceName == "" {
		o.SourceName = "source"
	}
	if o.TargetName == "" {
		o.TargetName = "target"
	}
	if o.ChunkSize == 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.Parallel == 0 {
		o.Parallel = DefaultParallel
	}
	if o.MaxRows == 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.Stream == "" {
		o.Stream = checkpoint.DefaultStream
	}
	return o
}

// validate reports the first invalid field of o, which must have its
// defaults applied.
func (o Options) validate() error {
	switch {
	case o.Source == nil || o.Target == nil:
		return errors.New("verify: Source and Target are required")
	case len(o.Tables) > 0 && len(o.Schemas) > 0:
		return errors.New("verify: give Tables or Schemas, not both")
	case o.ChunkSize < 1:
		return fmt.Errorf("verify: ChunkSize %d must be at least 1", o.ChunkSize)
	case o.Parallel < 1:
		return fmt.Errorf("verify: Parallel %d must be at least 1", o.Parallel)
	case o.MaxRows < 0:
		return fmt.Errorf("verify: MaxRows %d must not be negative", o.MaxRows)
	}
	if err := checkpoint.ValidStream(o.Stream); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	m := newMapping(o.Filter)
	for _, t := range o.Tables {
		if t.Schema == "" || t.Name == "" {
			return fmt.Errorf("verify: table %q needs a schema and a name", t.String())
		}
		// Asked for by name, it would otherwise vanish from the report
		// without a word.
		if !m.included(t) {
			return fmt.Errorf("verify: table %s is left out by the filters (%s)", t, m.flags())
		}
	}
	return nil
}

// TableName is a schema-qualified table name.
type TableName struct {
	Schema string `json:"schema"`
	Name   string `json:"table"`
}

// plainIdent matches identifiers that need no quoting in messages.
var plainIdent = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// String is schema.table, each part quoted with backticks only if it must
// be, e.g. shop.orders or shop.`we“ird tåble`.
func (n TableName) String() string {
	return displayIdent(n.Schema) + "." + displayIdent(n.Name)
}

// quoted is `schema`.`table`, for SQL.
func (n TableName) quoted() string {
	return quoteIdent(n.Schema) + "." + quoteIdent(n.Name)
}

func (n TableName) compare(o TableName) int {
	return cmp.Or(strings.Compare(n.Schema, o.Schema), strings.Compare(n.Name, o.Name))
}

// quoteIdent quotes a MariaDB identifier with backticks.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// displayIdent quotes s only if it is not a plain identifier.
func displayIdent(s string) string {
	if plainIdent.MatchString(s) {
		return s
	}
	return quoteIdent(s)
}

// ParseTableNames parses a comma-separated list of schema.table names. A
// part may be quoted with backticks (a backtick inside is doubled), so that
// it can hold dots, commas and spaces: shop.orders,`my db`.`we“ird tåble`.
// Spaces around unquoted parts are dropped.
func ParseTableNames(s string) ([]TableName, error) {
	p := nameParser{s: s}
	var names []TableName
	for {
		schema, err := p.part()
		if err != nil {
			return nil, err
		}
		if !p.consume('.') {
			return nil, fmt.Errorf("table list %q: want schema.table at byte %d", s, p.i)
		}
		name, err := p.part()
		if err != nil {
			return nil, err
		}
		names = append(names, TableName{Schema: schema, Name: name})
		if p.i == len(s) {
			return names, nil
		}
		if !p.consume(',') {
			return nil, fmt.Errorf("table list %q: want ',' at byte %d", s, p.i)
		}
	}
}

// nameParser scans a table list for ParseTableNames.
type nameParser struct {
	s string
	i int
}

// part reads one name part, quoted or not, and the spaces after it.
func (p *nameParser) part() (string, error) {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	var b strings.Builder
	if p.i < len(p.s) && p.s[p.i] == '`' {
		for p.i++; ; p.i++ {
			if p.i >= len(p.s) {
				return "", fmt.Errorf("table list %q: unterminated backtick", p.s)
			}
			if p.s[p.i] == '`' {
				if p.i+1 < len(p.s) && p.s[p.i+1] == '`' {
					p.i++
				} else {
					p.i++
					break
				}
			}
			b.WriteByte(p.s[p.i])
		}
	} else {
		for p.i < len(p.s) && p.s[p.i] != '.' && p.s[p.i] != ',' && p.s[p.i] != '`' {
			b.WriteByte(p.s[p.i])
			p.i++
		}
	}
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	part := strings.TrimRight(b.String(), " ")
	if part == "" {
		return "", fmt.Errorf("table list %q: empty name at byte %d", p.s, p.i)
	}
	return part, nil
}

// consume skips c if it comes next.
func (p *nameParser) consume(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}
