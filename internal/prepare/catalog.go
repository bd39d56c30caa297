package prepare

import (
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// followDDL applies the transaction's DDL to the catalog and says which
// objects it changes.
func (p *Preparer) followDDL(txn *binlog.Txn) (*stage.DDL, error) {
	ddl := &stage.DDL{Statements: txn.Statements}
	known := true
	for _, st := range txn.Statements {
		if st.Kind != binlog.StmtDDL {
			continue
		}
		var session schema.Session // the target's defaults
		if p.SourceSession {
			session = schema.Session{CollationServer: int(st.Session.Server), DefaultUTF8MB4: int(st.Session.DefaultUTF8MB4)}
		}
		ch, err := p.Catalog.ApplyDDLIn(session, st.Schema, st.Text())
		if err != nil {
			known = false // tables are marked unknown; fingerprint everything
			p.Logger.Warn("DDL not followed in the schema catalog: the tables it may touch are barriers, and the SQL path uses the binlog's column metadata for them, until paraply restarts and reads them from the target",
				"gtid", txn.GTID.String(), "tables", ch.Tables, "err", err)
		}
		for _, s := range ch.Schemas {
			ddl.Objects = append(ddl.Objects, checkpoint.Object{Schema: s})
		}
		for _, t := range ch.Tables {
			ddl.Objects = append(ddl.Objects, checkpoint.Object{Schema: t.Schema, Table: t.Name})
		}
	}
	if !known {
		ddl.Objects = nil
	}
	p.extractor.Invalidate()
	clear(p.tables)
	return ddl, nil
}

type tableKey struct {
	def     *schema.Table
	name    schema.TableName
	columns uint64
}

// resolveTables resolves the SQL-generation view of each table the
// transaction's rows (or a large one's table maps) write.
func (p *Preparer) resolveTables(it *stage.Txn) error {
	txn := it.Txn
	maps := txn.LargeTables
	var names []schema.TableName
	if txn.Large {
		names = make([]schema.TableName, len(maps))
		for i, tm := range maps {
			names[i] = schema.TableName{Schema: string(tm.Schema), Name: string(tm.Table)}
		}
	} else {
		maps, names = make([]*replication.TableMapEvent, len(txn.Rows)), make([]schema.TableName, len(txn.Rows))
		for i, r := range txn.Rows {
			maps[i], names[i] = r.Table, schema.TableName{Schema: r.Schema(), Name: r.Name()}
		}
	}
	tables := make([]*sqlgen.Table, len(maps))
	for i, tm := range maps {
		t, err := p.table(tm, names[i])
		switch {
		case err == nil:
			tables[i] = t
		case p.SQLOnly:
			return &stage.ConflictError{GTID: it.GTID, Table: names[i].String(), What: "cannot apply rows", Err: err}
		}
		// On the binlog path the target's row applier decides, as a
		// native replica's does (it takes extra columns at the end, for
		// one); the table, when known, only names the row of a conflict.
	}
	if it.Large != nil {
		it.Large.Tables = tables
	} else {
		it.Tables = tables
	}
	return nil
}

// table resolves the SQL-generation view of the table a table map names
// (name, as strings).
func (p *Preparer) table(tm *replication.TableMapEvent, name schema.TableName) (*sqlgen.Table, error) {
	def := p.Catalog.Table(name.Schema, name.Name)
	k := tableKey{def: def, name: name, columns: tm.ColumnCount}
	if t, ok := p.tables[k]; ok {
		return t, nil
	}
	p.noteWritten(name)
	t, err := sqlgen.NewTableIn(p.Catalog, def, tm)
	if err != nil {
		return nil, err
	}
	p.tables[k] = t
	return t, nil
}

// precision is the decoder's binlog.PrecisionFunc: the precision of the
// catalog's columns, the target's, which MariaDB's replica also takes for
// old-format temporal columns, for the table the filters write to (skip
// for one they leave out, which the target may not have).
func (p *Preparer) precision(db, table string) ([]int, bool) {
	name, kept := p.targetName(db, table)
	if !kept {
		return nil, true
	}
	return p.Catalog.TemporalPrecision(name.Schema, name.Name)
}

// targetName is the name a source table has on the target under the
// filters (--rewrite-db), and false if they leave its rows out. The
// filter decides on decoded transactions, which this one is not yet: it
// is asked about a row of the table.
func (p *Preparer) targetName(db, table string) (schema.TableName, bool) {
	name := schema.TableName{Schema: db, Name: table}
	if p.Filter == nil {
		return name, true
	}
	tm := &replication.TableMapEvent{Schema: []byte(db), Table: []byte(table)}
	probe := &binlog.Txn{Rows: []*binlog.Rows{{Op: binlog.Insert, Table: tm}}}
	if _, err := p.Filter.Txn(probe); err != nil {
		return name, true // statements only fail it; there are none
	}
	if len(probe.Rows) == 0 {
		return name, false
	}
	return schema.TableName{Schema: probe.Rows[0].Schema(), Name: probe.Rows[0].Name()}, true
}
