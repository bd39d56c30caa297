package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/paraply/paraply/internal/replicate"
)

// dashboardPath is the Grafana dashboard shipped in the repository.
var dashboardPath = filepath.Join("..", "..", "dashboards", "paraply.json")

// TestDashboardQueriesExportedMetrics checks that every metric the Grafana
// dashboard queries is one paraply exports: a renamed metric must not
// leave an empty panel behind.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	data, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	known, histograms := exportedMetrics(t)
	queried, err := dashboardMetrics(data)
	if err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	if len(queried) == 0 {
		t.Fatalf("%s queries no paraply metric", dashboardPath)
	}
	if unknown := unexported(queried, known, histograms); len(unknown) > 0 {
		t.Errorf("%s queries metrics paraply does not export: %s", dashboardPath, strings.Join(unknown, ", "))
	}
	var unused []string
	for name := range known {
		if !queried[name] && !queried[name+"_bucket"] && !queried[name+"_sum"] && !queried[name+"_count"] {
			unused = append(unused, name)
		}
	}
	sort.Strings(unused)
	t.Logf("exported but not on the dashboard: %s", strings.Join(unused, ", "))
}

// TestDashboardCheckCatchesUnknownMetrics makes sure the check above
// fails when it should: a misspelt metric, a histogram suffix on a
// counter, a metric only in a template variable.
func TestDashboardCheckCatchesUnknownMetrics(t *testing.T) {
	known, histograms := exportedMetrics(t)
	bad := []byte(`{
	  "panels": [
	    {"type": "row", "panels": [
	      {"type": "timeseries", "targets": [{"expr": "rate(paraply_aplied_transactions_total[5m])"}]}
	    ]},
	    {"type": "timeseries", "targets": [
	      {"expr": "rate(paraply_batch_transactions_bucket[5m]) + rate(paraply_applied_transactions_count[5m])"}
	    ]}
	  ],
	  "templating": {"list": [{"type": "query", "query": {"query": "label_values(paraply_nope, instance)"}}]}
	}`)
	queried, err := dashboardMetrics(bad)
	if err != nil {
		t.Fatal(err)
	}
	got := unexported(queried, known, histograms)
	want := []string{"paraply_aplied_transactions_total", "paraply_applied_transactions_count", "paraply_nope"}
	if !slices.Equal(got, want) {
		t.Errorf("unknown metrics = %v, want %v", got, want)
	}
}

// TestDashboardShape checks what Grafana needs to import the dashboard
// anywhere: every panel uses the ${DS_PROMETHEUS} variable, which is a
// Prometheus datasource variable, and panel ids are unique.
func TestDashboardShape(t *testing.T) {
	data, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d: want a current one (panel datasources as objects)", d.SchemaVersion)
	}
	hasVar := false
	for _, v := range d.Templating.List {
		if v.Name == "DS_PROMETHEUS" && v.Type == "datasource" && string(v.Query) == `"prometheus"` {
			hasVar = true
		}
	}
	if !hasVar {
		t.Error(`no datasource variable DS_PROMETHEUS of type "prometheus"`)
	}
	ids := map[int]bool{}
	for _, p := range d.allPanels() {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${DS_PROMETHEUS}" {
			t.Errorf("panel %q: datasource %q, want ${DS_PROMETHEUS}", p.Title, p.Datasource.UID)
		}
		for _, tg := range p.Targets {
			if tg.Datasource.UID != "${DS_PROMETHEUS}" {
				t.Errorf("panel %q, query %s: datasource %q, want ${DS_PROMETHEUS}", p.Title, tg.RefID, tg.Datasource.UID)
			}
		}
	}
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"` // a string, or {"query": "..."}
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int        `json:"id"`
	Type       string     `json:"type"`
	Title      string     `json:"title"`
	Datasource datasource `json:"datasource"`
	Targets    []struct {
		RefID      string     `json:"refId"`
		Expr       string     `json:"expr"`
		Datasource datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // of a collapsed row
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// allPanels flattens rows.
func (d dashboard) allPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

var metricName = regexp.MustCompile(`\bparaply_[A-Za-z0-9_]*`)

// dashboardMetrics returns the paraply_ metric names in the PromQL of
// every panel's queries and of the template variables.
func dashboardMetrics(data []byte) (map[string]bool, error) {
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	add := func(promql string) {
		for _, n := range metricName.FindAllString(promql, -1) {
			names[n] = true
		}
	}
	for _, p := range d.allPanels() {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			return nil, fmt.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				return nil, fmt.Errorf("panel %q: query %s has no expr", p.Title, tg.RefID)
			}
			add(tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		var q struct {
			Query string `json:"query"`
		}
		var s string
		if json.Unmarshal(v.Query, &s) == nil {
			add(s)
		} else if json.Unmarshal(v.Query, &q) == nil {
			add(q.Query)
		}
	}
	return names, nil
}

// unexported returns, sorted, the queried names that are not exported.
// A histogram's series are its name with _bucket, _sum or _count.
func unexported(queried, known, histograms map[string]bool) []string {
	var out []string
	for name := range queried {
		if known[name] {
			continue
		}
		ok := false
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, found := strings.CutSuffix(name, suffix); found && histograms[base] {
				ok = true
			}
		}
		if !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// exportedMetrics returns every metric name paraply exports, and which of
// them are histograms: the Metrics list (some of which appear only once
// there is something to report) and whatever the collector registers.
func exportedMetrics(t *testing.T) (names, histograms map[string]bool) {
	t.Helper()
	names, histograms = map[string]bool{}, map[string]bool{}
	for _, m := range Metrics {
		names[m.name] = true
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(zeroSnapshot{}, NewWorkers(2)))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		names[f.GetName()] = true
		if f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY {
			histograms[f.GetName()] = true
		}
	}
	return names, histograms
}

// zeroSnapshot is a pipeline that has not started.
type zeroSnapshot struct{}

func (zeroSnapshot) Snapshot() Snapshot { return Snapshot{Status: replicate.Status{}} }
