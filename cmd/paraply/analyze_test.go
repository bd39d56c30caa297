package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/analyze"
	"github.com/paraply/paraply/internal/fixtures"
)

// TestAnalyzeOutputs runs paraply analyze on real MySQL 8 binlogs and checks
// the JSON shape the issue promises, and that --html writes a
// self-contained page with the charts.
func TestAnalyzeOutputs(t *testing.T) {
	files := []string{fixtures.Binlog("rust-us__mysql-cdc-rs/binlog.000693"), fixtures.Binlog("rust-us__mysql-cdc-rs/binlog.000694")}
	html := filepath.Join(t.TempDir(), "report.html")
	// The files create their tables with CREATE TABLE IF NOT EXISTS, which
	// keeps a table that already exists: the schema says that the
	// database was empty at the start, so their definitions are the ones
	// in the stream.
	schemaFile := filepath.Join(t.TempDir(), "schema.sql")
	if err := os.WriteFile(schemaFile, []byte("CREATE DATABASE hdb_meta;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd := paraply(append([]string{"analyze", "--json", "--html", html, "--schema-file", schemaFile}, files...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("analyze: %v\n%s", err, errOut.String())
	}
	var rep struct {
		Transactions int64 `json:"transactions"`
		Modes        map[string]struct {
			CriticalPath   int64              `json:"critical_path"`
			AvgParallelism float64            `json:"avg_parallelism"`
			Speedup        map[string]float64 `json:"speedup"`
			Barriers       map[string]int64   `json:"barriers"`
			Limit          string             `json:"limit"`
		} `json:"modes"`
		HotKeys        []json.RawMessage `json:"hot_keys"`
		Recommendation string            `json:"recommendation"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out.String())
	}
	if rep.Transactions != 663+418 {
		t.Errorf("transactions = %d, want %d", rep.Transactions, 663+418)
	}
	for _, m := range []string{"serial", "database", "commit-order", "writeset", "writeset-session"} {
		mr, ok := rep.Modes[m]
		if !ok {
			t.Fatalf("mode %s missing", m)
		}
		for _, w := range []string{"1", "2", "4", "8", "16", "32"} {
			if _, ok := mr.Speedup[w]; !ok {
				t.Errorf("%s: no speedup for %s workers", m, w)
			}
		}
		if mr.CriticalPath <= 0 || mr.AvgParallelism <= 0 {
			t.Errorf("%s: critical path %d, parallelism %v", m, mr.CriticalPath, mr.AvgParallelism)
		}
		if !slices.Contains([]string{analyze.LimitDependencies, analyze.LimitBatching, analyze.LimitCommitOrder, analyze.LimitCores, analyze.LimitStatements}, mr.Limit) {
			t.Errorf("%s: limit %q, want what caps its speedup", m, mr.Limit)
		}
	}
	if got := rep.Modes["serial"].CriticalPath; got != rep.Transactions {
		t.Errorf("serial critical path %d, want %d", got, rep.Transactions)
	}
	if rep.Modes["writeset"].Barriers["ddl"] != 280 {
		t.Errorf("writeset ddl barriers = %d, want 280 (140 per file)", rep.Modes["writeset"].Barriers["ddl"])
	}
	if rep.Recommendation == "" || len(rep.HotKeys) == 0 {
		t.Errorf("no recommendation or hot keys: %q %d", rep.Recommendation, len(rep.HotKeys))
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "speedup by workers", "parallelism histogram", "writeset-session"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	if strings.Contains(string(page), "http://") || strings.Contains(string(page), "https://") {
		if !strings.Contains(string(page), `xmlns="http://www.w3.org/2000/svg"`) {
			t.Errorf("HTML report refers to an external resource")
		}
	}
}

// TestAnalyzeDamagedInput: a truncated binlog gives an error naming the
// file and offset and exit status 1; with --partial the analysis of what
// was read before the damage is printed too.
func TestAnalyzeDamagedInput(t *testing.T) {
	src, err := os.ReadFile(fixtures.Binlog("osheroff__mysql-binlog-connector-java/mysql-bin.checksum-crc32"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.000001")
	if err := os.WriteFile(cut, src[:len(src)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, partial := range []bool{false, true} {
		args := []string{"analyze", "--json", cut}
		if partial {
			args = append(args, "--partial")
		}
		var out, errOut bytes.Buffer
		cmd := paraply(args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if err == nil || cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("partial=%v: exit %v, want status 1", partial, err)
		}
		if !strings.Contains(errOut.String(), cut+" at offset") || !strings.Contains(errOut.String(), "truncated") {
			t.Errorf("partial=%v: error does not name the file and offset: %s", partial, errOut.String())
		}
		var rep struct {
			Transactions int64  `json:"transactions"`
			Error        string `json:"error"`
		}
		jerr := json.Unmarshal(out.Bytes(), &rep)
		if partial && (jerr != nil || rep.Transactions == 0 || rep.Error == "") {
			t.Errorf("--partial: want the analysis of what was read and the error in it, got %v %+v", jerr, rep)
		}
		if !partial && out.Len() != 0 {
			t.Errorf("without --partial nothing should be printed on stdout, got %q", out.String())
		}
	}
}
