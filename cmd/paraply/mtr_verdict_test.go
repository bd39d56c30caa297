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
	verdictOwnWays      = "differ apart"
	verdictBothDiffer   = "both differ"
	verdictCrashed      = "server died"
	verdictSkipped      = "skipped"
)

// mtrSide is how one replica stood at a checkpoint.
type mtrSide struct {
	stopped string          // why it stopped applying (or was too slow); "" while it applied everything
	crashed string          // its target's server died: the signal, stack and query (then stopped is "")
	diffs   []mtrDifference // how its target differed from the source
}

// extras splits the side's differences that other does not have too into
// those on an object where other differs in an aspect this side does not
// (each replica differs from the source its own way there) and the rest
// (on objects where other equals the source, or differs in fewer
// aspects), and returns the first of each.
func (s mtrSide) extras(other mtrSide) (ownWay, worse string) {
	has := func(diffs []mtrDifference, key string) bool {
		return slices.ContainsFunc(diffs, func(o mtrDifference) bool { return o.key == key })
	}
	for _, d := range s.diffs {
		switch {
		case has(other.diffs, d.key):
		case slices.ContainsFunc(other.diffs, func(o mtrDifference) bool { return o.object == d.object && !has(s.diffs, o.key) }):
			if ownWay == "" {
				ownWay = d.text
			}
		case worse == "":
			worse = d.text
		}
	}
	return ownWay, worse
}

// first describes the side's first problem.
func (s mtrSide) first() string {
	if s.crashed != "" {
		return "its server died: " + s.crashed
	}
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
// target differed from the source on an object where the native
// replica's did not (the native replica's may differ elsewhere: a file
// that copies a table's files into the source's datadir leaves both
// without it, and paraply may still get the rows of another table wrong);
// and the other way round. Where both differ from the source on an object
// in aspects the other does not share (the native replica's rows,
// paraply's definition), each differs its own way (differ apart: a default engine or DATA
// DIRECTORY that the replicas do not share with the source can make one
// replica's target differ in one way and the other's in another). When
// both differ in the same ways, or both stopped, both differ. A replica
// whose server died is neither worse nor better: the file's verdict says
// so (server died), unless paraply was worse before.
func mtrJudge(checks []mtrCheck) (verdict, detail string) {
	var paraplyWorse, crashed, nativeWorse, ownWays, bothDiffer string
	first := func(v *string, s string) {
		if *v == "" {
			*v = s
		}
	}
	for _, c := range checks {
		p, n := c.paraply, c.native
		at := " (at " + c.at + ")"
		switch {
		case p.crashed != "":
			first(&crashed, "paraply's target: "+p.crashed+at)
		case n.crashed != "":
			first(&crashed, "MariaDB's replica: "+n.crashed+at)
		case p.stopped != "" && n.stopped != "":
			first(&bothDiffer, p.first()+"; native: "+n.first()+at)
		case p.stopped != "":
			first(&paraplyWorse, p.first()+at)
		case n.stopped != "":
			first(&nativeWorse, "native: "+n.first()+at)
		default:
			own, worse := p.extras(n)
			if worse != "" {
				first(&paraplyWorse, worse+at)
			}
			if own != "" {
				first(&ownWays, own+at)
			}
			nOwn, nWorse := n.extras(p)
			if nWorse != "" {
				first(&nativeWorse, "native: "+nWorse+at)
			}
			if nOwn != "" {
				first(&ownWays, "native: "+nOwn+at)
			}
			if len(p.diffs) > 0 && len(n.diffs) > 0 {
				first(&bothDiffer, p.first()+"; native: "+n.first()+at)
			}
		}
	}
	for _, v := range []struct{ verdict, detail string }{
		{verdictParaplyWorse, paraplyWorse}, {verdictCrashed, crashed}, {verdictNativeWorse, nativeWorse},
		{verdictOwnWays, ownWays}, {verdictBothDiffer, bothDiffer},
	} {
		if v.detail != "" {
			return v.verdict, v.detail
		}
	}
	return verdictEqual, ""
}

// mtrSummary counts the verdicts.
func mtrSummary(results []mtrResult) string {
	order := []string{verdictEqual, verdictParaplyWorse, verdictNativeWorse, verdictOwnWays, verdictBothDiffer, verdictCrashed, verdictSkipped}
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
	for _, r := range results {
		for _, c := range r.crashes {
			fmt.Fprintf(&b, "\n## %s: %s's server died\n\n%s\n\n```\n%s\n```\n", r.file, c.server, c.summary, c.excerpt)
		}
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
			object, _, _ := strings.Cut(k, " ")
			s.diffs = append(s.diffs, mtrDifference{key: k, text: k + " differs", object: object})
		}
		return s
	}
	crash := mtrSide{crashed: "mariadbd got signal 11"}
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
		// Each its own way: on one object, the native replica's rows
		// differ and paraply's definition; not so where the native
		// replica equals the source on the object.
		{"differ apart", []mtrCheck{{native: diff("t1 rows"), paraply: diff("t1 definition")}}, verdictOwnWays},
		{"differ apart and worse", []mtrCheck{{native: diff("t1 rows"), paraply: diff("t1 definition", "t2 rows")}}, verdictParaplyWorse},
		{"apart, native worse elsewhere", []mtrCheck{{native: diff("t1 rows", "t2 rows"), paraply: diff("t1 definition")}}, verdictNativeWorse},
		// A server that died is its own verdict, and what follows it
		// (its replica stopped) is not paraply worse; paraply worse
		// before it still is.
		{"target died", []mtrCheck{{native: eq, paraply: eq}, {native: eq, paraply: crash}, {native: eq, paraply: crash}}, verdictCrashed},
		{"native died", []mtrCheck{{native: crash, paraply: eq}}, verdictCrashed},
		{"worse, then died", []mtrCheck{{native: eq, paraply: diff("t1")}, {native: eq, paraply: crash}}, verdictParaplyWorse},
		// Statement-format DML is applied as any other: a stop on it is
		// a stop.
		{"statement format", []mtrCheck{{native: eq, paraply: eq}, {native: eq, paraply: stop("GTID 0-1-5: statement-format DML: ...")}}, verdictParaplyWorse},
	} {
		if got, detail := mtrJudge(c.checks); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, detail, c.want)
		}
	}
}
