package prepare

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/stage"
)

var record = flag.Bool("record", false, "write "+recordedBinlog+" again from a sandbox MariaDB running "+recordedSQL)

const (
	recordedBinlog = "testdata/mariadb-prepare.000001"
	recordedSQL    = "testdata/mariadb-prepare.sql"
)

// TestRecorded checks the recorded binlog the other tests read: the
// transactions its workload says, in that order. With -record it first
// records it again on a sandbox MariaDB.
func TestRecorded(t *testing.T) {
	if *record {
		recordBinlog(t)
	}
	var got []string
	for _, e := range entries(t) {
		got = append(got, e.GTID.String())
	}
	want := "0-1-1 0-1-2 0-1-3 0-1-4 0-1-5 0-1-6 0-1-7 0-1-8 1-1-1 0-1-9"
	if strings.Join(got, " ") != want {
		t.Fatalf("%s holds %s, want %s", recordedBinlog, strings.Join(got, " "), want)
	}
}

// recordBinlog runs the workload on a sandbox MariaDB and keeps its binlog.
func recordBinlog(t *testing.T) {
	srv := sandboxtest.ForTest(t, sandbox.Options{Name: "prepare", Binlog: true})
	sql, err := os.ReadFile(recordedSQL)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(t.Context(), "RESET MASTER"); err != nil {
		t.Fatal(err)
	}
	for _, para := range strings.Split(string(sql), "\n\n") {
		var q []string
		for _, line := range strings.Split(para, "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
				q = append(q, strings.TrimSuffix(line, ";"))
			}
		}
		if err := srv.Exec(t.Context(), q...); err != nil { // one session
			t.Fatal(err)
		}
	}
	if err := srv.Exec(t.Context(), "FLUSH BINARY LOGS"); err != nil { // closes the file: it ends with a rotate event
		t.Fatal(err)
	}
	files, err := srv.BinlogFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(recordedBinlog, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// entries reads the recorded binlog as the relay log would hand it to the
// preparer: one entry per transaction, numbered from 1, each with the
// source position after it (the GTID position over every domain, as the
// MariaDB receiver writes it).
func entries(t *testing.T) []*relaylog.Entry {
	t.Helper()
	return entriesOf(t, filepath.FromSlash(recordedBinlog))
}

// entriesOf reads binlog file name as entries does.
func entriesOf(t *testing.T, name string) []*relaylog.Entry {
	t.Helper()
	raws, err := binlog.FrameFile(name)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[uint32]binlog.GTID{}
	var domains []uint32
	var out []*relaylog.Entry
	for i, rt := range raws {
		g, err := rt.GTID()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := pos[g.Domain]; !ok {
			domains = append(domains, g.Domain)
		}
		pos[g.Domain] = g
		var resume []string
		for _, d := range domains {
			resume = append(resume, pos[d].String())
		}
		out = append(out, &relaylog.Entry{Index: uint64(i + 1), GTID: g, Resume: strings.Join(resume, ","), Txn: rt})
	}
	return out
}

// source hands out entries, then io.EOF (the relay log sealed at the end
// of the input), or, with block, waits for ctx (a relay log still open).
type source struct {
	entries []*relaylog.Entry
	block   bool
}

func (s *source) Next(ctx context.Context) (*relaylog.Entry, error) {
	if len(s.entries) == 0 {
		if s.block {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, io.EOF
	}
	e := s.entries[0]
	s.entries = s.entries[1:]
	return e, nil
}

// run runs p over src and returns what it passed on, whether it closed
// its output, and what it returned.
func run(t *testing.T, p *Preparer, src EntrySource) (got []*stage.Prepared, closed bool, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	out := make(chan *stage.Prepared, 100)
	errc := make(chan error, 1)
	go func() { errc <- p.Run(ctx, src, out) }()
	for {
		select {
		case pr, ok := <-out:
			if !ok {
				return got, true, <-errc
			}
			got = append(got, pr)
		case err := <-errc:
			for {
				select {
				case pr, ok := <-out:
					if !ok {
						return got, true, err
					}
					got = append(got, pr)
				default:
					return got, false, err
				}
			}
		case <-ctx.Done():
			t.Fatalf("the preparer neither closed its output nor returned, having passed on %q", gtids(got))
		}
	}
}

// preparer is a preparer in writeset mode over an empty catalog, which
// the stream's DDL fills; SQLOnly makes a table it cannot resolve an
// error.
func preparer() *Preparer {
	return &Preparer{Catalog: schema.NewCatalog(), Mode: deptrack.WritesetMode, History: 1000, SQLOnly: true}
}

// gtids lists the GTIDs of what was passed on.
func gtids(prs []*stage.Prepared) string {
	var s []string
	for _, pr := range prs {
		s = append(s, pr.Txn.GTID)
	}
	return strings.Join(s, " ")
}

func gtidSet(t *testing.T, s string) mysql.GTIDSet {
	t.Helper()
	set, err := binlog.ParseGTIDSet(binlog.FlavorMariaDB, s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// byGTID finds the transaction passed on with the GTID g.
func byGTID(t *testing.T, prs []*stage.Prepared, g string) *stage.Prepared {
	t.Helper()
	for _, pr := range prs {
		if pr.Txn.GTID == g {
			return pr
		}
	}
	t.Fatalf("%s was not passed on (got %s)", g, gtids(prs))
	return nil
}

// TestEndOfInput: at the end of its input (the relay log sealed: io.EOF)
// the preparer has passed on every transaction, in stream order, closes
// its output and returns nil: the end of the run flows downstream. On a
// relay log still open, it waits; cancelled, it returns nil and leaves
// its output open (the run did not end: it was stopped).
func TestEndOfInput(t *testing.T) {
	all := entries(t)
	got, closed, err := run(t, preparer(), &source{entries: all})
	if err != nil || !closed {
		t.Fatalf("at io.EOF: returned %v, output closed %v; want nil, closed", err, closed)
	}
	want := "0-1-1 0-1-2 0-1-3 0-1-4 0-1-5 0-1-6 0-1-7 0-1-8 1-1-1 0-1-9"
	if gtids(got) != want {
		t.Fatalf("passed on %s, want %s", gtids(got), want)
	}
	for i, pr := range got {
		if pr.Txn.Seq != all[i].Index || pr.Resume != all[i].Resume {
			t.Errorf("%s: seq %d resume %q, want the relay log's %d and %q", pr.Txn.GTID, pr.Txn.Seq, pr.Resume, all[i].Index, all[i].Resume)
		}
	}

	ctx, cancel := context.WithCancel(t.Context())
	out := make(chan *stage.Prepared, 100)
	errc := make(chan error, 1)
	go func() { errc <- preparer().Run(ctx, &source{entries: entries(t), block: true}, out) }()
	for range all {
		<-out
	}
	select {
	case err := <-errc:
		t.Fatalf("Run returned %v while its relay log was open", err)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("Run cancelled: %v, want nil", err)
	}
	select {
	case _, ok := <-out:
		t.Errorf("after a cancelled run the output is closed (%v) or holds more: want it open and empty", !ok)
	default:
	}
}

// TestAppliedAreSkipped: after a restart, transactions the target already
// has (Preparer.Applied, from the checkpoint) are still passed on in their
// place, with Skip set and nothing resolved for applying; the others are
// not skipped.
func TestAppliedAreSkipped(t *testing.T) {
	p := preparer()
	p.Applied = map[string]bool{"0-1-3": true, "0-1-7": true}
	got, _, err := run(t, p, &source{entries: entries(t)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got); n != 10 {
		t.Fatalf("%d transactions passed on (%s), want all 10", n, gtids(got))
	}
	for _, pr := range got {
		if pr.Skip != p.Applied[pr.Txn.GTID] {
			t.Errorf("%s: Skip %v, want %v", pr.Txn.GTID, pr.Skip, p.Applied[pr.Txn.GTID])
		}
		if pr.Skip && pr.Txn.Tables != nil {
			t.Errorf("%s is skipped but has its tables resolved", pr.Txn.GTID)
		}
	}
}

// TestXAPrepareHeld: an XA PREPARE (0-1-6) is passed on held: nothing to
// apply at its place, no keys to wait on. Its XA COMMIT (0-1-8) releases
// it and carries it: the prepare's rows, tables and raw events, and its
// GTID in Also, so that one target transaction applies the rows and
// records both GTIDs; and it takes the prepare's keys, so that a later
// writer of the prepare's row (0-1-9) waits for the commit. An XA COMMIT
// whose prepare came before where the run started is refused.
func TestXAPrepareHeld(t *testing.T) {
	all := entries(t)
	got, _, err := run(t, preparer(), &source{entries: all})
	if err != nil {
		t.Fatal(err)
	}
	prep, commit := byGTID(t, got, "0-1-6"), byGTID(t, got, "0-1-8")
	if !prep.Hold || prep.Releases != 0 || len(prep.Conflicts) != 0 {
		t.Errorf("XA PREPARE: Hold %v, Releases %d, Conflicts %v; want held, releasing nothing, no keys", prep.Hold, prep.Releases, prep.Conflicts)
	}
	for _, pr := range got {
		if pr != prep && pr.Hold {
			t.Errorf("%s is held: only the XA PREPARE is", pr.Txn.GTID)
		}
	}
	if commit.Releases != prep.Txn.Seq || !slices.Equal(commit.Txn.Also, []string{"0-1-6"}) {
		t.Errorf("XA COMMIT: Releases %d, Also %v; want %d and [0-1-6]", commit.Releases, commit.Txn.Also, prep.Txn.Seq)
	}
	if commit.Txn.Raw != all[5].Txn || len(commit.Txn.Txn.Rows) != 1 || commit.Txn.Txn.Rows[0].Name() != "t" {
		t.Errorf("XA COMMIT carries %d rows and raw events %p; want the prepare's row of p.t and its raw events %p", len(commit.Txn.Txn.Rows), commit.Txn.Raw, all[5].Txn)
	}
	if cols := columns(commit); cols != "[id a b]" {
		t.Errorf("XA COMMIT's tables %s, want the prepare's [id a b]", cols)
	}
	if later := byGTID(t, got, "0-1-9"); !slices.Contains(later.Deps.On, commit.Txn.Seq) {
		t.Errorf("0-1-9 (writes the prepare's row) depends on %+v, want on the XA COMMIT (%d)", later.Deps, commit.Txn.Seq)
	}

	// Started after the prepare (relay index 7 on), its commit has nothing
	// to apply: replication stops there.
	_, _, err = run(t, preparer(), &source{entries: all[6:]})
	var conflict *stage.ConflictError
	if !errors.As(err, &conflict) || conflict.GTID != "0-1-8" {
		t.Errorf("an XA COMMIT without its prepare: %v, want a ConflictError at 0-1-8", err)
	}
}

// TestDDLChangesTheCatalog: the catalog is the target's at a checkpoint
// after 0-1-3 (p.t has columns id and a); the stream then adds column b
// (0-1-4) and writes a row of three columns (0-1-5). The preparer follows
// the DDL in the catalog, and the row's table resolves with b, as SQL
// generation needs it.
func TestDDLChangesTheCatalog(t *testing.T) {
	p := preparer()
	for _, q := range []string{"CREATE DATABASE p", "CREATE TABLE p.t (id INT PRIMARY KEY, a INT) ENGINE=InnoDB"} {
		if _, err := p.Catalog.ApplyDDL("", q); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := run(t, p, &source{entries: entries(t)[3:5]})
	if err != nil {
		t.Fatalf("0-1-4 and 0-1-5 over the catalog of 0-1-3: %v", err)
	}
	ddl, row := byGTID(t, got, "0-1-4"), byGTID(t, got, "0-1-5")
	if ddl.Txn.DDL == nil || !slices.Contains(ddl.Txn.DDL.Objects, checkpoint.Object{Schema: "p", Table: "t"}) {
		t.Errorf("0-1-4's DDL %+v, want it to name p.t", ddl.Txn.DDL)
	}
	var cols []string
	for _, c := range p.Catalog.Table("p", "t").Columns {
		cols = append(cols, c.Name)
	}
	if fmt.Sprint(cols) != "[id a b]" {
		t.Errorf("the catalog's p.t after the ALTER has columns %v, want [id a b]", cols)
	}
	if cols := columns(row); cols != "[id a b]" {
		t.Errorf("0-1-5's row resolves to columns %s, want [id a b]", cols)
	}
	if row.Deps.Wait < ddl.Txn.Seq {
		t.Errorf("0-1-5 waits for %+v, want everything up to the DDL (%d)", row.Deps, ddl.Txn.Seq)
	}
}

// TestUntil: the run ends (the output closed, nil returned) once a
// transaction passed on brings the position to cover Until (nothing after
// it is passed on); with UntilGTID (--until-gtid), also before the first
// transaction beyond Until in its domain, which is not passed on, even if
// another domain has not reached its own position yet. A position not
// reached runs to the end of the input.
func TestUntil(t *testing.T) {
	all := entries(t)
	for _, c := range []struct {
		name      string
		from      int // first entry (from 0)
		until     string
		untilGTID bool
		sealed    bool // the relay log ends (io.EOF) after the entries; else it stays open
		want      string
	}{
		{"caught up at a position", 0, "0-1-5", false, false, "0-1-1 0-1-2 0-1-3 0-1-4 0-1-5"},
		{"caught up in two domains", 0, "0-1-8,1-1-1", false, false, "0-1-1 0-1-2 0-1-3 0-1-4 0-1-5 0-1-6 0-1-7 0-1-8 1-1-1"},
		{"a domain passes its position while the other has not reached its own", 0, "0-1-7,1-1-1", false, false,
			"0-1-1 0-1-2 0-1-3 0-1-4 0-1-5 0-1-6 0-1-7 0-1-8 1-1-1"},
		{"not reached: the end of the input", 0, "0-1-100", false, true, "0-1-1 0-1-2 0-1-3 0-1-4 0-1-5 0-1-6 0-1-7 0-1-8 1-1-1 0-1-9"},
		{"until-gtid: reached", 0, "0-1-5", true, false, "0-1-1 0-1-2 0-1-3 0-1-4 0-1-5"},
		{"until-gtid: stops before the transaction beyond in its domain", 0, "0-1-7,1-1-1", true, false, "0-1-1 0-1-2 0-1-3 0-1-4 0-1-5 0-1-6 0-1-7"},
		{"until-gtid: the first transaction is beyond", 5, "0-1-5", true, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := preparer()
			p.Until, p.UntilGTID, p.Start = gtidSet(t, c.until), c.untilGTID, "0-1-0"
			if c.from > 0 {
				p.Start = all[c.from-1].Resume
				p.Catalog = catalogAt(t, all[:c.from])
			}
			got, closed, err := run(t, p, &source{entries: all[c.from:], block: !c.sealed})
			if err != nil || !closed {
				t.Fatalf("returned %v, output closed %v; want nil, closed", err, closed)
			}
			if gtids(got) != c.want {
				t.Errorf("passed on %q, want %q", gtids(got), c.want)
			}
		})
	}
}

// catalogAt is the catalog of a target that applied entries: a preparer's
// after following their DDL.
func catalogAt(t *testing.T, es []*relaylog.Entry) *schema.Catalog {
	t.Helper()
	p := preparer()
	if _, _, err := run(t, p, &source{entries: es}); err != nil {
		t.Fatal(err)
	}
	return p.Catalog
}

// columns prints the columns of each table a prepared transaction's rows
// resolved to.
func columns(pr *stage.Prepared) string {
	var out []string
	for _, tb := range pr.Txn.Tables {
		var cols []string
		if tb != nil {
			for _, c := range tb.Columns {
				cols = append(cols, c.Name)
			}
		}
		out = append(out, strings.Join(cols, " "))
	}
	return "[" + strings.Join(out, "] [") + "]"
}
