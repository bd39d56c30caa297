package analyze

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/workload"
)

// TestForgottenWritersWithinWindow: on a stream of inserts of new rows
// every transaction misses in a full writeset history and waits for its
// newest forgotten writer. That wait costs something only while that
// writer may be in flight, within the window: history_forgotten counts
// those waits, and the report asks for a larger history only then.
func TestForgottenWritersWithinWindow(t *testing.T) {
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "analyze-hist", Binlog: true})
	files, cat := runWorkload(t, src, workload.Workload{Name: "new rows",
		Setup: []string{"CREATE DATABASE h", "CREATE TABLE h.t (id INT PRIMARY KEY, v INT)",
			"CREATE PROCEDURE h.fill(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO INSERT INTO h.t VALUES (i, i); SET i = i + 1; END WHILE; END"},
		Run: func(ctx context.Context, db *sql.DB) error {
			_, err := db.ExecContext(ctx, "CALL h.fill(3000)")
			return err
		}})
	for _, c := range []struct {
		window    int
		within    bool // the forgotten writers (200 back) are within the window
		recommend bool
	}{
		{window: DefaultWindow, within: true, recommend: true},
		{window: 100, within: false, recommend: false},
	} {
		model := DefaultCostModel
		model.Window = c.window
		r, err := Run(Options{Files: files, Catalog: cat.Clone(), HistorySize: 200, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		ws := r.Modes["writeset"]
		waits := ws.Barriers["history_forgotten"]
		if ws.HistoryForgotten < 2000 || (waits > 2000) != c.within || (waits == 0) == c.within {
			t.Errorf("window %d: %d keys forgotten, %d waits for a forgotten writer counted; want them counted: %v",
				c.window, ws.HistoryForgotten, waits, c.within)
		}
		if got := strings.Contains(r.Recommendation, "raise --history-size"); got != c.recommend {
			t.Errorf("window %d: recommendation %q; asks for a larger history: %v, want %v", c.window, r.Recommendation, got, c.recommend)
		}
	}
}
