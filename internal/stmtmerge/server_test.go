package stmtmerge

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestMergedLeaveSameRows runs random streams of recognized statements on
// a real server twice, one by one and merged (flushed at random points),
// and requires the same rows: the levels keep every order that matters.
func TestMergedLeaveSameRows(t *testing.T) {
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "stmtmerge"})
	db := sandboxtest.DB(t, srv)
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE m")
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		stream := randomStream(rng, 400)
		for _, tbl := range []string{"one", "merged"} {
			exec("CREATE OR REPLACE TABLE m." + tbl + " (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c VARCHAR(40), d DECIMAL(12,4), ts DATETIME, f FLOAT)")
			exec("CREATE OR REPLACE TABLE m." + tbl + "_u (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c VARCHAR(40), d DECIMAL(12,4), ts DATETIME, f FLOAT)")
			exec("INSERT INTO m." + tbl + " SELECT seq, seq, CONCAT('c', seq), seq / 3, NULL, NULL FROM m.seq_1_to_30")
			exec("INSERT INTO m." + tbl + "_u SELECT seq, seq, CONCAT('c', seq), seq / 3, NULL, NULL FROM m.seq_1_to_30")
			// A string key, whose rows letter case does not tell apart.
			exec("CREATE OR REPLACE TABLE m." + tbl + "_s (id VARCHAR(20) PRIMARY KEY, k INT NOT NULL DEFAULT 0, c VARCHAR(40), d DECIMAL(12,4), ts DATETIME, f FLOAT) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
			exec("INSERT INTO m." + tbl + "_s SELECT CONCAT('s', seq), seq, CONCAT('c', seq), seq / 3, NULL, NULL FROM m.seq_1_to_30")
		}
		for _, q := range stream {
			exec(strings.NewReplacer("TBL", "m.one").Replace(q))
		}
		var m Merger
		merged := 0
		for _, q := range stream {
			q = strings.NewReplacer("TBL", "m.merged").Replace(q)
			f, ok := Recognize(q, "id")
			if !ok {
				t.Fatalf("%s: not recognized", q)
			}
			table := "m.merged"
			for _, other := range []string{"m.merged_u", "m.merged_s"} {
				if strings.Contains(q, other) {
					table = other
				}
			}
			m.Add(&f, q, table)
			if rng.IntN(60) == 0 {
				for _, s := range m.Flush() {
					exec(s)
					merged++
				}
			}
		}
		for _, s := range m.Flush() {
			exec(s)
			merged++
		}
		if merged >= len(stream)*2/3 {
			t.Errorf("seed %d: %d statements merged into %d, want far fewer", seed, len(stream), merged)
		}
		for _, pair := range [][2]string{{"m.one", "m.merged"}, {"m.one_u", "m.merged_u"}, {"m.one_s", "m.merged_s"}} {
			if a, b := rows(t, db, pair[0]), rows(t, db, pair[1]); a != b {
				t.Fatalf("seed %d: %s and %s differ:\n%s\n---\n%s", seed, pair[0], pair[1], a, b)
			}
		}
	}
}

// randomStream is n statements on tables TBL, TBL_u (rows 1 to 40) and
// TBL_s (rows 's1' to 's40', in either letter case), which the server
// accepts in their order: an INSERT only of a row that is not there then.
func randomStream(rng *rand.Rand, n int) []string {
	present := map[string]bool{}
	for id := 1; id <= 30; id++ {
		present[fmt.Sprint("TBL", id)], present[fmt.Sprint("TBL_u", id)], present[fmt.Sprint("TBL_s", id)] = true, true, true
	}
	var out []string
	for len(out) < n {
		tbl := "TBL"
		switch rng.IntN(6) {
		case 0:
			tbl = "TBL_u"
		case 1, 2:
			tbl = "TBL_s"
		}
		n := 1 + rng.IntN(40)
		row := fmt.Sprint(tbl, n)
		id := fmt.Sprint(n)
		if tbl == "TBL_s" {
			id = fmt.Sprintf("'%s%d'", []string{"s", "S"}[rng.IntN(2)], n)
		}
		switch rng.IntN(9) {
		case 0:
			out = append(out, fmt.Sprintf("UPDATE %s SET k=k+1 WHERE id=%s", tbl, id))
		case 1:
			out = append(out, fmt.Sprintf("UPDATE %s SET c='v%d' WHERE id=%s", tbl, rng.IntN(1000), id))
		case 2:
			out = append(out, fmt.Sprintf("UPDATE %s SET k=%d, c=CONCAT(c, 'x'), d=d*2 WHERE id=%s", tbl, rng.IntN(100), id))
		case 3:
			out = append(out, fmt.Sprintf("UPDATE %s SET d=k/7, k=k*2 WHERE id=%s", tbl, id))
		case 7:
			// Literals whose type is not the column's: the CASE of them
			// must convert as each assignment does.
			out = append(out, fmt.Sprintf("UPDATE %s SET d='%d.%03d5', ts='2020-01-%02d 10:%02d:00', f='%d.1' WHERE id=%s",
				tbl, rng.IntN(100), rng.IntN(1000), 1+rng.IntN(28), rng.IntN(60), rng.IntN(50), id))
		case 8:
			out = append(out, fmt.Sprintf("UPDATE %s SET d=%d.%05d, f=%d WHERE id=%s", tbl, rng.IntN(100), rng.IntN(100000), rng.IntN(1000), id))
		case 4:
			out = append(out, fmt.Sprintf("DELETE FROM %s WHERE id=%s", tbl, id))
			present[row] = false
		default:
			if present[row] {
				continue
			}
			out = append(out, fmt.Sprintf("INSERT INTO %s (id, k, c, d) VALUES (%s, %d, 'i%d', %d.25)", tbl, id, rng.IntN(100), rng.IntN(100), rng.IntN(9)))
			present[row] = true
		}
	}
	return out
}

// rows is table's content as text, in key order.
func rows(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rs, err := db.Query("SELECT id, k, COALESCE(c, 'NULL'), COALESCE(d, 'NULL'), COALESCE(ts, 'NULL'), COALESCE(HEX(f), 'NULL') FROM " + table + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var b strings.Builder
	for rs.Next() {
		var k int
		var id, c, d, ts, f string
		if err := rs.Scan(&id, &k, &c, &d, &ts, &f); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %s %s %s %s\n", id, k, c, d, ts, f)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
