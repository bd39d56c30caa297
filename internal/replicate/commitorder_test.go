package replicate

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestCommitOrderOnTarget checks paraply's default guarantee: transactions
// commit on the target in source order, though several workers apply them
// at once. The target runs with a binlog, which lists its commits in the
// order they happened; every paraply transaction records the source GTIDs
// it applies in paraply.applied, so mariadb-binlog -v shows, commit by
// commit, which source transactions each target commit held.
//
// To give a reordering a real chance, the test holds a row lock on the
// target that the first source transaction (A) needs, and lets 39 later
// independent transactions (B) come behind it. With the order preserved, no
// B may commit before A; with --preserve-commit-order=false the Bs commit
// while A waits, which the same checks must see (so that they can fail).
func TestCommitOrderOnTarget(t *testing.T) {
	for _, c := range []struct {
		name      string
		unordered bool
		batch     int // BatchTxns; 0 = the default
	}{
		{name: "default"},
		{name: "ordered-batch1", batch: 1},
		{name: "unordered-batch1", unordered: true, batch: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := pair{
				src: sandboxtest.ForTest(t, sandbox.Options{Name: "cosrc", Binlog: true}),
				tgt: sandboxtest.ForTest(t, sandbox.Options{Name: "cotgt", ServerID: 2, Binlog: true}),
			}
			ctx := t.Context()
			// Replication starts at the source's position before the setup.
			if err := p.src.Exec(ctx, "CREATE DATABASE warmup"); err != nil {
				t.Fatal(err)
			}
			start := p.position(t)
			const rows = 40
			setup := []string{"CREATE DATABASE co", "CREATE TABLE co.t (id INT PRIMARY KEY, v INT NOT NULL)"}
			for id := 1; id <= rows; id++ {
				setup = append(setup, fmt.Sprintf("INSERT INTO co.t VALUES (%d, 0)", id))
			}
			if err := p.src.Exec(ctx, setup...); err != nil {
				t.Fatal(err)
			}
			cfg := p.config(t, Default().Mode, 4)
			cfg.StartGTID = start
			cfg.PreserveOrder = !c.unordered
			if c.batch > 0 {
				cfg.BatchTxns = c.batch
			}
			run(t, cfg) // the table and its rows reach the target

			tdb, err := p.tgt.DB("")
			if err != nil {
				t.Fatal(err)
			}
			defer tdb.Close()
			lock, err := tdb.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Rollback()
			if _, err := lock.ExecContext(ctx, "SELECT v FROM co.t WHERE id = 1 FOR UPDATE"); err != nil {
				t.Fatal(err)
			}

			first := seqNo(t, p.position(t)) + 1 // A's sequence number
			for id := 1; id <= rows; id++ {
				if err := p.src.Exec(ctx, fmt.Sprintf("UPDATE co.t SET v = v + 1 WHERE id = %d", id)); err != nil {
					t.Fatal(err)
				}
			}
			last := seqNo(t, p.position(t))
			if last-first+1 != rows {
				t.Fatalf("source GTIDs %d..%d, want %d transactions", first, last, rows)
			}

			done := make(chan error, 1)
			go func() { done <- Run(ctx, cfg) }()
			// Hold A back until every B is visible on the target (or 2 s
			// pass): a consistent read does not wait for the lock.
			ahead := 0
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && ahead < rows-1; time.Sleep(20 * time.Millisecond) {
				if err := tdb.QueryRowContext(ctx, "SELECT COUNT(*) FROM co.t WHERE id > 1 AND v > 0").Scan(&ahead); err != nil {
					t.Fatal(err)
				}
			}
			if err := lock.Rollback(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("replicate: %v", err)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("replicate did not catch up")
			}
			p.equal(t)

			commits := targetCommits(t, p.tgt)
			at := map[uint64]int{} // source sequence number -> index of its target commit
			for i, c := range commits {
				for _, seq := range c {
					if _, dup := at[seq]; dup {
						t.Errorf("source transaction %d recorded by two target commits", seq)
					}
					at[seq] = i
				}
			}
			var inversions []string
			for seq := first; seq <= last; seq++ {
				if _, ok := at[seq]; !ok {
					t.Fatalf("source transaction %d is in no target commit: %v", seq, commits)
				}
				if seq > first && at[seq] < at[seq-1] {
					inversions = append(inversions, fmt.Sprintf("%d (commit %d) before %d (commit %d)", seq, at[seq], seq-1, at[seq-1]))
				}
			}
			t.Logf("%d target commits; %d of %d later transactions committed while the first was held", len(commits), ahead, rows-1)
			if c.unordered {
				if ahead == 0 || len(inversions) == 0 {
					t.Errorf("--preserve-commit-order=false: %d transactions committed ahead, target commit order %v; want some ahead of the held first one", ahead, commits)
				}
				return
			}
			if ahead != 0 || len(inversions) != 0 {
				t.Errorf("commit order not preserved: %d transactions committed while the first was held; out of order: %v", ahead, inversions)
			}
		})
	}
}

// seqNo is the sequence number of a one-domain, one-server GTID position.
func seqNo(t *testing.T, pos string) uint64 {
	t.Helper()
	i := strings.LastIndexByte(pos, '-')
	n, err := strconv.ParseUint(pos[i+1:], 10, 64)
	if i < 0 || strings.Contains(pos, ",") || err != nil {
		t.Fatalf("GTID position %q: want one domain", pos)
	}
	return n
}

var (
	gtidLine    = regexp.MustCompile(`\sGTID \d+-\d+-\d+`)
	rowsLine    = regexp.MustCompile("^### (INSERT INTO|UPDATE|DELETE FROM) `([^`]*)`\\.`([^`]*)`")
	appliedGTID = regexp.MustCompile(`^###\s+@1='\d+-\d+-(\d+)'`)
	// The row's other GTIDs (a batch), comma-separated.
	appliedOthers = regexp.MustCompile(`^###\s+@3='([-\d,]+)'`)
)

// targetCommits reads the target's binlog with mariadb-binlog, in commit
// order, and returns for each of its transactions the sequence numbers of
// the source GTIDs it inserted into paraply.applied, as keys or in a row's
// list of others (none for the target's other transactions).
func targetCommits(t *testing.T, tgt *sandbox.Server) [][]uint64 {
	t.Helper()
	files, err := tgt.BinlogFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "mariadb-binlog", append([]string{"--verbose", "--base64-output=DECODE-ROWS"}, files...)...).Output()
	if err != nil {
		t.Fatalf("mariadb-binlog: %v", err)
	}
	var commits [][]uint64
	inApplied := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if gtidLine.MatchString(line) && strings.HasPrefix(line, "#") {
			commits = append(commits, nil)
			continue
		}
		if m := rowsLine.FindStringSubmatch(line); m != nil {
			inApplied = m[1] == "INSERT INTO" && m[2] == "paraply" && m[3] == "applied"
			continue
		}
		if !inApplied || len(commits) == 0 {
			continue
		}
		if m := appliedGTID.FindStringSubmatch(line); m != nil {
			seq, _ := strconv.ParseUint(m[1], 10, 64)
			commits[len(commits)-1] = append(commits[len(commits)-1], seq)
		}
		if m := appliedOthers.FindStringSubmatch(line); m != nil {
			for g := range strings.SplitSeq(m[1], ",") {
				seq, _ := strconv.ParseUint(g[strings.LastIndexByte(g, '-')+1:], 10, 64)
				commits[len(commits)-1] = append(commits[len(commits)-1], seq)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var paraply [][]uint64
	for _, c := range commits {
		if len(c) > 0 {
			paraply = append(paraply, c)
		}
	}
	return paraply
}
