package faults

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/sandbox"
)

// Kind is a fault the soak injects.
type Kind string

// The faults, in the order of the report.
const (
	KillParaply   Kind = "paraply-kill"
	KillTarget    Kind = "target-kill"
	RestartTarget Kind = "target-restart"
	KillSource    Kind = "source-kill"
	RestartSource Kind = "source-restart"
	DropSource    Kind = "source-drop"
	DropTarget    Kind = "target-drop"
	StallSource   Kind = "source-stall"
	StallTarget   Kind = "target-stall"
	SlowSource    Kind = "source-slow"
	SlowTarget    Kind = "target-slow"
	RelayFull     Kind = "relay-full"
	KillAfterDDL  Kind = "ddl-kill"
)

// Kinds lists every fault.
var Kinds = []Kind{KillParaply, KillTarget, RestartTarget, KillSource, RestartSource,
	DropSource, DropTarget, StallSource, StallTarget, SlowSource, SlowTarget, RelayFull, KillAfterDDL}

// Describe says what a fault does, for the report.
func (k Kind) Describe() string {
	switch k {
	case KillParaply:
		return "SIGKILL paraply, start it again"
	case KillTarget:
		return "SIGKILL the target mariadbd, restart it (crash recovery)"
	case RestartTarget:
		return "stop the target cleanly, restart it"
	case KillSource:
		return "SIGKILL the source mariadbd, restart it"
	case RestartSource:
		return "stop the source cleanly, restart it"
	case DropSource:
		return "proxy cuts every source connection and refuses new ones for 0.5-3 s"
	case DropTarget:
		return "proxy cuts every target connection and refuses new ones for 0.5-3 s"
	case StallSource:
		return "proxy forwards nothing to or from the source for 1-5 s"
	case StallTarget:
		return "proxy forwards nothing to or from the target for 1-5 s"
	case SlowSource:
		return "proxy delays every chunk to and from the source by 2-20 ms for 2-5 s"
	case SlowTarget:
		return "proxy delays every chunk to and from the target by 2-20 ms for 2-5 s"
	case RelayFull:
		return "target stalled until the relay log reaches --relay-max-bytes and receiving blocks"
	case KillAfterDDL:
		return "ALTER TABLE (add or drop a column) on a table the load writes; SIGKILL paraply as soon as it shows on the target"
	}
	return string(k)
}

// Soak injects faults at random into a running replication and checks
// after each one that paraply recovers on its own and that the target has
// every transaction the counter workload committed exactly once.
type Soak struct {
	Source, Target           *sandbox.Server
	SourceProxy, TargetProxy *Proxy
	// SourceDB and TargetDB connect to the servers directly, not through
	// the proxies.
	SourceDB, TargetDB *sql.DB
	// Paraply is the replicate process, running through the proxies.
	Paraply *Process
	Counter *Counter
	// StatusURL is paraply's /status.json; RelayDir and RelayMaxBytes its
	// relay log, for RelayFull.
	StatusURL     string
	RelayDir      string
	RelayMaxBytes int64
	Options       SoakOptions

	note string // what the last fault saw, for the log line
	ddls int    // KillAfterDDL faults so far: even adds a column, odd drops it
}

// SoakOptions bound and shape a soak.
type SoakOptions struct {
	// Faults is the number of faults to inject; Duration stops earlier if
	// it passes (0: no limit).
	Faults   int
	Duration time.Duration
	Seed     uint64
	// Kinds to inject (default Kinds), taken in a random order, each once
	// per round.
	Kinds []Kind
	// Scale multiplies the length of outages and pauses (default 1).
	Scale float64
	// RecoverTimeout bounds the wait for the target to catch up after a
	// fault (default 90 s).
	RecoverTimeout time.Duration
	// Logf, if set, receives one line per fault.
	Logf func(format string, args ...any)
}

// Result sums up the faults of one kind.
type Result struct {
	Kind      Kind
	Injected  int
	Recovered int
	// Lost and Doubled count committed source transactions missing from
	// the target, or present twice, found after faults of this kind.
	Lost, Doubled int64
	// Slowest is the longest time from the end of a fault to the target
	// holding everything committed before that moment.
	Slowest time.Duration
}

// Run injects faults until Options.Faults or Options.Duration, and returns
// the results by kind, in Kinds order. It returns an error, with what
// paraply logged, when paraply does not recover from a fault.
func (s *Soak) Run(ctx context.Context) ([]Result, error) {
	o := s.Options
	if len(o.Kinds) == 0 {
		o.Kinds = Kinds
	}
	if o.Scale <= 0 {
		o.Scale = 1
	}
	if o.RecoverTimeout <= 0 {
		o.RecoverTimeout = 90 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x50a6))
	results := map[Kind]*Result{}
	for _, k := range o.Kinds {
		results[k] = &Result{Kind: k}
	}
	var lost, doubled int64 // cumulative, from the last check
	begin := time.Now()
	var round []Kind
	// paraply must be running, caught up with the load, before the first
	// fault: one that stalls the target as paraply starts would hold it
	// in its start, and the relay log it waits on would not fill.
	if _, err := s.recover(ctx, o.RecoverTimeout); err != nil {
		return nil, s.withLogs("before the first fault: paraply did not catch up", err)
	}
	for i := 0; i < o.Faults && (o.Duration <= 0 || time.Since(begin) < o.Duration); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(round) == 0 {
			round = append(round, o.Kinds...)
			rng.Shuffle(len(round), func(a, b int) { round[a], round[b] = round[b], round[a] })
		}
		k := round[0]
		round = round[1:]
		r := results[k]
		// Let the load and replication run a while first, so that faults
		// hit at random points of the stream.
		sleep(ctx, s.scaled(o.Scale, 200, 1000, rng))
		if err := s.inject(ctx, k, o.Scale, rng); err != nil {
			return nil, fmt.Errorf("fault %d (%s): %w", i+1, k, err)
		}
		r.Injected++
		took, err := s.recover(ctx, o.RecoverTimeout)
		if err != nil {
			return nil, s.withLogs(fmt.Sprintf("fault %d (%s): paraply did not recover", i+1, k), err)
		}
		r.Recovered++
		r.Slowest = max(r.Slowest, took.check)
		l, d := took.lost-lost, took.doubled-doubled
		lost, doubled = took.lost, took.doubled
		r.Lost += l
		r.Doubled += d
		o.Logf("fault %3d %-15s recovered in %6s  committed %7d  lost %d doubled %d  %s", i+1, k, took.check.Round(10*time.Millisecond), took.committed, l, d, s.note)
		s.note = ""
	}
	out := make([]Result, 0, len(o.Kinds))
	for _, k := range Kinds {
		if r, ok := results[k]; ok {
			out = append(out, *r)
		}
	}
	return out, nil
}

// scaled is a random duration between lo and hi milliseconds, times scale.
func (s *Soak) scaled(scale float64, lo, hi int, rng *rand.Rand) time.Duration {
	ms := lo + rng.IntN(hi-lo+1)
	return time.Duration(float64(ms)*scale) * time.Millisecond
}

// inject causes fault k and undoes it (restarts what it stopped, sets the
// proxy back to Pass).
func (s *Soak) inject(ctx context.Context, k Kind, scale float64, rng *rand.Rand) error {
	restart := func(srv *sandbox.Server, kill bool) error {
		var err error
		if kill {
			err = srv.Kill()
		} else {
			err = srv.Stop()
		}
		if err != nil {
			return err
		}
		sleep(ctx, s.scaled(scale, 0, 1000, rng))
		return srv.Restart(ctx)
	}
	outage := func(p *Proxy, m Mode, lo, hi int) {
		latency := time.Duration(2+rng.IntN(19)) * time.Millisecond
		p.Set(m, latency)
		sleep(ctx, s.scaled(scale, lo, hi, rng))
		p.Set(Pass, 0)
	}
	switch k {
	case KillParaply:
		if err := s.Paraply.Kill(); err != nil {
			return err
		}
		return s.Paraply.Start()
	case KillTarget:
		return restart(s.Target, true)
	case RestartTarget:
		return restart(s.Target, false)
	case KillSource:
		return restart(s.Source, true)
	case RestartSource:
		return restart(s.Source, false)
	case DropSource:
		outage(s.SourceProxy, Drop, 500, 3000)
	case DropTarget:
		outage(s.TargetProxy, Drop, 500, 3000)
	case StallSource:
		outage(s.SourceProxy, Stall, 1000, 5000)
	case StallTarget:
		outage(s.TargetProxy, Stall, 1000, 5000)
	case SlowSource:
		outage(s.SourceProxy, Slow, 2000, 5000)
	case SlowTarget:
		outage(s.TargetProxy, Slow, 2000, 5000)
	case RelayFull:
		s.TargetProxy.Set(Stall, 0)
		how := s.waitRelayFull(ctx, 60*time.Second)
		sleep(ctx, s.scaled(scale, 200, 1000, rng))
		s.TargetProxy.Set(Pass, 0)
		if how == "" {
			return errors.New("the relay log did not fill up within 60 s with applying stalled")
		}
		s.note = "relay log full (" + how + ")"
	case KillAfterDDL:
		return s.killAfterDDL(ctx)
	default:
		return fmt.Errorf("unknown fault %q", k)
	}
	return nil
}

// killAfterDDL alters the counter's history table, which the load writes
// all along, and SIGKILLs paraply as soon as the change shows on the
// target: the restart then reads again the transactions before the DDL,
// with the table definition after it.
func (s *Soak) killAfterDDL(ctx context.Context) error {
	col := fmt.Sprintf("ddl_%d", s.ddls/2)
	ddl, visible := "ALTER TABLE soak.hist ADD COLUMN "+col+" INT NOT NULL DEFAULT 7", 1
	if s.ddls%2 == 1 {
		ddl, visible = "ALTER TABLE soak.hist DROP COLUMN "+col, 0
	}
	s.ddls++
	if _, err := s.SourceDB.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("%s: %w", ddl, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var n int
		err := s.TargetDB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.COLUMNS "+
			"WHERE TABLE_SCHEMA = 'soak' AND TABLE_NAME = 'hist' AND COLUMN_NAME = ?", col).Scan(&n)
		if err == nil && n == visible {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not on the target after 60 s", ddl)
		}
		sleep(ctx, 2*time.Millisecond)
	}
	if err := s.Paraply.Kill(); err != nil {
		return err
	}
	s.note = ddl
	return s.Paraply.Start()
}

// waitRelayFull waits until paraply says an append waits for space, or,
// if its status cannot be read, the relay directory holds nearly
// --relay-max-bytes. It says which it saw ("" if neither).
func (s *Soak) waitRelayFull(ctx context.Context, timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		blocked, ok := s.relayBlocked()
		switch {
		case ok && blocked:
			return "status"
		case !ok && s.RelayMaxBytes > 0 && dirBytes(s.RelayDir) >= s.RelayMaxBytes*9/10:
			return "disk"
		}
		sleep(ctx, 100*time.Millisecond)
	}
	return ""
}

// relayBlocked reads status.Relay.Blocked from /status.json.
func (s *Soak) relayBlocked() (blocked, ok bool) {
	if s.StatusURL == "" {
		return false, false
	}
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(s.StatusURL)
	if err != nil {
		return false, false
	}
	defer resp.Body.Close()
	var rep struct {
		Status struct {
			Relay struct {
				Blocked *bool `json:"blocked"`
			} `json:"relay"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil || rep.Status.Relay.Blocked == nil {
		return false, false
	}
	return *rep.Status.Relay.Blocked, true
}

func dirBytes(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".seg") {
			n += fi.Size()
		}
	}
	return n
}

// freshTxns is how many transactions the source must commit after a fault
// before recover looks at the target.
const freshTxns = 20

// recovery is what recover measured.
type recovery struct {
	check         time.Duration
	committed     int64
	lost, doubled int64
}

// recover waits until the target holds every counter transaction committed
// when the fault ended (its checkpoint covers the source's position of
// then), with paraply running all along, and counts what it lacks or has
// twice.
func (s *Soak) recover(ctx context.Context, timeout time.Duration) (recovery, error) {
	begin := time.Now()
	deadline := begin.Add(timeout)
	// Wait for the source to commit new transactions first: a target that
	// merely had everything from before the fault proves nothing about
	// paraply streaming again.
	for c0 := s.Counter.Committed(); s.Counter.Committed() < c0+freshTxns; {
		if time.Now().After(deadline) {
			return recovery{}, fmt.Errorf("the source committed no new transactions within %v", timeout)
		}
		sleep(ctx, 20*time.Millisecond)
	}
	acked := s.Counter.Acked()
	var pos string
	for {
		// Every transaction in acked is in this position: it is read after.
		err := s.SourceDB.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&pos)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return recovery{}, fmt.Errorf("the source does not answer: %w", err)
		}
		sleep(ctx, 100*time.Millisecond)
	}
	want, err := mysql.ParseMariadbGTIDSet(pos)
	if err != nil {
		return recovery{}, err
	}
	for {
		if exited, err := s.Paraply.Exited(); exited {
			return recovery{}, fmt.Errorf("paraply exited by itself: %w", err)
		}
		var have string
		err := s.TargetDB.QueryRowContext(ctx, "SELECT `position` FROM paraply.progress WHERE id = 1").Scan(&have)
		if err == nil {
			if got, perr := mysql.ParseMariadbGTIDSet(have); perr == nil && got.Contain(want) {
				break
			}
		}
		if time.Now().After(deadline) {
			return recovery{}, fmt.Errorf("the target's checkpoint %q does not reach the source's position %s after %v (last error: %w)", have, pos, timeout, err)
		}
		sleep(ctx, 50*time.Millisecond)
	}
	took := time.Since(begin)
	var rec recovery
	rec.check = took
	for _, a := range acked {
		rec.committed += a
	}
	rec.lost, rec.doubled, err = Check(ctx, s.TargetDB, acked)
	return rec, err
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WriteTable writes the results as a Markdown table, with a total row.
func WriteTable(w io.Writer, results []Result) error {
	var b strings.Builder
	b.WriteString("| fault | what it does | injected | recovered | lost | doubled | slowest catch-up |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|\n")
	var tot Result
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %.1f s |\n", r.Kind, r.Kind.Describe(), r.Injected, r.Recovered, r.Lost, r.Doubled, r.Slowest.Seconds())
		tot.Injected += r.Injected
		tot.Recovered += r.Recovered
		tot.Lost += r.Lost
		tot.Doubled += r.Doubled
		tot.Slowest = max(tot.Slowest, r.Slowest)
	}
	fmt.Fprintf(&b, "| **all** | | **%d** | **%d** | **%d** | **%d** | %.1f s |\n", tot.Injected, tot.Recovered, tot.Lost, tot.Doubled, tot.Slowest.Seconds())
	_, err := io.WriteString(w, b.String())
	return err
}

// withLogs is err, after what went wrong, with the end of paraply's output.
func (s *Soak) withLogs(what string, err error) error {
	return fmt.Errorf("%s: %w\n--- paraply output (end) ---\n%s", what, err, lastLines(s.Paraply.Logs(), 60))
}
