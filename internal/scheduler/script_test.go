package scheduler

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/*.txt")

// TestScripts runs the coordinator's edge cases written as scripts in
// testdata/*.txt, in the manner of raft's testdata: each command is
// followed by what it prints, after a "----" line, and the test fails
// where the output differs (go test -run TestScripts -update rewrites
// it). Blank lines and lines starting with # are kept as they are; a
// command's own comment follows a #.
//
// The commands drive one coordinator step by step with the pieces its
// Run loop is made of, so that every step prints a definite result:
//
//	start prefix=N at=POS [workers=N] [batch=N] [order]
//	    a coordinator whose sequencer starts at N (every transaction up
//	    to N committed: the checkpoint), POS being the source position
//	    after N (Config.Start); order preserves commit order.
//	admit N [on=A,B] [wait=W] [hold] [skip] [releases=P] [ddl]
//	    the preparer passes on transaction N (GTID and resume position
//	    0-1-N) waiting for A and B and everything up to W; hold marks an
//	    XA PREPARE, releases=P the XA COMMIT or ROLLBACK of the prepare
//	    P, skip one the target already has. Prints nothing.
//	dispatch
//	    hands out work while a worker is free and work is ready; prints
//	    each work as "worker I: N N ...", a transaction applied after
//	    the work's commit turn (Work.AfterTurn) marked with *.
//	commit N [N ...]
//	    the worker holding the work with transaction N reports it
//	    committed; prints the low-water mark (what a checkpoint may
//	    cover) and the sequencer's prefix (what has committed).
//	save
//	    what a progress tick saves: the low-water mark's relay index and
//	    position, how far applying has reached, and the checkpoint rows
//	    it covers (or nothing, if it has not moved).
//	end
//	    the input closes (the end of a run): Run runs, the works still
//	    out commit, and it hands out and commits whatever is left; prints
//	    what it handed out, what it saved, what it returned, and whether
//	    it closed the work channels.
//	restart
//	    a new coordinator from the last progress saved, as paraply
//	    restarts from its checkpoint (the relay log is read again from
//	    the transaction after it).
func TestScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

// runScript runs one file's commands and compares (or, with -update,
// rewrites) their output.
func runScript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var out strings.Builder
	s := &script{t: t}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		cmd := line
		if j := strings.Index(cmd, "#"); j >= 0 {
			cmd = cmd[:j]
		}
		at := i + 1
		got := s.run(strings.Fields(cmd), path, at)
		var want []string
		if i+1 < len(lines) && lines[i+1] == "----" {
			i += 2
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				want = append(want, lines[i])
			}
			i-- // the blank line, if any, is copied next
		}
		if !slices.Equal(got, want) && !*update {
			t.Errorf("%s:%d: %s\ngot:\n\t%s\nwant:\n\t%s", path, at, strings.TrimSpace(cmd),
				strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
		out.WriteString(line + "\n")
		if len(got) > 0 {
			out.WriteString("----\n" + strings.Join(got, "\n") + "\n")
			if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
				out.WriteString("\n")
			}
		}
	}
	if *update && out.String() != string(data) {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// script is the state of one script: the coordinator and the works its
// workers hold.
type script struct {
	t   *testing.T
	cfg Config
	seq *stage.Sequencer
	c   *Coordinator
	l   *loop
	// out are the works handed out and not yet committed, by worker.
	out map[int]*stage.Work
	// saves are the progress saved so far, over restarts.
	saves []Progress
	ended bool
}

// run runs one command and returns what it prints.
func (s *script) run(f []string, path string, line int) []string {
	s.t.Helper()
	fail := func(format string, args ...any) []string {
		s.t.Fatalf("%s:%d: %s: %s", path, line, strings.Join(f, " "), fmt.Sprintf(format, args...))
		return nil
	}
	if f[0] != "start" && s.c == nil {
		return fail("no coordinator: start one first")
	}
	if s.ended && f[0] != "restart" && f[0] != "start" {
		return fail("the run has ended: restart or start")
	}
	args := map[string]string{}
	var nums []uint64
	for _, a := range f[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			args[k] = v
			continue
		}
		if n, err := strconv.ParseUint(a, 10, 64); err == nil {
			nums = append(nums, n)
			continue
		}
		args[a] = ""
	}
	switch f[0] {
	case "start":
		s.cfg = Config{Start: args["at"], Workers: num(args, "workers", 1), BatchTxns: num(args, "batch", 1),
			ProgressEvery: time.Hour}
		_, s.cfg.PreserveOrder = args["order"]
		s.begin(uint64(num(args, "prefix", 0)), s.cfg.Start)
		return nil
	case "restart":
		if len(s.saves) == 0 {
			return fail("nothing saved to restart from")
		}
		p := s.saves[len(s.saves)-1]
		s.begin(p.RelayIndex, p.Position)
		return []string{fmt.Sprintf("from relay index %d at %s", p.RelayIndex, p.Position)}
	case "admit":
		if len(nums) != 1 {
			return fail("admit takes one transaction")
		}
		s.c.admit(s.prepared(nums[0], args))
		return nil
	case "dispatch":
		return s.dispatch()
	case "commit":
		var got []string
		for _, n := range nums {
			w, ok := s.holding(n)
			if !ok {
				return fail("no worker holds transaction %d", n)
			}
			s.l.committed(s.out[w])
			delete(s.out, w)
			got = append(got, fmt.Sprintf("low-water mark %d, prefix %d", s.c.lwm(), s.seq.Prefix()))
		}
		return got
	case "save":
		n := len(s.saves)
		if err := s.l.saveMoved(); err != nil {
			return fail("%v", err)
		}
		if len(s.saves) == n {
			return []string{"nothing to save"}
		}
		return []string{saved(s.saves[n])}
	case "end":
		return s.end()
	}
	return fail("unknown command")
}

// begin makes a coordinator whose sequencer starts at prefix, at the
// source position start.
func (s *script) begin(prefix uint64, start string) {
	cfg := s.cfg
	cfg.Start = start
	s.seq = stage.NewSequencer(prefix)
	s.c = NewCoordinator(cfg, s.seq)
	work := make([]chan *stage.Work, cfg.Workers) // never sent on: dispatch takes l.next
	for i := range work {
		work[i] = make(chan *stage.Work)
	}
	s.l = s.c.newLoop(work, s.save)
	s.out = map[int]*stage.Work{}
	s.ended = false
}

func (s *script) save(p Progress) error {
	s.saves = append(s.saves, p)
	return nil
}

// prepared builds transaction n as the preparer would pass it on.
func (s *script) prepared(n uint64, args map[string]string) *stage.Prepared {
	p := &stage.Prepared{Txn: &stage.Txn{Seq: n, GTID: "0-1-" + itoa(n), Bytes: 100}, Resume: "0-1-" + itoa(n)}
	if v, ok := args["on"]; ok {
		for _, o := range strings.Split(v, ",") {
			x, err := strconv.ParseUint(o, 10, 64)
			if err != nil {
				s.t.Fatalf("admit %d: on=%s: %v", n, v, err)
			}
			p.Deps.On = append(p.Deps.On, x)
		}
	}
	p.Deps.Wait = uint64(num(args, "wait", 0))
	if _, ok := args["ddl"]; ok {
		p.Txn.DDL = &stage.DDL{}
		p.Deps.Cause = deptrack.CauseDDL
	}
	_, p.Hold = args["hold"]
	_, p.Skip = args["skip"]
	p.Releases = uint64(num(args, "releases", 0))
	return p
}

// dispatch hands out what Run would at this point: work for each free
// worker while some is ready.
func (s *script) dispatch() []string {
	var got []string
	for s.l.plan() != nil {
		w := s.l.idle[len(s.l.idle)-1]
		s.out[w] = s.l.next
		got = append(got, fmt.Sprintf("worker %d: %s", w, describe(s.l.next)))
		s.l.handedOut()
	}
	if len(got) == 0 {
		return []string{"nothing handed out"}
	}
	return got
}

// holding says which worker holds the work with transaction n.
func (s *script) holding(n uint64) (int, bool) {
	for w, work := range s.out {
		for _, t := range work.Txns {
			if t.Seq == n {
				work.Worker = w
				return w, true
			}
		}
	}
	return 0, false
}

// end closes the input and runs Run: the works out commit (in stream
// order), and workers that commit at once take what Run hands out.
func (s *script) end() []string {
	s.ended = true
	ctx, cancel := context.WithTimeout(s.t.Context(), 10*time.Second)
	defer cancel()
	in := make(chan *stage.Prepared)
	close(in)
	work := make([]chan *stage.Work, s.cfg.Workers)
	for i := range work {
		work[i] = make(chan *stage.Work)
	}
	done := make(chan *stage.Work)
	var mu sync.Mutex
	var handed []uint64
	var wg sync.WaitGroup
	for i := range work {
		wg.Go(func() {
			for w := range work[i] {
				mu.Lock()
				for _, t := range w.Txns {
					handed = append(handed, t.Seq)
				}
				mu.Unlock()
				w.Worker = i
				select {
				case done <- w:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	n := len(s.saves)
	errc := make(chan error, 1)
	go func() { errc <- s.c.Run(ctx, in, work, done, s.save, nil) }()
	var outstanding []*stage.Work
	for w, work := range s.out {
		work.Worker = w
		outstanding = append(outstanding, work)
	}
	slices.SortFunc(outstanding, func(a, b *stage.Work) int { return int(a.First()) - int(b.First()) })
	var err error
	returned := false
	for _, w := range outstanding {
		select {
		case done <- w:
		case err = <-errc:
			returned = true
		}
		if returned {
			break
		}
	}
	if !returned {
		select {
		case err = <-errc:
		case <-ctx.Done():
			s.t.Fatalf("Run did not return after its input closed")
		}
	}
	var got []string
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
		got = append(got, "work channels closed")
	case <-time.After(2 * time.Second):
		got = append(got, "work channels left open")
		cancel()
		<-ended
	}
	slices.Sort(handed)
	if len(handed) > 0 {
		got = append([]string{"handed out " + join(handed)}, got...)
	}
	for _, p := range s.saves[n:] {
		got = append(got, saved(p))
	}
	if len(s.saves) == n {
		got = append(got, "nothing saved")
	}
	return append(got, fmt.Sprintf("Run returned %v", err))
}

// describe prints a work's transactions, those after its turn with a *.
func describe(w *stage.Work) string {
	var b strings.Builder
	for i, t := range w.Txns {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(itoa(t.Seq))
		if w.AfterTurn != nil && w.AfterTurn[i] {
			b.WriteString("*")
		}
	}
	return b.String()
}

// saved prints a progress saved; the checkpoint rows it covers are
// sorted, since workers commit in any order.
func saved(p Progress) string {
	covered := slices.Clone(p.Covered)
	slices.Sort(covered)
	c := strings.Join(covered, ",")
	if c == "" {
		c = "none"
	}
	return fmt.Sprintf("saved relay index %d at %s, reached %s, covering %s", p.RelayIndex, p.Position, p.Reached, c)
}

func join(ns []uint64) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = itoa(n)
	}
	return strings.Join(s, " ")
}

// num reads the integer argument k, def if absent.
func num(args map[string]string, k string, def int) int {
	v, ok := args[k]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		panic(fmt.Sprintf("%s=%s: %v", k, v, err))
	}
	return n
}
