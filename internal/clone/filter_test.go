package clone

import (
	"context"
	"testing"

	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/verify"
)

// TestCloneFiltersAndRewrite clones a stream with --rewrite-db
// app=app_copy, --include app_copy.% and --exclude app_copy.skip%: only
// app's tables but skip_me are copied, as app_copy's, with app's view
// and trigger renamed; other and skip_me are not on the target; verify of
// the stream is equal, and so it is once replication has gone on. It
// reads with two snapshot sessions, opened at one position.
func TestCloneFiltersAndRewrite(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, sandbox.Options{})
	exec(t, p.sdb,
		"CREATE DATABASE app", "CREATE DATABASE other",
		"CREATE TABLE app.t1 (id INT PRIMARY KEY, v VARCHAR(10))",
		"CREATE TABLE app.t2 (id INT PRIMARY KEY, t1 INT, KEY t1 (t1))",
		"CREATE TABLE app.skip_me (id INT PRIMARY KEY)",
		"CREATE TABLE other.t (id INT PRIMARY KEY)",
		"INSERT INTO app.t1 SELECT seq, CONCAT('v', seq) FROM app.seq_1_to_300",
		"INSERT INTO app.t2 SELECT seq, seq % 50 FROM app.seq_1_to_300",
		"INSERT INTO app.skip_me VALUES (1)", "INSERT INTO other.t VALUES (1)",
		"CREATE VIEW app.joined AS SELECT app.t1.id, app.t2.t1 FROM app.t1 JOIN app.t2 ON app.t1.id = app.t2.id",
		"CREATE TRIGGER app.t1_ins BEFORE INSERT ON app.t1 FOR EACH ROW SET NEW.v = UPPER(NEW.v)",
	)
	cfg := p.config(t)
	rules, err := filter.NewRules([]string{"app_copy.%"}, []string{"app_copy.skip%"}, []string{"app=app_copy"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Stream.Filter = rules
	cfg.Readers = 2 // two snapshots at one position: commits blocked a moment
	res, err := New(cfg).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Progress.BlockedSeconds <= 0 {
		t.Errorf("two readers: the source's commits blocked for %v s, want a moment", res.Progress.BlockedSeconds)
	}
	there, err := targetTables(ctx, p.tdb)
	if err != nil {
		t.Fatal(err)
	}
	want := map[verify.TableName]bool{{Schema: "app_copy", Name: "t1"}: true, {Schema: "app_copy", Name: "t2"}: true, {Schema: "app_copy", Name: "joined"}: true}
	for n := range there {
		if !want[n] {
			t.Errorf("the target holds %s, which the rules leave out", n)
		}
	}
	for n := range want {
		if !there[n] {
			t.Errorf("the target lacks %s", n)
		}
	}
	p.equal(t, verify.Options{Filter: &rules})
	if got := rowsText(t, p.tdb, "SELECT COUNT(*) FROM app_copy.joined"); got != rowsText(t, p.sdb, "SELECT COUNT(*) FROM app.joined") {
		t.Errorf("the view app_copy.joined counts %s", got)
	}
	// The trigger fires on the target for a statement of its own.
	exec(t, p.tdb, "INSERT INTO app_copy.t1 VALUES (1000, 'low')")
	if got := rowsText(t, p.tdb, "SELECT v FROM app_copy.t1 WHERE id = 1000"); got != "\"LOW\" \n" {
		t.Errorf("the trigger app_copy.t1_ins on the target: %s", got)
	}
	exec(t, p.tdb, "DELETE FROM app_copy.t1 WHERE id = 1000")
	exec(t, p.sdb, "UPDATE app.t2 SET t1 = t1 + 1 WHERE id < 100", "INSERT INTO app.skip_me VALUES (2)", "DELETE FROM app.t1 WHERE id > 250")
	if err := replicate.New(cfg.Stream).Run(ctx); err != nil {
		t.Fatal(err)
	}
	p.equal(t, verify.Options{Filter: &rules})
}
