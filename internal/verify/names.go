package verify

import (
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/filter"
)

// mapping says which source tables are compared and with which target
// table, under the rules replication ran with (Options.Filter): the source
// database is renamed as --rewrite-db renames it, and a table is compared
// when --include and --exclude let its target name through, as the applier
// decides what to apply. Without rules every table keeps its name.
type mapping struct {
	rules *filter.Rules // nil: no filters
}

// newMapping returns the mapping of rules, which may be nil; rules that
// change nothing are taken as none, so that the report does not name them.
func newMapping(rules *filter.Rules) mapping {
	if rules == nil || rules.Empty() {
		return mapping{}
	}
	return mapping{rules: rules}
}

// target returns the name source table n has on the target.
func (m mapping) target(n TableName) TableName {
	if m.rules == nil {
		return n
	}
	n.Schema, _ = m.rules.Database(n.Schema)
	return n
}

// included reports whether source table n is replicated, and so compared.
func (m mapping) included(n TableName) bool {
	if m.rules == nil {
		return true
	}
	t := m.target(n)
	return m.rules.Table(t.Schema, t.Name)
}

// source returns the source name of target table n, and whether the rules
// replicate some source table into n. The tables of a target database come
// from the source databases rewritten to it and from the source database
// of its own name, unless that one is rewritten elsewhere. When several
// could (--rewrite-db a=c,b=c), n is named after the first rewrite: a
// DBA who rewrites app to app_copy looks for app_copy's tables under app.
func (m mapping) source(n TableName) (TableName, bool) {
	if m.rules == nil {
		return n, true
	}
	if !m.rules.Table(n.Schema, n.Name) {
		return TableName{}, false
	}
	for _, rw := range m.rules.Rewrites {
		if rw.To == n.Schema {
			return TableName{Schema: rw.From, Name: n.Name}, true
		}
	}
	if _, renamed := m.rules.Database(n.Schema); !renamed {
		return n, true
	}
	return TableName{}, false
}

// targetSchemas returns the target names of source schemas: the target's
// catalog must be read from the renamed ones.
func (m mapping) targetSchemas(schemas []string) []string {
	if m.rules == nil {
		return schemas
	}
	var out []string
	for _, s := range schemas {
		if t, _ := m.rules.Database(s); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// flags writes the rules as the options that give them, for the report:
// --include app.% --rewrite-db app=app_copy, each value quoted for a
// POSIX shell if it must be, so that the line can be pasted back. It is
// "" without rules.
func (m mapping) flags() string {
	if m.rules == nil {
		return ""
	}
	var parts []string
	for _, p := range m.rules.Include {
		parts = append(parts, "--include "+shellQuote(p.String()))
	}
	for _, p := range m.rules.Exclude {
		parts = append(parts, "--exclude "+shellQuote(p.String()))
	}
	for _, rw := range m.rules.Rewrites {
		parts = append(parts, "--rewrite-db "+shellQuote(rewriteFlag(rw)))
	}
	return strings.Join(parts, " ")
}

// rewriteFlag writes rw as --rewrite-db takes it. filter.ParseRewrite cuts
// at the first "->", else at the first "=": FROM->TO when a name holds a
// "->" (only TO can: a FROM with one does not parse) or FROM holds a "=".
func rewriteFlag(rw filter.Rewrite) string {
	if strings.Contains(rw.From, "=") || strings.Contains(rw.To, "->") {
		return rw.From + "->" + rw.To
	}
	return rw.From + "=" + rw.To
}

// shellQuote returns s as is if a POSIX shell takes it literally, else in
// single quotes.
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.%,/=:@+-", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pair is a source table and the target table it is compared with.
type pair struct {
	src, tgt TableName
}

// pairs returns the tables to report on, sorted by source name: the
// requested ones, or every table of either catalog that m includes. A
// target table no source table is paired with is paired with the source
// name m gives it, and reported missing on the source.
func pairs(requested []TableName, m mapping, src, tgt catalog) []pair {
	var out []pair
	if len(requested) > 0 {
		for _, n := range requested {
			if !slices.ContainsFunc(out, func(p pair) bool { return p.src == n }) {
				out = append(out, pair{n, m.target(n)})
			}
		}
	} else {
		paired := map[TableName]bool{}
		for n := range src {
			if m.included(n) {
				t := m.target(n)
				out = append(out, pair{n, t})
				paired[t] = true
			}
		}
		for n := range tgt {
			if s, ok := m.source(n); ok && !paired[n] {
				out = append(out, pair{s, n})
			}
		}
	}
	slices.SortFunc(out, func(a, b pair) int { return a.src.compare(b.src) })
	return out
}

// merged returns, for each target table that several of ps compare with
// (--rewrite-db a=c with a table of the same name in c on the source), the
// source tables that go to it.
func merged(ps []pair) map[TableName][]TableName {
	by := map[TableName][]TableName{}
	for _, p := range ps {
		by[p.tgt] = append(by[p.tgt], p.src)
	}
	for t, srcs := range by {
		if len(srcs) < 2 {
			delete(by, t)
		}
	}
	return by
}
