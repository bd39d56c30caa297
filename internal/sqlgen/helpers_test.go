package sqlgen

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// col describes a test column both ways: as the schema has it and as the
// table map logs it.
type col struct {
	name, typ string // name, schema type
	tp        byte   // binary log type
	meta      uint16
	unsigned  bool
	cs, co    string
	nullable  bool
	generated bool
}

// Shorthands for common columns.
func intCol(name string) col {
	return col{name: name, typ: "int", tp: mysql.MYSQL_TYPE_LONG}
}

func varcharCol(name string) col {
	return col{name: name, typ: "varchar", tp: mysql.MYSQL_TYPE_VARCHAR, meta: 400, cs: "utf8mb4", co: "utf8mb4_general_ci", nullable: true}
}

func latin1Col(name string) col {
	return col{name: name, typ: "varchar", tp: mysql.MYSQL_TYPE_VARCHAR, meta: 100, cs: "latin1", co: "latin1_swedish_ci", nullable: true}
}

// fixture builds the schema definition and a table map (with names and
// the primary key, as binlog_row_metadata=FULL logs them) of a table.
func fixture(db, name string, cols []col, indexes ...schema.Index) (*schema.Table, *replication.TableMapEvent) {
	def := &schema.Table{Schema: db, Name: name, Indexes: indexes}
	tm := &replication.TableMapEvent{Schema: []byte(db), Table: []byte(name), ColumnCount: uint64(len(cols))}
	for _, c := range cols {
		def.Columns = append(def.Columns, schema.Column{Name: c.name, Type: c.typ, Unsigned: c.unsigned,
			Charset: c.cs, Collation: c.co, Nullable: c.nullable, Generated: c.generated})
		tm.ColumnType = append(tm.ColumnType, c.tp)
		tm.ColumnMeta = append(tm.ColumnMeta, c.meta)
		tm.ColumnName = append(tm.ColumnName, []byte(c.name))
	}
	for _, ix := range indexes {
		if ix.Primary {
			for _, c := range ix.Columns {
				tm.PrimaryKey = append(tm.PrimaryKey, uint64(c))
			}
		}
	}
	return def, tm
}

func primary(cols ...int) schema.Index {
	return schema.Index{Name: "PRIMARY", Primary: true, Columns: cols, Prefix: make([]int, len(cols))}
}

func unique(name string, cols ...int) schema.Index {
	return schema.Index{Name: name, Columns: cols, Prefix: make([]int, len(cols))}
}

// newTable builds a Table from a fixture and fails the test on error.
func newTable(t testing.TB, db, name string, cols []col, indexes ...schema.Index) *Table {
	t.Helper()
	def, tm := fixture(db, name, cols, indexes...)
	tab, err := NewTable(def, tm)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func rows(tab *Table, op binlog.Op, images ...[]any) *binlog.Rows {
	return &binlog.Rows{Op: op, Table: tableMap(tab), Images: images}
}

// tableMap returns a table map matching tab (for Add's check).
func tableMap(tab *Table) *replication.TableMapEvent {
	return &replication.TableMapEvent{Schema: []byte(tab.Name.Schema), Table: []byte(tab.Name.Name),
		ColumnCount: uint64(len(tab.types)), ColumnType: tab.types, ColumnMeta: tab.meta}
}

// bitmap returns a column bitmap with the given columns set.
func bitmap(n int, cols ...int) []byte {
	bm := make([]byte, (n+7)/8)
	for _, c := range cols {
		bm[c>>3] |= 1 << (c & 7)
	}
	return bm
}
