package source

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/fixtures"
	"github.com/paraply/paraply/internal/relaylog"
)

// twoFiles copies the MariaDB fixture (GTIDs 0-1-1 to 0-1-23) to two
// files: the second repeats every GTID of the first, as a binlog copied
// twice would, so everything in it is already held.
func twoFiles(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures.Root(), "internal", "binlog", "testdata", "mariadb-10.11-fidelity.000001"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"bin.000001", "bin.000002"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// relayed runs Files over cfg from start and returns the GTIDs it
// appended, with their resume positions (for the one-domain MariaDB
// fixture, the GTID itself).
func relayed(t *testing.T, cfg FilesConfig, start string) []string {
	t.Helper()
	relay, err := relaylog.Open(relaylog.Options{Dir: t.TempDir(), Sync: relaylog.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	info, err := InspectFiles(cfg)
	if err != nil {
		t.Fatalf("InspectFiles: %v", err)
	}
	f, err := NewFiles(cfg, info.Flavor, relay)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Run(ctx, start); err != nil {
		t.Fatal(err)
	}
	var got []string
	r := relay.NewReader(1)
	defer r.Close()
	for n, _ := relay.Last(); uint64(len(got)) < n; {
		e, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Flavor == binlog.FlavorMariaDB && e.Resume != e.GTID.String() {
			t.Errorf("%s: resume position %q, want the GTID itself (one domain)", e.GTID, e.Resume)
		}
		got = append(got, e.GTID.String())
	}
	if st := f.Status(); st.Transactions != int64(len(got)) || st.Files != len(f.paths) || st.InputRead > st.InputBytes {
		t.Errorf("status %+v after %d transactions", st, len(got))
	}
	return got
}

func gtids(from, to int) []string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, "0-1-"+strconv.Itoa(i))
	}
	return s
}

// lastStamp is the latest event time in path.
func lastStamp(t *testing.T, path string) time.Time {
	t.Helper()
	r := binlog.NewFileReader(path)
	defer r.Close()
	var last uint32
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return time.Unix(int64(last), 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		last = max(last, ev.Timestamp())
	}
}

// TestFilesWindow: Files appends each transaction once, from after the
// start (a GTID position or a file position) up to before the stop point
// (a GTID, a time or a file position), whole transactions only.
func TestFilesWindow(t *testing.T) {
	paths := twoFiles(t)
	second := filepath.Base(paths[1])
	// The fixture's transactions are all stamped in its last second.
	stamp := lastStamp(t, paths[0])
	for _, c := range []struct {
		name  string
		cfg   FilesConfig
		start string
		want  []string
	}{
		{"all, the copy held already", FilesConfig{}, "", gtids(1, 23)},
		{"after a start GTID", FilesConfig{}, "0-1-20", gtids(21, 23)},
		{"before a stop GTID", FilesConfig{Stop: Stop{GTIDs: []binlog.GTID{{Flavor: binlog.FlavorMariaDB, Server: 1, Seq: 6}}}}, "0-1-2", gtids(3, 5)},
		{"a stop GTID of another domain", FilesConfig{Stop: Stop{GTIDs: []binlog.GTID{{Flavor: binlog.FlavorMariaDB, Domain: 1, Seq: 6}}}}, "", gtids(1, 23)},
		{"from a file position", FilesConfig{Start: binlog.Pos{File: "bin.000001", Offset: 1084}}, "", gtids(5, 23)},
		// 0-1-5 runs from 1084 to 1529.
		{"to the end of a transaction", FilesConfig{Stop: Stop{Pos: binlog.Pos{File: "bin.000001", Offset: 1529}}}, "", gtids(1, 5)},
		{"to inside a transaction", FilesConfig{Stop: Stop{Pos: binlog.Pos{File: "bin.000001", Offset: 1528}}}, "", gtids(1, 4)},
		{"to a later file", FilesConfig{Stop: Stop{Pos: binlog.Pos{File: second, Offset: 1529}}}, "", gtids(1, 23)},
		{"from a later file", FilesConfig{Start: binlog.Pos{File: second, Offset: 4}}, "0-1-21", gtids(22, 23)},
		{"before a time", FilesConfig{Stop: Stop{Time: stamp}}, "", nil},
		{"before a later time", FilesConfig{Stop: Stop{Time: stamp.Add(time.Second)}}, "", gtids(1, 23)},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Paths = paths
			if got := relayed(t, c.cfg, c.start); !slices.Equal(got, c.want) {
				t.Errorf("appended %v, want %v", got, c.want)
			}
		})
	}
}

// TestFilesRefusesBadPositions: positions in files that are not given, and
// a stop before the start, are errors before anything is read.
func TestFilesRefusesBadPositions(t *testing.T) {
	paths := twoFiles(t)
	for _, cfg := range []FilesConfig{
		{Paths: paths, Start: binlog.Pos{File: "other.000001", Offset: 4}},
		{Paths: paths, Stop: Stop{Pos: binlog.Pos{File: "other.000001", Offset: 4}}},
		{Paths: paths, Start: binlog.Pos{File: "bin.000002", Offset: 4}, Stop: Stop{Pos: binlog.Pos{File: "bin.000001", Offset: 900}}},
		{Paths: append(paths, paths[0])},
		{},
	} {
		if _, err := NewFiles(cfg, binlog.FlavorMariaDB, nil); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// TestFilesMySQL: three consecutive MySQL binlog files (GTIDs
// 214eb71f-...:11790 to :11820) read as one stream, from after a start
// GTID set to before a stop GTID.
func TestFilesMySQL(t *testing.T) {
	const uuid = "214eb71f-96ec-11e8-ab4f-fa163e72d4ae"
	var paths []string
	for _, n := range []string{"11", "12", "13"} {
		paths = append(paths, filepath.Join(fixtures.Binlogs(), "flike__kingbus", "mysql_bin.0000"+n))
	}
	stop, err := binlog.ParseGTID(uuid + ":11815")
	if err != nil {
		t.Fatal(err)
	}
	got := relayed(t, FilesConfig{Paths: paths, Stop: Stop{GTIDs: []binlog.GTID{stop}}}, uuid+":1-11795")
	var want []string
	for i := 11796; i < 11815; i++ {
		want = append(want, uuid+":"+strconv.Itoa(i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("appended %v, want %v", got, want)
	}
}

// TestFilesStopsWithContext: a done context ends Run without an error and
// without appending, as it ends the Receiver's.
func TestFilesStopsWithContext(t *testing.T) {
	relay, err := relaylog.Open(relaylog.Options{Dir: t.TempDir(), Sync: relaylog.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	f, err := NewFiles(FilesConfig{Paths: twoFiles(t)}, binlog.FlavorMariaDB, relay)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Run(ctx, ""); err != nil || f.Status().Transactions != 0 {
		t.Errorf("Run with a done context: %v, %d transactions appended", err, f.Status().Transactions)
	}
}
