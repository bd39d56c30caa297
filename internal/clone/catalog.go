package clone

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/verify"
)

// Table types, as information_schema.TABLES names them.
const (
	baseTable = "BASE TABLE"
	versioned = "SYSTEM VERSIONED"
	sequence  = "SEQUENCE"
	view      = "VIEW"
)

// table is a source table the clone copies.
type table struct {
	src, dst verify.TableName // its name on the source and on the target
	typ      string           // baseTable, versioned or sequence
	info     *verify.Table    // columns and unique keys; nil for a sequence
	estRows  int64            // information_schema's estimate, for the display
	estBytes int64
}

// String names the table as the messages do: by its source name, and its
// target name beside it when the rules give it another.
func (t *table) String() string {
	if t.src == t.dst {
		return t.src.String()
	}
	return t.src.String() + " -> " + t.dst.String()
}

// object is a view, routine, event or trigger the clone creates.
type object struct {
	kind   string // VIEW, PROCEDURE, FUNCTION, EVENT or TRIGGER
	schema string // its database on the source
	name   string
	table  string // a trigger's table
}

func (o object) String() string {
	return strings.ToLower(o.kind) + " " + verify.TableName{Schema: o.schema, Name: o.name}.String()
}

// catalog is what the clone copies from the source, under the rules.
type catalog struct {
	databases []string // on the source
	tables    []*table
	objects   []object // views, routines and events; triggers with their tables
	triggers  map[verify.TableName][]object
}

// systemSchemas are never copied (nor paraply's bookkeeping).
var systemSchemas = []string{"mysql", "information_schema", "performance_schema", "sys"}

// schemaCond is the SQL condition, on column col, of the databases a clone
// may copy.
func schemaCond(col string) string {
	return col + " NOT IN ('" + strings.Join(systemSchemas, "', '") + "') AND " + checkpoint.BookkeepingSQL(col)
}

// loadCatalog reads what the clone copies from src's information_schema,
// under rules: the tables whose target names the rules include, the
// views as tables, the triggers with their tables, and the databases,
// routines and events of the databases the rules could include a table
// of (filter.Rules.WholeDatabase), as replicate applies their DDL.
func loadCatalog(ctx context.Context, src *sql.DB, rules *filter.Rules) (*catalog, error) {
	cat := &catalog{triggers: map[verify.TableName][]object{}}
	infos, err := verify.LoadTables(ctx, src, nil, []string{baseTable, versioned})
	if err != nil {
		return nil, fmt.Errorf("source: reading its tables: %w", err)
	}
	target := func(db, name string) verify.TableName {
		tdb, _ := rules.Database(db)
		return verify.TableName{Schema: tdb, Name: name}
	}
	whole := func(db string) bool {
		tdb, _ := rules.Database(db)
		return rules.WholeDatabase(tdb)
	}
	err = each(ctx, src, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE "+schemaCond("SCHEMA_NAME")+" ORDER BY 1", func(r *sql.Rows) error {
		var db string
		if err := r.Scan(&db); err != nil {
			return err
		}
		if whole(db) {
			cat.databases = append(cat.databases, db)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("source: reading its databases: %w", err)
	}
	err = each(ctx, src, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, COALESCE(TABLE_ROWS, 0), COALESCE(DATA_LENGTH, 0) FROM information_schema.TABLES WHERE "+
		schemaCond("TABLE_SCHEMA")+" ORDER BY 1, 2", func(r *sql.Rows) error {
		t := &table{}
		if err := r.Scan(&t.src.Schema, &t.src.Name, &t.typ, &t.estRows, &t.estBytes); err != nil {
			return err
		}
		t.dst = target(t.src.Schema, t.src.Name)
		if !rules.Table(t.dst.Schema, t.dst.Name) {
			return nil
		}
		switch t.typ {
		case view:
			cat.objects = append(cat.objects, object{kind: "VIEW", schema: t.src.Schema, name: t.src.Name})
		case sequence:
			cat.tables = append(cat.tables, t)
		case baseTable, versioned:
			if t.info = infos[t.src]; t.info == nil {
				return fmt.Errorf("table %s: no columns read (dropped while the clone started?)", t.src)
			}
			cat.tables = append(cat.tables, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("source: reading its tables: %w", err)
	}
	return cat, cat.loadObjects(ctx, src, whole)
}

// loadObjects reads the routines, events and triggers the clone creates.
func (cat *catalog) loadObjects(ctx context.Context, src *sql.DB, whole func(string) bool) error {
	err := each(ctx, src, "SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE "+
		schemaCond("ROUTINE_SCHEMA")+" AND ROUTINE_TYPE IN ('PROCEDURE', 'FUNCTION') ORDER BY 1, 2", func(r *sql.Rows) error {
		var o object
		if err := r.Scan(&o.schema, &o.name, &o.kind); err != nil {
			return err
		}
		if whole(o.schema) {
			cat.objects = append(cat.objects, o)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("source: reading its routines: %w", err)
	}
	err = each(ctx, src, "SELECT EVENT_SCHEMA, EVENT_NAME FROM information_schema.EVENTS WHERE "+schemaCond("EVENT_SCHEMA")+" ORDER BY 1, 2", func(r *sql.Rows) error {
		o := object{kind: "EVENT"}
		if err := r.Scan(&o.schema, &o.name); err != nil {
			return err
		}
		if whole(o.schema) {
			cat.objects = append(cat.objects, o)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("source: reading its events: %w", err)
	}
	copied := map[verify.TableName]bool{}
	for _, t := range cat.tables {
		copied[t.src] = true
	}
	err = each(ctx, src, "SELECT TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS WHERE "+
		schemaCond("TRIGGER_SCHEMA")+" ORDER BY 1, 3, ACTION_TIMING, EVENT_MANIPULATION, ACTION_ORDER", func(r *sql.Rows) error {
		o := object{kind: "TRIGGER"}
		if err := r.Scan(&o.schema, &o.name, &o.table); err != nil {
			return err
		}
		n := verify.TableName{Schema: o.schema, Name: o.table}
		if copied[n] {
			cat.triggers[n] = append(cat.triggers[n], o)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("source: reading its triggers: %w", err)
	}
	sort.SliceStable(cat.objects, func(i, j int) bool { return objectOrder(cat.objects[i].kind) < objectOrder(cat.objects[j].kind) })
	return nil
}

// objectOrder is the order objects are created in: routines first, which
// views may call, then views, then events.
func objectOrder(kind string) int {
	switch kind {
	case "PROCEDURE", "FUNCTION":
		return 0
	case "VIEW":
		return 1
	}
	return 2
}

// each runs q on db and calls scan for each row.
func each(ctx context.Context, db *sql.DB, q string, scan func(*sql.Rows) error) error {
	return schema.EachRow(ctx, db, q, nil, scan)
}
