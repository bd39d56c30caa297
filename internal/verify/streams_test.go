package verify

import (
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/checkpoint"
)

// streamsDrop removes what testStreams adds to the target.
var streamsDrop = []string{
	"DROP DATABASE IF EXISTS paraply",
	"DROP DATABASE IF EXISTS paraply_stream_us",
	"DROP DATABASE IF EXISTS us_only",
	"DROP TABLE IF EXISTS vt.us_t",
	"DROP TABLE IF EXISTS vt.stray",
}

// testStreams runs verify of stream default on the servers of TestVerify,
// on a target that also holds stream us: us's database us_only, which
// the source does not have, and vt.us_t, which us applied rows to, are
// us's and left out; vt.stray, in a database of the source's that no
// other stream wrote to, is still missing on the source.
func testStreams(t *testing.T, srcDB, tgtDB *sql.DB) {
	exec(t, tgtDB, streamsDrop...)
	t.Cleanup(func() { exec(t, tgtDB, streamsDrop...) })
	ctx := t.Context()
	def := checkpoint.NewStreamStore(tgtDB, checkpoint.Replicate, checkpoint.DefaultStream)
	us := checkpoint.NewStreamStore(tgtDB, checkpoint.Replicate, "us")
	for _, s := range []*checkpoint.Store{def, us} {
		if err := s.Init(ctx); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, tgtDB, "CREATE DATABASE us_only", "CREATE TABLE us_only.t (id INT PRIMARY KEY)", "INSERT INTO us_only.t VALUES (1)",
		"CREATE TABLE vt.us_t (id INT PRIMARY KEY)", "INSERT INTO vt.us_t VALUES (1)",
		"CREATE TABLE vt.stray (id INT PRIMARY KEY)")
	if err := us.RecordWritten(ctx, []checkpoint.Object{{Schema: "us_only", Table: "t"}, {Schema: "vt", Table: "us_t"}}); err != nil {
		t.Fatal(err)
	}
	// Written by both: this stream's too, so reported.
	for _, s := range []*checkpoint.Store{def, us} {
		if err := s.RecordWritten(ctx, []checkpoint.Object{{Schema: "vt", Table: "stray"}}); err != nil {
			t.Fatal(err)
		}
	}

	rep := run(t, Options{Source: srcDB, Target: tgtDB})
	if tr := onlyDifferent(t, rep, "stray"); tr.Schema != "vt" || tr.Problem != ProblemMissingOnSource {
		t.Errorf("vt.stray: %s %q, want missing on source", tr.Status, tr.Problem)
	}
	left := []TableName{{"us_only", "t"}, {"vt", "us_t"}}
	if rep.Stream != checkpoint.DefaultStream || !slices.Equal(rep.OtherStreams, []string{"us"}) || !slices.Equal(rep.OtherStreamsTables, left) {
		t.Errorf("stream %q, other streams %q and their tables %v; want default, us and %v", rep.Stream, rep.OtherStreams, rep.OtherStreamsTables, left)
	}
	out := text(rep)
	if want := "stream default; not compared: 2 tables of the target's other streams (us): us_only.t, vt.us_t\n"; !strings.Contains(out, want) {
		t.Errorf("text report lacks %q:\n%s", want, out)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"stream":"default","other_streams":["us"],"other_streams_tables":[{"schema":"us_only","table":"t"}`; !strings.Contains(string(b), want) {
		t.Errorf("JSON lacks %s:\n%s", want, b)
	}

	// Asked for by name, a table is compared whoever writes it.
	rep = run(t, Options{Source: srcDB, Target: tgtDB, Tables: []TableName{{"vt", "us_t"}}})
	if len(rep.Tables) != 1 || rep.Tables[0].Problem != ProblemMissingOnSource || len(rep.OtherStreamsTables) != 0 {
		t.Errorf("vt.us_t by name: want it missing on source:\n%s", text(rep))
	}

	// A stream the target does not hold is a mistyped --name.
	_, err = Run(ctx, Options{Source: srcDB, Target: tgtDB, Stream: "eu"})
	if err == nil || !strings.Contains(err.Error(), "holds no stream eu (database paraply_stream_eu; it holds: default, us)") {
		t.Errorf("stream eu: error %v", err)
	}

	// Without another stream's bookkeeping every target table is this
	// stream's.
	exec(t, tgtDB, "DROP DATABASE paraply_stream_us")
	rep = run(t, Options{Source: srcDB, Target: tgtDB})
	if rep.Summary.Different != 3 || len(rep.OtherStreams) != 0 || strings.Contains(text(rep), "other streams") {
		t.Errorf("one stream: want us_only.t, vt.us_t and vt.stray missing on source:\n%s", text(rep))
	}
}
