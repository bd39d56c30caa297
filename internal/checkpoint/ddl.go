package checkpoint

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Object names a schema ("db") or a table ("db", "t") a DDL may change.
type Object struct {
	Schema, Table string
}

// String is the object's quoted name, as DDL writes it.
func (o Object) String() string {
	if o.Table == "" {
		return quote(o.Schema)
	}
	return quote(o.Schema) + "." + quote(o.Table)
}

func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// encodeObjects and decodeObjects keep objects in paraply.ddl, one per
// line as schema NUL table (names cannot contain NUL).
func encodeObjects(objs []Object) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = o.Schema + "\x00" + o.Table
	}
	return strings.Join(parts, "\n")
}

func decodeObjects(lines []string) []Object {
	var out []Object
	for _, l := range lines {
		s, t, _ := strings.Cut(l, "\x00")
		out = append(out, Object{s, t})
	}
	return out
}

// Fingerprint hashes the current definitions of objs on the target
// (SHOW CREATE of each, or its absence). With no objects it covers every
// schema and table outside the system schemas: the fallback for DDL whose
// reach is unknown.
func (s *Store) Fingerprint(ctx context.Context, objs []Object) (string, error) {
	if len(objs) == 0 {
		all, err := s.allObjects(ctx)
		if err != nil {
			return "", err
		}
		objs = all
	}
	sorted := append([]Object(nil), objs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	h := md5.New()
	for _, o := range sorted {
		def, err := s.showCreate(ctx, o)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%s\x00", o, def)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// unopenable are the errors of a table whose definition the server has
// but whose engine cannot open it: 1030 "Got error N from storage
// engine", 1033 incorrect information in file, 1034/1035 key file, 1194/
// 1195 crashed, 1286 unknown storage engine, 1812 tablespace missing,
// 1932 table doesn't exist in engine.
var unopenable = map[uint16]bool{1030: true, 1033: true, 1034: true, 1035: true, 1194: true, 1195: true, 1286: true, 1812: true, 1932: true}

// showCreate returns the object's definition, "absent", or "unopenable
// N" for a table whose engine cannot open it.
func (s *Store) showCreate(ctx context.Context, o Object) (string, error) {
	var q string
	if o.Table == "" {
		q = "SHOW CREATE DATABASE " + quote(o.Schema)
	} else {
		q = "SHOW CREATE TABLE " + o.String()
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		var me *mysql.MySQLError
		switch {
		// 1049 unknown database, 1146 no such table.
		case errors.As(err, &me) && (me.Number == 1049 || me.Number == 1146):
			return "absent", nil
		case errors.As(err, &me) && unopenable[me.Number]:
			// A table the engine cannot open (a DROP of it is what
			// the DDL may well be): that is its state, as long as it
			// lasts, and the DDL changes it.
			return fmt.Sprintf("unopenable %d", me.Number), nil
		}
		return "", fmt.Errorf("fingerprinting %s: %w", o, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var b strings.Builder
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		for _, v := range vals {
			b.Write(v)
			b.WriteByte(0)
		}
	}
	return b.String(), rows.Err()
}

func (s *Store) allObjects(ctx context.Context) ([]Object, error) {
	rows, err := s.db.QueryContext(ctx,
		"SELECT s.SCHEMA_NAME, COALESCE(t.TABLE_NAME, '') FROM information_schema.SCHEMATA s "+
			"LEFT JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = s.SCHEMA_NAME AND t.TABLE_TYPE = 'BASE TABLE' "+
			"WHERE s.SCHEMA_NAME NOT IN ('mysql','information_schema','performance_schema','sys') AND "+BookkeepingSQL("s.SCHEMA_NAME"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Object
	seen := map[string]bool{}
	for rows.Next() {
		var o Object
		if err := rows.Scan(&o.Schema, &o.Table); err != nil {
			return nil, err
		}
		if !seen[o.Schema] {
			seen[o.Schema] = true
			out = append(out, Object{Schema: o.Schema})
		}
		if o.Table != "" {
			out = append(out, o)
		}
	}
	return out, rows.Err()
}

// BeginDDL records, before the DDL runs, what it is and how its objects
// look now.
func (s *Store) BeginDDL(ctx context.Context, gtid, schema, query string, objs []Object) error {
	fp, err := s.Fingerprint(ctx, objs)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx,
		s.sql("REPLACE INTO `paraply`.`ddl` (`gtid`, `schema_name`, `query`, `fingerprint`, `objects`) VALUES (?, ?, ?, ?, ?)"),
		gtid, schema, query, fp, encodeObjects(objs))
	if err != nil {
		return fmt.Errorf("recording DDL %s before running it: %w", gtid, err)
	}
	return nil
}

// EndDDL records that the DDL took effect: its GTID becomes applied and
// the bracket row goes, in one transaction; so do the markers of the
// transaction's earlier statements, if given (see ForgetSQL).
func (s *Store) EndDDL(ctx context.Context, gtid string, forget ...string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.sql("INSERT IGNORE INTO `paraply`.`applied` (`gtid`) VALUES (?)"), gtid); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.sql("DELETE FROM `paraply`.`ddl` WHERE `gtid` = ?"), gtid); err != nil {
		return err
	}
	for _, m := range forget {
		if m == gtid {
			continue
		}
		q, args := s.ForgetSQL(m)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// ForgetSQL is the statement that drops the applied row of marker, the
// GTID of one statement of a transaction (GTID/ddlN) recorded so that a
// crash before the rest of the transaction does not run it again: the
// transaction's own GTID takes its place in the same target transaction.
func (s *Store) ForgetSQL(marker string) (string, []any) {
	return s.sql("DELETE FROM `paraply`.`applied` WHERE `gtid` = ?"), []any{marker}
}

// Outcome says what became of a DDL that was running at a crash.
type Outcome int

// Outcomes of a pending DDL.
const (
	// DDLApplied: its objects changed, so it took effect; it is now
	// recorded as applied.
	DDLApplied Outcome = iota + 1
	// DDLNotApplied: its objects are as before; it will run again when the
	// stream reaches it (errors saying the change already exists are then
	// tolerated, since some DDL leaves no fingerprint, e.g. CREATE USER).
	DDLNotApplied
)

// PendingFor returns gtid's bracket row if a previous attempt left one
// (the target or paraply failed while the DDL ran), nil otherwise.
func (s *Store) PendingFor(ctx context.Context, gtid string) (*PendingDDL, error) {
	return s.pendingDDL(ctx, gtid)
}

// ResolveDDL settles a pending DDL found by Load.
func (s *Store) ResolveDDL(ctx context.Context, p *PendingDDL) (Outcome, error) {
	fp, err := s.Fingerprint(ctx, decodeObjects(p.Objects))
	if err != nil {
		return 0, err
	}
	if fp != p.Fingerprint {
		return DDLApplied, s.EndDDL(ctx, p.GTID)
	}
	_, err = s.db.ExecContext(ctx, s.sql("DELETE FROM `paraply`.`ddl` WHERE `gtid` = ?"), p.GTID)
	return DDLNotApplied, err
}

// AbandonDDL removes gtid's bracket row after the DDL failed with an error
// from the target (not a crash): whatever part of it ran, it runs again at
// the next start, as a native replica runs a failed event again at START
// SLAVE, and stops there again unless the target was fixed. Left in place,
// the row would let the next start take a DDL that failed part way (one of
// several tables dropped) for one that took effect, and step over it.
func (s *Store) AbandonDDL(ctx context.Context, gtid string) error {
	_, err := s.db.ExecContext(ctx, s.sql("DELETE FROM `paraply`.`ddl` WHERE `gtid` = ?"), gtid)
	return err
}
