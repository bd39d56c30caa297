package filter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Rules are the filter and rewrite options: --include, --exclude and
// --rewrite-db. The zero value lets everything through unchanged.
type Rules struct {
	// Include, if not empty, limits what is applied to the tables that
	// match one of these patterns.
	Include []Pattern
	// Exclude leaves out the tables that match one of these, included or
	// not.
	Exclude []Pattern
	// Rewrites rename databases, before the patterns are tested.
	Rewrites []Rewrite
}

// Rewrite renames database From on the source to To on the target.
type Rewrite struct{ From, To string }

// maxNameChars is the longest database name MariaDB takes.
const maxNameChars = 64

// NewRules parses the options' values.
func NewRules(include, exclude, rewrites []string) (Rules, error) {
	var r Rules
	for _, s := range include {
		p, err := ParsePattern(s)
		if err != nil {
			return Rules{}, fmt.Errorf("--include: %w", err)
		}
		r.Include = append(r.Include, p)
	}
	for _, s := range exclude {
		p, err := ParsePattern(s)
		if err != nil {
			return Rules{}, fmt.Errorf("--exclude: %w", err)
		}
		r.Exclude = append(r.Exclude, p)
	}
	for _, s := range rewrites {
		rw, err := ParseRewrite(s)
		if err != nil {
			return Rules{}, fmt.Errorf("--rewrite-db: %w", err)
		}
		for _, x := range r.Rewrites {
			if x.From == rw.From {
				return Rules{}, fmt.Errorf("--rewrite-db: database %q is rewritten twice", rw.From)
			}
		}
		r.Rewrites = append(r.Rewrites, rw)
	}
	return r, nil
}

// ParseRewrite parses SRC=DST (or MariaDB's SRC->DST).
func ParseRewrite(s string) (Rewrite, error) {
	from, to, ok := strings.Cut(s, "->")
	if !ok {
		from, to, ok = strings.Cut(s, "=")
	}
	if !ok {
		return Rewrite{}, fmt.Errorf("%q: write SRC=DST", s)
	}
	for _, n := range []string{from, to} {
		switch {
		case n == "":
			return Rewrite{}, fmt.Errorf("%q: a database name is empty", s)
		case !utf8.ValidString(n):
			return Rewrite{}, fmt.Errorf("%q: not UTF-8", s)
		case utf8.RuneCountInString(n) > maxNameChars:
			return Rewrite{}, fmt.Errorf("%q: a database name has more than %d characters", s, maxNameChars)
		case strings.HasSuffix(n, " "):
			return Rewrite{}, fmt.Errorf("%q: a database name ends in a space", s)
		}
	}
	if from == to {
		return Rewrite{}, fmt.Errorf("%q rewrites a database to itself", s)
	}
	return Rewrite{From: from, To: to}, nil
}

// Empty reports whether the rules change nothing.
func (r *Rules) Empty() bool { return !r.Filters() && len(r.Rewrites) == 0 }

// Filters reports whether tables are filtered (--include or --exclude).
func (r *Rules) Filters() bool { return len(r.Include) > 0 || len(r.Exclude) > 0 }

// Database returns the name database db has on the target, and whether
// it is rewritten. Rewrites apply once: a rewritten name is not
// rewritten again.
func (r *Rules) Database(db string) (string, bool) {
	for _, rw := range r.Rewrites {
		if rw.From == db {
			return rw.To, true
		}
	}
	return db, false
}

// Table reports whether changes to table name of database db (target
// names: rewritten first) are applied: db.name matches an --include
// pattern, or there is none, and no --exclude pattern.
func (r *Rules) Table(db, name string) bool {
	if len(r.Include) > 0 && !anyMatch(r.Include, func(p Pattern) bool { return p.Table(db, name) }) {
		return false
	}
	return !anyMatch(r.Exclude, func(p Pattern) bool { return p.Table(db, name) })
}

// WholeDatabase reports whether a statement on database db itself
// (CREATE, ALTER, DROP DATABASE) and on the stored programs in it is
// applied: a table of db could be included (the database part of an
// --include pattern matches db, or there is none), and no --exclude
// pattern excludes all of db (db.%).
func (r *Rules) WholeDatabase(db string) bool {
	if len(r.Include) > 0 && !anyMatch(r.Include, func(p Pattern) bool { return p.Database(db) }) {
		return false
	}
	return !anyMatch(r.Exclude, func(p Pattern) bool { return p.WholeDatabase(db) })
}

func anyMatch(ps []Pattern, f func(Pattern) bool) bool {
	for _, p := range ps {
		if f(p) {
			return true
		}
	}
	return false
}

// String says the rules in words, for the log.
func (r *Rules) String() string {
	if r.Empty() {
		return "none"
	}
	var parts []string
	list := func(what string, ps []Pattern) {
		if len(ps) == 0 {
			return
		}
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = p.String()
		}
		parts = append(parts, what+" "+strings.Join(s, ", "))
	}
	list("include", r.Include)
	list("exclude", r.Exclude)
	for _, rw := range r.Rewrites {
		parts = append(parts, "rewrite "+rw.From+" to "+rw.To)
	}
	return strings.Join(parts, "; ")
}
