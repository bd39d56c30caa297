package schema

import (
	"slices"
	"testing"
)

func TestHashColumns(t *testing.T) {
	tb := &Table{Columns: []Column{{Name: "id"}, {Name: "b"}, {Name: "c"}},
		Indexes: []Index{{Name: "PRIMARY", Primary: true, Columns: []int{0}, Prefix: []int{0}},
			{Name: "b", Columns: []int{1}, Prefix: []int{0}}, {Name: "c", Columns: []int{2}, Prefix: []int{0}}}}
	const i, l, h = 3, 252, typeLongLong // INT, BLOB, BIGINT
	for _, c := range []struct {
		name  string
		names []string
		types []byte
		n     int
		ok    bool
	}{
		{"none", nil, []byte{i, l, l}, 0, true},
		{"one", []string{"id", "b", "c", "DB_ROW_HASH_1"}, []byte{i, l, l, h}, 1, true},
		{"two", []string{"id", "b", "c", "DB_ROW_HASH_1", "DB_ROW_HASH_2"}, []byte{i, l, l, h, h}, 2, true},
		{"more than the unique keys", []string{"id", "b", "c", "DB_ROW_HASH_1", "DB_ROW_HASH_2", "DB_ROW_HASH_3"}, []byte{i, l, l, h, h, h}, 0, false},
		{"no names", nil, []byte{i, l, l, h}, 0, false},
		{"another name", []string{"id", "b", "c", "DB_ROW_HASH_x"}, []byte{i, l, l, h}, 0, false},
		{"another type", []string{"id", "b", "c", "DB_ROW_HASH_1"}, []byte{i, l, l, i}, 0, false},
		{"fewer columns", []string{"id", "b"}, []byte{i, l}, 0, false},
	} {
		if n, ok := tb.HashColumns(c.names, c.types); n != c.n || ok != c.ok {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, n, ok, c.n, c.ok)
		}
	}
	for name, want := range map[string]bool{"DB_ROW_HASH_1": true, "DB_ROW_HASH_12": true, "DB_ROW_HASH_": false,
		"db_row_hash_1": false, "DB_ROW_HASH_1a": false, "X_DB_ROW_HASH_1": false} {
		if IsHashColumnName(name) != want {
			t.Errorf("IsHashColumnName(%q) = %v", name, !want)
		}
	}
}

func TestConflictColumns(t *testing.T) {
	wo := Index{Name: "u", Columns: []int{4, 1, 3, 2}, Prefix: []int{0, 5, 0, 0}, WithoutOverlaps: true}
	if cols, prefix := wo.ConflictColumns(); !slices.Equal(cols, []int{4, 1}) || !slices.Equal(prefix, []int{0, 5}) {
		t.Errorf("WITHOUT OVERLAPS: %v %v", cols, prefix)
	}
	plain := wo
	plain.WithoutOverlaps = false
	if cols, prefix := plain.ConflictColumns(); !slices.Equal(cols, wo.Columns) || !slices.Equal(prefix, wo.Prefix) {
		t.Errorf("plain: %v %v", cols, prefix)
	}
}

func TestPeriodCheck(t *testing.T) {
	for clause, want := range map[string]period{
		"`s` < `e`":         {name: "p", start: "s", end: "e"},
		"`st``a` < `en d`":  {name: "p", start: "st`a", end: "en d"},
		"\"s\" < \"e\"":     {name: "p", start: "s", end: "e"},
		"s < e":             {name: "p", start: "s", end: "e"},
		"`s` <= `e`":        {},
		"`s` < `e` + 1":     {},
		"`a` > 0":           {},
		"json_valid(`doc`)": {},
	} {
		got, ok := periodCheck("p", clause)
		if ok != (want != period{}) || got != want {
			t.Errorf("periodCheck(%q) = %+v, %v; want %+v", clause, got, ok, want)
		}
	}
}
