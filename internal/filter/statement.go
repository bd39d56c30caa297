package filter

import (
	"errors"
	"fmt"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// StatementError is returned for a statement the rules cannot be applied
// to without guessing: its subjects, or the database names it holds,
// cannot be known. The caller stops with it, naming the transaction: the
// operator applies the statement by hand (renamed, if need be) and
// records its GTID as applied, or not.
type StatementError struct {
	Query string
	What  string
	Err   error
}

// Error says what could not be known, of which statement (passwords
// redacted, abbreviated).
func (e *StatementError) Error() string {
	return fmt.Sprintf("%s: %s: %v", e.What, abbreviate(e.Query), e.Err)
}

// Unwrap returns the parser's or the renamer's error.
func (e *StatementError) Unwrap() error { return e.Err }

// statements returns t's statements that the rules keep, renamed, and
// counts the others in o. DDL is kept when one of its subjects is;
// statement-format DML is left out when all of its subjects are, kept
// when all are, and refused when only some are (one statement cannot be
// applied in part); savepoints and the like stay.
func (f *Filter) statements(t *binlog.Txn, o *Outcome) ([]binlog.Statement, error) {
	out := make([]binlog.Statement, 0, len(t.Statements))
	for _, st := range t.Statements {
		switch st.Kind {
		case binlog.StmtDDL:
			keep, mixed, err := f.subjects(st, true)
			if err != nil {
				return nil, &StatementError{Query: st.Query, What: "cannot tell which tables this DDL changes, and --include/--exclude are set", Err: err}
			}
			if !keep {
				o.Statements++
				continue
			}
			renamed, err := f.rename(st, mixed)
			if err != nil {
				return nil, err
			}
			if mixed {
				o.Mixed = append(o.Mixed, renamed.Query)
			}
			o.Renamed = o.Renamed || renamed.Query != st.Query || renamed.Schema != st.Schema
			out = append(out, renamed)
		case binlog.StmtDML:
			keep, mixed, err := f.subjects(st, false)
			if err != nil {
				return nil, &StatementError{Query: st.Query, What: "statement-format DML whose tables cannot be told, and --include/--exclude are set", Err: err}
			}
			if !keep {
				o.Statements++
				o.DroppedDML = true
				continue
			}
			if mixed {
				// One statement cannot be applied in part.
				return nil, &StatementError{Query: st.Query, What: "statement-format DML that writes tables --include/--exclude keep and tables they leave out"}
			}
			renamed, err := f.rename(st, false)
			if err != nil {
				return nil, err
			}
			if ld := st.Load; ld != nil && renamed.Query[:ld.FnEnd] != st.Query[:ld.FnEnd] {
				return nil, &StatementError{Query: st.Query, What: "cannot rename the databases of this LOAD DATA (--rewrite-db)"}
			}
			o.Renamed = o.Renamed || renamed.Query != st.Query || renamed.Schema != st.Schema
			out = append(out, renamed)
		default:
			out = append(out, st)
		}
	}
	return out, nil
}

// subjects decides whether st is applied: when one of the tables it
// changes is, or (ddl) one of the databases it changes, or when it
// changes neither (GRANT, CREATE USER). mixed is set when some of its
// subjects are left out.
func (f *Filter) subjects(st binlog.Statement, ddl bool) (keep, mixed bool, err error) {
	if !f.rules.Filters() {
		return true, false, nil
	}
	s, err := schema.StatementSubjects(st.Schema, st.Text())
	if err != nil {
		return false, false, err
	}
	if s.Empty() {
		if ddl {
			return true, false, nil
		}
		return false, false, errors.New("it names no table")
	}
	in, out := 0, 0
	for _, n := range s.Tables {
		db, _ := f.rules.Database(n.Schema)
		if f.rules.Table(db, n.Name) {
			in++
		} else {
			out++
		}
	}
	for _, d := range s.Databases {
		db, _ := f.rules.Database(d)
		if f.rules.WholeDatabase(db) {
			in++
		} else {
			out++
		}
	}
	return in > 0, in > 0 && out > 0, nil
}

// rename returns st as the target runs it: with its default database
// renamed, the databases it names renamed, and, when it also names
// tables left out, a DROP TABLE with IF EXISTS.
func (f *Filter) rename(st binlog.Statement, mixed bool) (binlog.Statement, error) {
	st.Schema, _ = f.rules.Database(st.Schema)
	if len(f.rules.Rewrites) > 0 {
		q, err := schema.RenameDatabases(st.Query, f.rules.Database)
		if err != nil {
			return st, &StatementError{Query: st.Query, What: "cannot rename the databases this statement names (--rewrite-db)", Err: err}
		}
		st.Query = q
	}
	if mixed {
		st.Query, _ = schema.DropTableIfExists(st.Query)
	}
	return st, nil
}

func abbreviate(q string) string {
	q = binlog.RedactSecrets(q)
	if len(q) > 200 {
		return q[:200] + "…"
	}
	return q
}
