package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/relaylog"
)

// FilesConfig says which binlog files Files reads, and where in them it
// starts and stops.
type FilesConfig struct {
	// Paths are binlog files, read in this order as one stream.
	Paths []string
	// Start, when its File is set, skips what comes before it: the files
	// listed before File, and the transactions of File that begin before
	// Offset. File is matched by base name.
	Start binlog.Pos
	// Stop says where reading ends.
	Stop Stop
	// Logger receives where reading started and stopped.
	Logger *slog.Logger
	// PartBytes bounds the memory of one transaction, as in Config.
	PartBytes int
}

// Stop is where point-in-time recovery ends: before the first transaction
// that is at or past any of the points that are set, so that the
// accident (a DROP TABLE) and everything after it are left out. Whole
// transactions only: one that reaches past a point is not applied.
type Stop struct {
	// GTIDs: a transaction is at or past one of them when it has its
	// replication domain (MariaDB) or its source UUID and tag (MySQL),
	// and a sequence number at least as high.
	GTIDs []binlog.GTID
	// Time: a transaction is at or past it when one of its events is
	// stamped at or after it (mariadb-binlog --stop-datetime stops at the
	// first such event). Binlogs stamp events in whole seconds.
	Time time.Time
	// Pos: a transaction is at or past it when it does not end at or
	// before Offset in File (matched by base name), or lies in a file
	// listed after File. Offset is a byte offset in the file, as SHOW
	// BINLOG EVENTS shows them: the Pos of the accident's GTID event, or
	// the End_log_pos of the last transaction to keep.
	Pos binlog.Pos
}

// IsZero reports whether no stop point is set.
func (s Stop) IsZero() bool { return len(s.GTIDs) == 0 && s.Time.IsZero() && s.Pos.File == "" }

// Files reads binlog files and appends their transactions to a relay
// log, as the Receiver does with a live source's stream: the same raw
// transactions, each with the GTID position after it as its resume
// position. It skips the transactions the start position holds, and ends
// at the stop point or at the end of the last file.
type Files struct {
	cfg    FilesConfig
	flavor binlog.Flavor
	paths  []string       // cfg.Paths from the start file on
	index  map[string]int // of each path in paths
	stopAt int            // index in paths of Stop.Pos.File, len(paths) if unset
	relayer
	// The large transaction whose pieces are being read: its GTID while
	// its pieces go to the relay log, or skipping while they do not.
	large    binlog.GTID
	skipping bool
}

// NewFiles reads cfg's files, which flavor wrote (see InspectFiles), into
// relay.
func NewFiles(cfg FilesConfig, flavor binlog.Flavor, relay *relaylog.Log) (*Files, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	paths, stopAt, err := cfg.span()
	if err != nil {
		return nil, err
	}
	f := &Files{cfg: cfg, flavor: flavor, paths: paths, index: map[string]int{}, stopAt: stopAt, relayer: relayer{relay: relay, logger: cfg.Logger}}
	for i, p := range paths {
		f.index[p] = i
	}
	f.status.Files = len(paths)
	f.status.InputBytes = binlog.NewFileReader(paths...).TotalBytes()
	return f, nil
}

// span returns the files to read and the index among them of the stop
// position's file (len(paths) when there is none).
func (c FilesConfig) span() (paths []string, stopAt int, err error) {
	if len(c.Paths) == 0 {
		return nil, 0, errors.New("no binlog files to read")
	}
	names := make([]string, len(c.Paths))
	for i, p := range c.Paths {
		names[i] = filepath.Base(p)
		if slices.Contains(names[:i], names[i]) {
			return nil, 0, fmt.Errorf("two binlog files are named %s: give each once", names[i])
		}
	}
	find := func(what string, p binlog.Pos) (int, error) {
		i := slices.Index(names, filepath.Base(p.File))
		if i < 0 {
			return 0, fmt.Errorf("%s %s:%d: %s is not one of the files given", what, p.File, p.Offset, p.File)
		}
		return i, nil
	}
	from, stop := 0, len(c.Paths)
	if c.Start.File != "" {
		if from, err = find("start position", c.Start); err != nil {
			return nil, 0, err
		}
	}
	if c.Stop.Pos.File != "" {
		if stop, err = find("stop position", c.Stop.Pos); err != nil {
			return nil, 0, err
		}
		if stop < from || (stop == from && c.Start.File != "" && c.Stop.Pos.Offset <= c.Start.Offset) {
			return nil, 0, errors.New("the stop position comes before the start position")
		}
	}
	return c.Paths[from:], stop - from, nil
}

// InspectFiles reads the format description that starts the first file
// cfg reads: which server flavor and version wrote it.
func InspectFiles(cfg FilesConfig) (Info, error) {
	paths, _, err := cfg.span()
	if err != nil {
		return Info{}, err
	}
	r := binlog.NewFileReader(paths[0])
	defer r.Close()
	ev, err := r.Next()
	if errors.Is(err, io.EOF) {
		return Info{}, fmt.Errorf("%s: the binlog file holds no events", paths[0])
	}
	if err != nil {
		return Info{}, err
	}
	fm, err := binlog.ParseFormat(ev)
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", paths[0], err)
	}
	return Info{Flavor: fm.Flavor, Version: fm.ServerVersion}, nil
}

// Run reads the files and appends every transaction after position start
// (a GTID set in the flavor's text form; "" means from the first file's
// beginning) up to the stop point. It returns nil once it has appended
// the last one, or when ctx is done (as the Receiver does), and an error
// naming the file and offset on damaged input.
func (f *Files) Run(ctx context.Context, start string) error {
	pos, err := mysql.ParseGTIDSet(flavorName(f.flavor), start)
	if err != nil {
		return fmt.Errorf("start position %q: %w", start, err)
	}
	// Connected stays true once the files have been read to the end: a
	// finished input is not a broken connection (the status page would
	// say so), only an error is.
	f.setConnected(true)
	r := binlog.NewFileReader(f.paths...)
	defer r.Close()
	framer := binlog.NewFramer()
	framer.PartBytes = f.cfg.PartBytes
	f.cfg.Logger.Info("reading binlog files", "files", len(f.paths), "first", f.paths[0], "after", start)
	ended := false
	for !ended {
		ev, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			ended = true
			err = framer.End()
		case err == nil:
			f.read(ev, r.BytesRead())
			err = framer.Push(ev)
		}
		if err != nil {
			return f.fail(ctx, err)
		}
		for rt := framer.Next(); rt != nil; rt = framer.Next() {
			stop, err := f.txn(ctx, rt, pos)
			if err != nil {
				return f.fail(ctx, err)
			}
			if stop {
				return nil
			}
		}
	}
	if !f.cfg.Stop.IsZero() {
		f.cfg.Logger.Warn("the files end before the stop point: every transaction in them after the start is applied")
	}
	return nil
}

// txn appends rt (a transaction, or a piece of a large one) unless it
// comes before the start or has been applied (pos holds it); stop is true
// when rt is at or past the stop point.
func (f *Files) txn(ctx context.Context, rt *binlog.RawTxn, pos mysql.GTIDSet) (stop bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err // skipping a long prefix must not outlast a stop
	}
	later := f.skipping || !f.large.IsZero() // a piece after a large transaction's first
	if f.skipping {
		f.skipping = rt.Part
		return false, nil
	}
	first := rt.Events[0].Pos
	if !later && f.cfg.Start.File != "" && filepath.Base(first.File) == filepath.Base(f.cfg.Start.File) && first.Offset < f.cfg.Start.Offset {
		f.skipping = rt.Part
		return false, nil
	}
	g := f.large
	if !later {
		if g, err = txnGTID(rt); err != nil {
			return false, err
		}
	}
	if why := f.past(rt, g, !later); why != "" {
		if err := f.relay.DiscardPartial(); err != nil {
			return false, err
		}
		f.cfg.Logger.Info("stopping before the stop point: this transaction and what follows are not applied",
			"gtid", g, "file", first.File, "offset", first.Offset, "why", why)
		return true, nil
	}
	if !later {
		one, err := mysql.ParseGTIDSet(flavorName(f.flavor), g.String())
		if err != nil {
			return false, fmt.Errorf("GTID %s at %s: %w", g, first, err)
		}
		if pos.Contain(one) {
			f.skipping = rt.Part
			return false, nil // in the backup, or applied by an earlier run
		}
	}
	_, err = f.relayPiece(ctx, rt, &f.large, pos)
	return false, err
}

// past says why rt, whose GTID is g, is at or past the stop point ("" if
// it is not); head says that rt begins its transaction (a piece of a
// large one is checked as it comes, its GTID with its first piece, its
// end with its last).
func (f *Files) past(rt *binlog.RawTxn, g binlog.GTID, head bool) string {
	s := f.cfg.Stop
	for _, at := range s.GTIDs {
		if head && g.Flavor == at.Flavor && g.Seq >= at.Seq && g.Domain == at.Domain && g.SID == at.SID && g.Tag == at.Tag {
			return "GTID at or past " + at.String()
		}
	}
	if !s.Time.IsZero() {
		for _, ev := range rt.Events {
			if t := time.Unix(int64(ev.Timestamp()), 0); !t.Before(s.Time) {
				return "an event stamped " + t.Format(time.DateTime+" MST") + ", at or after the stop time"
			}
		}
	}
	if s.Pos.File != "" && !rt.Part {
		last := rt.Events[len(rt.Events)-1]
		if i := f.index[last.Pos.File]; i > f.stopAt || (i == f.stopAt && last.Pos.Offset+int64(len(last.Data)) > s.Pos.Offset) {
			return fmt.Sprintf("it does not end at or before %s:%d", filepath.Base(s.Pos.File), s.Pos.Offset)
		}
	}
	return ""
}

// fail records err as why reading stopped, unless ctx is done: then
// stopping is what was asked for.
func (f *Files) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	f.setError(err)
	f.setConnected(false)
	return err
}

// read counts one event read from the files, read bytes so far.
func (f *Files) read(ev binlog.Event, read int64) {
	i := f.index[ev.Pos.File]
	f.mu.Lock()
	f.status.Events++
	f.status.LastEvent = time.Now()
	f.status.InputRead = read
	f.status.FilesRead = i + 1
	f.mu.Unlock()
}
