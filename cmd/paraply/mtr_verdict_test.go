package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The verdicts of a file.
const (
	verdictEqual        = "equal"
	verdictParaplyWorse = "paraply worse"
	verdictNativeWorse  = "native worse"
	verdictBothDiffer   = "both differ"
	verdictSkipped      = "skipped"
)

// mtrSide is how one replica stood at a checkpoint.
type mtrSide struct {
	stopped string          // why it stopped applying (or was too slow); "" while it applied everything
	diffs   []mtrDifference // how its target differed from the source
}

// firstExtra returns the first of the side's differences that other does
// not have too, "" if none.
func (s mtrSide) firstExtra(other mtrSide) string {
	for _, d := range s.diffs {
		if !slices.ContainsFunc(other.diffs, func(o mtrDifference) bool { return o.key == d.key }) {
			return d.text
		}
	}
	return ""
}

// first describes the side's first problem.
func (s mtrSide) first() string {
	if s.stopped != "" {
		return "stopped: " + s.stopped
	}
	if len(s.diffs) > 0 {
		return s.diffs[0].text
	}
	return ""
}

// mtrCheck is one checkpoint's comparison.
type mtrCheck struct {
	at              string // the line number of the statement it precedes, or "end"
	native, paraply mtrSide
}

// mtrJudge classifies a file by its checkpoints. At a checkpoint paraply
// is worse when it had stopped and the native replica had not, or its
// target differed from the source in a way the native replica's did not
// (the native replica's may differ too: a file that copies a table's
// files into the source's datadir leaves both without it, and paraply may
// still get the rows of another table wrong); and the other way round.
// When both differ in the same ways, or both stopped, both differ.
func mtrJudge(checks []mtrCheck) (verdict, detail string) {
	var paraplyWorse, nativeWorse, bothDiffer string
	first := func(v *string, s string) {
		if *v == "" {
			*v = s
		}
	}
	for _, c := range checks {
		p, n := c.paraply, c.native
		at := " (at " + c.at + ")"
		switch {
		case p.stopped != "" && n.stopped != "":
			first(&bothDiffer, p.first()+"; native: "+n.first()+at)
		case p.stopped != "":
			first(&paraplyWorse, p.first()+at)
		case n.stopped != "":
			first(&nativeWorse, "native: "+n.first()+at)
		default:
			if d := p.firstExtra(n); d != "" {
				first(&paraplyWorse, d+at)
			}
			if d := n.firstExtra(p); d != "" {
				first(&nativeWorse, "native: "+d+at)
			}
			if len(p.diffs) > 0 && len(n.diffs) > 0 {
				first(&bothDiffer, p.first()+"; native: "+n.first()+at)
			}
		}
	}
	switch {
	case paraplyWorse != "":
		return verdictParaplyWorse, paraplyWorse
	case nativeWorse != "":
		return verdictNativeWorse, nativeWorse
	case bothDiffer != "":
		return verdictBothDiffer, bothDiffer
	}
	return verdictEqual, ""
}

// mtrSummary counts the verdicts.
func mtrSummary(results []mtrResult) string {
	order := []string{verdictEqual, verdictParaplyWorse, verdictNativeWorse, verdictBothDiffer, verdictSkipped}
	count := map[string]int{}
	for _, r := range results {
		count[r.verdict]++
	}
	var parts []string
	for _, v := range order {
		parts = append(parts, fmt.Sprintf("%s %d", v, count[v]))
	}
	return strings.Join(parts, ", ")
}

// mtrWriteReport writes the verdicts as Markdown.
func mtrWriteReport(set mtrSettings, results []mtrResult, summary string, took time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# paraply and MariaDB's replica over MariaDB's test suite\n\n")
	fmt.Fprintf(&b, "binlog_format=%s, list %s, %d files, %s, %s.\n\n", set.format, set.list, len(results),
		took.Round(time.Second), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "%s\n\n", summary)
	b.WriteString("| file | verdict | checks | first paraply error / first difference |\n|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", r.file, r.verdict, r.checks, mdCell(r.detail))
	}
	if err := os.MkdirAll(filepath.Dir(set.report), 0o755); err != nil {
		return err
	}
	return os.WriteFile(set.report, []byte(b.String()), 0o644)
}

// mdCell makes text fit in one Markdown table cell.
func mdCell(s string) string {
	s = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
	return abbrev(s, 400)
}

// TestMTRJudge pins the verdicts on made-up checkpoints.
func TestMTRJudge(t *testing.T) {
	eq := mtrSide{}
	diff := func(keys ...string) mtrSide {
		var s mtrSide
		for _, k := range keys {
			s.diffs = append(s.diffs, mtrDifference{key: k, text: k + " differs"})
		}
		return s
	}
	stop := func(e string) mtrSide { return mtrSide{stopped: e} }
	for _, c := range []struct {
		name   string
		checks []mtrCheck
		want   string
	}{
		{"no checkpoints", nil, verdictEqual},
		{"equal", []mtrCheck{{native: eq, paraply: eq}, {native: eq, paraply: eq}}, verdictEqual},
		{"paraply differs", []mtrCheck{{native: eq, paraply: eq}, {native: eq, paraply: diff("t1")}}, verdictParaplyWorse},
		{"paraply stops, native differs", []mtrCheck{{native: diff("t1"), paraply: stop("DDL failed")}}, verdictParaplyWorse},
		{"paraply stops first", []mtrCheck{{native: eq, paraply: stop("x")}, {native: stop("y"), paraply: stop("x")}}, verdictParaplyWorse},
		{"native differs", []mtrCheck{{native: diff("t1"), paraply: eq}}, verdictNativeWorse},
		{"native stops", []mtrCheck{{native: stop("y"), paraply: diff("t1")}}, verdictNativeWorse},
		{"both differ", []mtrCheck{{native: diff("t1"), paraply: diff("t1")}, {native: stop("y"), paraply: stop("x")}}, verdictBothDiffer},
		{"paraply differs in more", []mtrCheck{{native: diff("t1 definition"), paraply: diff("t1 definition", "t1 rows")}}, verdictParaplyWorse},
		{"native differs in more", []mtrCheck{{native: diff("t1", "t2"), paraply: diff("t1")}}, verdictNativeWorse},
		// Statement-format DML is applied as any other: a stop on it is
		// a stop.
		{"statement format", []mtrCheck{{native: eq, paraply: eq}, {native: eq, paraply: stop("GTID 0-1-5: statement-format DML: ...")}}, verdictParaplyWorse},
	} {
		if got, detail := mtrJudge(c.checks); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, detail, c.want)
		}
	}
}
