package main

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// awaitedMetrics are metrics the alert rules use that paraply does not
// serve yet, each with what adds it. TestAlertMetricsExist fails once one
// of them is served, so that the entry goes (and the note on it in
// docs/operations.md).
var awaitedMetrics = map[string]string{}

var (
	// ruleMetric is a paraply metric named in the rules.
	ruleMetric = regexp.MustCompile(`\bparaply_[a-z0-9_]+`)
	// testSeries is an input series of the rules' promtool tests.
	testSeries = regexp.MustCompile(`(?m)^\s*- series: '(\w+)\{([^}]*)\}'$`)
	// scrapedSample is a sample line of /metrics.
	scrapedSample = regexp.MustCompile(`^(\w+)(?:\{(.*)\})? \S+$`)
	// labelName is a label's name in a series' or sample's labels.
	labelName = regexp.MustCompile(`(\w+)="(?:[^"\\]|\\.)*"`)
)

// TestAlertMetricsExist runs paraply replicate as the unit does (a named
// stream, an http address) on sandbox servers and reads its /metrics once
// it has applied a transaction: every paraply metric the alert rules name
// must be there, labelled with the stream, so that the rules cannot drift
// from the code (TestAlertRules runs them on modelled series). The
// modelled series of paraply-alerts.test.yml must carry the labels the
// scrape has, plus Prometheus's job and instance: the rules' grouping
// (sum without (worker), and on (job, instance)) is only tested if they
// do.
func TestAlertMetricsExist(t *testing.T) {
	const stream = "ops"
	p := newReplPair(t, "alerts")
	execAll(t, p.sdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)", "INSERT INTO app.t VALUES (1, 1)")
	addr := freeAddr(t)
	bg := startParaply(t, "replicate", "--source", p.src.URL(), "--target", p.tgt.URL(), "--name", stream,
		"--relay-dir", t.TempDir(), "--start-gtid", p.start, "--workers", "2", "--http", addr)
	// The stream's checkpoint is its own (not paraply.progress): wait for
	// the row itself.
	waitUntil(t, "apply app.t", 50*time.Millisecond, bg.Exited, bg.Logs, func() bool {
		var n int
		return p.tdb.QueryRow("SELECT COUNT(*) FROM app.t").Scan(&n) == nil && n == 1
	})
	time.Sleep(1200 * time.Millisecond) // a status sample of the caught-up replica

	// The label names of each metric /metrics serves, and the stream.
	scraped := map[string][]string{}
	unlabelled := map[string]bool{}
	for _, line := range strings.Split(httpGet(t, "http://"+addr+"/metrics"), "\n") {
		m := scrapedSample.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[1]
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && strings.HasPrefix(name, "paraply_batch_transactions") {
				name = base
			}
		}
		labels := labelNames(m[2], "le")
		if !strings.Contains(m[2], `stream="`+stream+`"`) {
			unlabelled[name] = true
		}
		scraped[name] = labels
	}
	if len(unlabelled) > 0 {
		t.Errorf("/metrics: no stream=%q label on %s", stream, strings.Join(slices.Sorted(maps.Keys(unlabelled)), ", "))
	}

	used := map[string]bool{}
	for _, name := range ruleMetric.FindAllString(readText(t, alertRules), -1) {
		used[name] = true
	}
	if len(used) == 0 {
		t.Fatalf("%s names no paraply metric", alertRules)
	}
	var missing []string
	for name := range used {
		_, served := scraped[name]
		why, awaited := awaitedMetrics[name]
		switch {
		case served && awaited:
			t.Errorf("paraply serves %s now: remove it from awaitedMetrics", name)
		case awaited:
			t.Logf("%s: not served yet, awaited: %s", name, why)
		case !served:
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s uses metrics a running paraply does not serve: %s", alertRules, strings.Join(missing, ", "))
	}

	// The modelled series: paraply's metrics with the scrape's labels, and
	// the job and instance Prometheus adds.
	series := testSeries.FindAllStringSubmatch(readText(t, alertTests), -1)
	if len(series) == 0 {
		t.Fatalf("%s has no input series", alertTests)
	}
	for _, s := range series {
		name, got := s[1], labelNames(s[2])
		if name == "up" {
			if !slices.Equal(got, []string{"instance", "job"}) {
				t.Errorf("%s: up{%s}: want the labels instance and job", alertTests, s[2])
			}
			continue
		}
		if _, awaited := awaitedMetrics[name]; awaited {
			continue
		}
		real, ok := scraped[name]
		if !ok {
			t.Errorf("%s models %s, which /metrics does not serve", alertTests, name)
			continue
		}
		want := append(slices.Clone(real), "instance", "job")
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %s{%s} has the labels %v; a scrape gives %v", alertTests, name, s[2], got, want)
		}
	}
}

// labelNames returns the sorted names of the labels in text (`a="x",b="y"`),
// less the ones skipped.
func labelNames(text string, skip ...string) []string {
	var names []string
	for _, m := range labelName.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(skip, m[1]) {
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}
