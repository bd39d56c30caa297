package sqlgen

import (
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
)

// TestUpdateSetsTimestamps: an UPDATE sets the TIMESTAMP and DATETIME
// columns of the after image even when the image shows them unchanged (an
// update in the same second as the row's last change): one of them may be
// ON UPDATE CURRENT_TIMESTAMP, which the target would set to its own
// clock. Other unchanged columns stay out; compaction keeps them too.
func TestUpdateSetsTimestamps(t *testing.T) {
	cols := []col{intCol("id"), intCol("n"), varcharCol("s"),
		{name: "ts", typ: "timestamp", tp: mysql.MYSQL_TYPE_TIMESTAMP2, meta: 0},
		{name: "dt", typ: "datetime", tp: mysql.MYSQL_TYPE_DATETIME2, meta: 6, nullable: true},
		{name: "d", typ: "date", tp: mysql.MYSQL_TYPE_DATE, nullable: true}}
	tab := newTable(t, "db", "t", cols, primary(0))
	before := []any{int32(1), int32(0), "a", "2010-01-01 00:00:00", "2010-01-01 00:00:00.500000", "2010-01-01"}
	after := []any{int32(1), int32(1), "a", "2010-01-01 00:00:00", "2010-01-01 00:00:00.500000", "2010-01-01"}
	var b Batch
	if err := b.Add(tab, rows(tab, binlog.Update, before, after), 0); err != nil {
		t.Fatal(err)
	}
	if want := "UPDATE `db`.`t` SET `n`=?, `ts`=?, `dt`=? WHERE `id`=?"; b.SQL() != want {
		t.Errorf("got  %s\nwant %s", b.SQL(), want)
	}
	c := Batch{Compact: true}
	tab.compact = true
	again := []any{int32(1), int32(2), "a", "2010-01-01 00:00:00", "2010-01-01 00:00:00.500000", "2010-01-01"}
	for _, r := range []*binlog.Rows{rows(tab, binlog.Update, before, after), rows(tab, binlog.Update, after, again)} {
		if err := c.Add(tab, r, 0); err != nil {
			t.Fatal(err)
		}
	}
	if sql := c.SQL(); !strings.Contains(sql, "`ts`=") || !strings.Contains(sql, "`dt`=") || strings.Contains(sql, "`s`=") || strings.Contains(sql, "`d`=") {
		t.Errorf("compacted: %s", sql)
	}
}
