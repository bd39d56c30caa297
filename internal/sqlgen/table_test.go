package sqlgen

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

func TestNewTableKey(t *testing.T) {
	cases := []struct {
		name         string
		cols         []col
		ix           []schema.Index
		key, primary []int
	}{
		{"primary key", tCols, []schema.Index{primary(0), unique("u", 3)}, []int{0}, []int{0}},
		{"composite primary key", cCols, []schema.Index{primary(0, 1)}, []int{0, 1}, []int{0, 1}},
		{"unique NOT NULL key after a nullable one", uCols, []schema.Index{unique("x", 0), unique("u", 1)}, []int{1}, nil},
		{"only nullable unique keys: keyless", uCols, []schema.Index{unique("x", 0), unique("xv", 0, 2)}, nil, nil},
		{"no key", kCols, nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab := newTable(t, "db", "t", c.cols, c.ix...)
			if !reflect.DeepEqual(tab.Key, c.key) || !reflect.DeepEqual(tab.Primary, c.primary) {
				t.Errorf("Key %v Primary %v, want %v %v", tab.Key, tab.Primary, c.key, c.primary)
			}
		})
	}
}

func TestNewTableMismatch(t *testing.T) {
	def, tm := fixture("db", "t", tCols, primary(0))
	cases := []struct {
		name   string
		change func(def *schema.Table, tm *replication.TableMapEvent)
		want   error
		says   string
	}{
		{"column count", func(def *schema.Table, _ *replication.TableMapEvent) { def.Columns = def.Columns[:3] },
			ErrMismatch, "the schema has 3 columns, the binary log 4"},
		{"column name", func(def *schema.Table, _ *replication.TableMapEvent) { def.Columns[1].Name = "d" },
			ErrMismatch, "column 2 is `d` in the schema but `c` in the binary log"},
		{"column type", func(def *schema.Table, _ *replication.TableMapEvent) { def.Columns[3].Type = "varchar" },
			ErrMismatch, "column `n` is varchar in the schema"},
		{"table name", func(def *schema.Table, _ *replication.TableMapEvent) { def.Name = "u" },
			ErrMismatch, "the schema given is of `db`.`u`"},
		{"inconsistent table map", func(_ *schema.Table, tm *replication.TableMapEvent) { tm.ColumnMeta = tm.ColumnMeta[:2] },
			ErrMismatch, "4 columns has 4 types and 2 metadata"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, m := def.Clone(), *tm
			m.ColumnMeta = append([]uint16(nil), tm.ColumnMeta...)
			c.change(d, &m)
			_, err := NewTable(d, &m)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v, want %v saying %q", err, c.want, c.says)
			}
			if !strings.Contains(err.Error(), "`db`.`t`") {
				t.Errorf("error does not name the table: %v", err)
			}
		})
	}
	// Names differing only in case are the same column; a table map without
	// names (binlog_row_metadata=MINIMAL) is checked on count and types.
	d := def.Clone()
	d.Columns[1].Name = "C"
	if _, err := NewTable(d, tm); err != nil {
		t.Error(err)
	}
	_, m := fixture("db", "t", tCols, primary(0)) // fresh: a table map caches its names
	m.ColumnName = nil
	if _, err := NewTable(def, m); err != nil {
		t.Error(err)
	}
}

// Without a schema, everything comes from the table map's optional
// metadata (binlog_row_metadata=FULL).
func TestNewTableFromTableMap(t *testing.T) {
	// A fresh table map each time: it caches its column names.
	newTM := func() *replication.TableMapEvent {
		return &replication.TableMapEvent{
			Schema: []byte("db"), Table: []byte("t"), ColumnCount: 5,
			ColumnType: []byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_BLOB},
			ColumnMeta: []uint16{0, 40, 0xfe04, 0, 2},
			ColumnName: [][]byte{[]byte("id"), []byte("l"), []byte("b"), []byte("u"), []byte("txt")},
			NullBitmap: []byte{0b11110},
			// Numeric columns id and u: id signed, u unsigned (most significant bit first).
			SignednessBitmap: []byte{0b01000000},
			// Character columns l, b, txt: latin1_swedish_ci, binary, utf8mb4_general_ci.
			ColumnCharset: []uint64{8, 63, 45},
			PrimaryKey:    []uint64{0},
		}
	}
	tab, err := NewTable(nil, newTM())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, cs, co       string
		unsigned, nullable bool
		enc                encoding
	}{
		{"id", "", "", false, false, encInt},
		{"l", "latin1", "latin1_swedish_ci", false, true, encConvert},
		{"b", "binary", "binary", false, true, encPadded},
		{"u", "", "", true, true, encInt},
		{"txt", "utf8mb4", "utf8mb4_general_ci", false, true, encText},
	}
	for i, w := range want {
		c := tab.Columns[i]
		if c.Name != w.name || c.Charset != w.cs || c.Collation != w.co || c.Unsigned != w.unsigned || c.Nullable != w.nullable || c.enc != w.enc {
			t.Errorf("column %d: got %+v, want %+v", i, c, w)
		}
	}
	if !reflect.DeepEqual(tab.Key, []int{0}) {
		t.Errorf("key %v", tab.Key)
	}

	noNames := newTM()
	noNames.ColumnName = nil
	if _, err := NewTable(nil, noNames); !errors.Is(err, ErrNoSchema) || !strings.Contains(err.Error(), "binlog_row_metadata=FULL") {
		t.Errorf("without names: %v", err)
	}
	unknown := newTM()
	unknown.ColumnCharset = []uint64{8, 63, 60000}
	if _, err := NewTable(nil, unknown); err == nil || !strings.Contains(err.Error(), "unknown collation id 60000") {
		t.Errorf("unknown collation: %v", err)
	}
}

func TestMatches(t *testing.T) {
	def, tm := fixture("db", "t", tCols, primary(0))
	tab, err := NewTable(def, tm)
	if err != nil {
		t.Fatal(err)
	}
	if !tab.Matches(tm) {
		t.Error("does not match its own table map")
	}
	wider := *tm
	wider.ColumnMeta = append([]uint16{0, 800}, tm.ColumnMeta[2:]...) // varchar(100) → varchar(200)
	other := *tm
	other.Table = []byte("u")
	for _, m := range []*replication.TableMapEvent{&wider, &other} {
		if tab.Matches(m) {
			t.Errorf("matches %s with meta %v", m.Table, m.ColumnMeta)
		}
	}
}

func TestRealType(t *testing.T) {
	cases := []struct {
		tp     byte
		meta   uint16
		real   byte
		length int
	}{
		{mysql.MYSQL_TYPE_LONG, 0, mysql.MYSQL_TYPE_LONG, 0},
		{mysql.MYSQL_TYPE_STRING, 0xfe08, mysql.MYSQL_TYPE_STRING, 8},     // BINARY(8)
		{mysql.MYSQL_TYPE_STRING, 0xf701, mysql.MYSQL_TYPE_ENUM, 1},       // ENUM
		{mysql.MYSQL_TYPE_STRING, 0xf808, mysql.MYSQL_TYPE_SET, 8},        // SET of 64
		{mysql.MYSQL_TYPE_STRING, 0xee20, mysql.MYSQL_TYPE_STRING, 0x120}, // CHAR(72) utf8mb4: 288 bytes
	}
	for _, c := range cases {
		real, length := realType(c.tp, c.meta)
		if real != c.real || length != c.length {
			t.Errorf("realType(%d, %#x) = %d, %d; want %d, %d", c.tp, c.meta, real, length, c.real, c.length)
		}
	}
}

// TestNewTableHashColumns: the hidden hash columns of long unique keys,
// which row images carry after the table's own columns, are never
// written nor compared; without a schema they cannot be told from a
// column of that name, and the table is refused.
func TestNewTableHashColumns(t *testing.T) {
	hash := col{name: "DB_ROW_HASH_1", typ: "bigint", tp: mysql.MYSQL_TYPE_LONGLONG, nullable: true}
	blob := col{name: "b", typ: "blob", tp: mysql.MYSQL_TYPE_BLOB, meta: 2, cs: "binary", co: "binary", nullable: true}
	// A keyless table (its long unique key is nullable) whose own column
	// has a hash column's name: the key's is DB_ROW_HASH_2.
	def, tm := fixture("db", "h", []col{intCol("n"), hash, blob}, unique("b", 2))
	tm.ColumnCount++
	tm.ColumnType = append(tm.ColumnType, mysql.MYSQL_TYPE_LONGLONG)
	tm.ColumnMeta = append(tm.ColumnMeta, 0)
	tm.ColumnName = append(tm.ColumnName, []byte("DB_ROW_HASH_2"))
	tab, err := NewTable(def, tm)
	if err != nil {
		t.Fatal(err)
	}
	if c := tab.Columns[3]; c.Name != "DB_ROW_HASH_2" || !c.Generated || tab.Columns[1].Generated {
		t.Fatalf("columns %+v", tab.Columns)
	}
	b := &Batch{}
	r := &binlog.Rows{Op: binlog.Insert, Table: tm, Images: [][]any{{int32(1), int64(5), []byte("x"), int64(77)}}}
	if err := b.Add(tab, r, 0); err != nil {
		t.Fatal(err)
	}
	r = &binlog.Rows{Op: binlog.Update, Table: tm, Images: [][]any{{int32(1), int64(5), []byte("x"), int64(77)}, {int32(1), int64(6), []byte("y"), int64(78)}}}
	if err := b.Add(tab, r, 0); err != nil {
		t.Fatal(err)
	}
	want := "INSERT INTO `db`.`h` (`n`,`DB_ROW_HASH_1`,`b`) VALUES (?,?,?);" +
		"UPDATE `db`.`h` SET `DB_ROW_HASH_1`=?, `b`=? WHERE `n` <=> ? AND `DB_ROW_HASH_1` <=> ? AND `b` <=> ? LIMIT 1"
	if got := b.SQL(); got != want {
		t.Errorf("SQL:\n got %s\nwant %s", got, want)
	}

	// Extra columns that are no hash columns stay a mismatch.
	for name, change := range map[string]func(m *replication.TableMapEvent){
		"no names":     func(m *replication.TableMapEvent) { m.ColumnName = nil },
		"another name": func(m *replication.TableMapEvent) { m.ColumnName[3] = []byte("extra") },
		"another type": func(m *replication.TableMapEvent) { m.ColumnType[3] = mysql.MYSQL_TYPE_LONG },
		"two for one key": func(m *replication.TableMapEvent) {
			m.ColumnCount++
			m.ColumnType = append(m.ColumnType, mysql.MYSQL_TYPE_LONGLONG)
			m.ColumnMeta = append(m.ColumnMeta, 0)
			m.ColumnName = append(m.ColumnName, []byte("DB_ROW_HASH_3"))
		},
	} {
		_, m := fixture("db", "h", []col{intCol("n"), hash, blob}, unique("b", 2))
		m.ColumnCount++
		m.ColumnType = append(m.ColumnType, mysql.MYSQL_TYPE_LONGLONG)
		m.ColumnMeta = append(m.ColumnMeta, 0)
		m.ColumnName = append(m.ColumnName, []byte("DB_ROW_HASH_2"))
		change(m)
		if _, err := NewTable(def, m); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: %v, want ErrMismatch", name, err)
		}
	}

	// Without a schema: refused, whether the last column is the hidden
	// one or the table's own.
	_, m := fixture("db", "h", []col{intCol("n"), blob, hash})
	if _, err := NewTable(nil, m); !errors.Is(err, ErrNoSchema) || !strings.Contains(err.Error(), "`DB_ROW_HASH_1`") {
		t.Errorf("without a schema: %v, want ErrNoSchema naming the column", err)
	}
}

// TestWithoutOverlapsNotCompactable: rows of a primary key WITHOUT
// OVERLAPS conflict when their keys differ (overlapping periods of one
// id), so their changes do not commute; the key still locates one row.
func TestWithoutOverlapsNotCompactable(t *testing.T) {
	date := func(name string) col { return col{name: name, typ: "date", tp: mysql.MYSQL_TYPE_DATE} }
	cols := []col{intCol("id"), date("s"), date("e"), intCol("v")}
	pk := primary(0, 2, 1)
	pk.WithoutOverlaps = true
	def, tm := fixture("db", "p", cols, pk)
	tab, err := NewTableIn(schema.NewCatalog(), def, tm)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Compactable() || !reflect.DeepEqual(tab.Key, []int{0, 2, 1}) {
		t.Errorf("Compactable %v, Key %v; want false, [0 2 1]", tab.Compactable(), tab.Key)
	}
	pk.WithoutOverlaps = false
	def, tm = fixture("db", "p", cols, pk)
	if tab, err := NewTableIn(schema.NewCatalog(), def, tm); err != nil || !tab.Compactable() {
		t.Errorf("a plain primary key: Compactable %v, %v", tab != nil && tab.Compactable(), err)
	}
}
