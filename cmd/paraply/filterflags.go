package main

import (
	"github.com/spf13/pflag"

	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/replicate"
)

// filterFlags are --include, --exclude and --rewrite-db, which replicate
// and apply share.
type filterFlags struct {
	include, exclude, rewrite []string
}

func (ff *filterFlags) add(f *pflag.FlagSet) {
	f.StringArrayVar(&ff.include, "include", nil, "apply only the tables matching this db.table pattern (repeatable; % or * any characters, _ one, \\ escapes; "+
		"as replicate_wild_do_table, but names match case-sensitively, as MariaDB's with lower_case_table_names=0); DDL is applied when a table it changes is")
	f.StringArrayVar(&ff.exclude, "exclude", nil, "leave out the tables matching this db.table pattern, included or not (repeatable; as replicate_wild_ignore_table, e.g. '%.tmp_%')")
	f.StringArrayVar(&ff.rewrite, "rewrite-db", nil, "apply what the source does in database SRC to database DST on the target: SRC=DST (repeatable; as replicate_rewrite_db, applied before --include/--exclude, whose patterns name DST; qualified names in DDL are rewritten too)")
}

// resolve parses the flags into cfg.Filter.
func (ff *filterFlags) resolve(cfg *replicate.Config) error {
	rules, err := filter.NewRules(ff.include, ff.exclude, ff.rewrite)
	if err != nil {
		return err
	}
	cfg.Filter = rules
	return nil
}
