package status

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestStatusAgrees is issue 31 ("status that disagrees with itself"): two
// pipelines replicate a steady sysbench load, one with --workers auto and
// one also with --delay 3s, and for each, at one snapshot, `paraply
// status`'s text, /status.json, /metrics and the status page (headless
// Chromium) must show the same applied rate, lag (and lag beyond the
// delay) and worker time shares, over the same stated window.
//
// They read the same snapshot: /metrics takes a fresh one and says its
// number (paraply_status_snapshot); the text (status.Fetch, as `paraply
// status --snapshot N`), the JSON and the page (/?snapshot=N) are asked
// for that one. So the numbers are not close but equal: the JSON, the
// metrics' gauges and the page's data-value attributes exactly, and what
// the text and the page print within the rounding of what they print
// (one unit of the last digit printed: Go rounds a tie to even, and
// JavaScript's toFixed up). The counters in /metrics give the same as the
// gauges over the window (their increase between the snapshots at its two
// ends: the PromQL dashboards/README.md gives), to float rounding.
//
// Before any load, the text says what is received and when the
// checkpoint was saved in words, never "-" or "never"; under the load the
// workers table has the rows of the workers the limit allows, and says
// how many more the pool has.
func TestStatusAgrees(t *testing.T) {
	chrome := chromiumForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "agsrc", Binlog: true})
	tgts := []*sandbox.Server{
		sandboxtest.ForTest(t, sandbox.Options{Name: "agtgt1", ServerID: 2}),
		sandboxtest.ForTest(t, sandbox.Options{Name: "agtgt2", ServerID: 3}),
	}
	if err := src.Exec(ctx, "CREATE DATABASE warmup"); err != nil {
		t.Fatal(err)
	}
	start := pageGTIDPosition(t, src)
	const delay = 3 * time.Second
	names := []string{"auto", "auto, --delay 3s"}
	ins := []*instance{
		startInstance(t, src, tgts[0], start, func(c *replicate.Config) { c.Workers = 0 }),
		startInstance(t, src, tgts[1], start, func(c *replicate.Config) { c.Workers, c.Delay, c.ServerID = 0, delay, 4142 }),
	}

	// Started, nothing received yet: positions and the checkpoint in words.
	for i, in := range ins {
		pageWaitFor(t, ctx, 30*time.Second, names[i]+" started", func() bool {
			in.alive()
			// The server samples from before the start too: the report
			// read must be of a sample taken after it.
			started, h := in.rep.Status().Started, in.srv.History()
			return !started.IsZero() && len(h) >= 2 && h[len(h)-1].Time.After(started)
		})
		text := agreeText(t, in, 0)
		for _, bad := range []string{"up to -", " - (", "(-:", "never"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s, just started: the text has %q:\n%s", names[i], bad, text)
			}
		}
		if !strings.Contains(text, "received up to nothing yet since start") || !strings.Contains(text, "(checkpoint as found at start") {
			t.Errorf("%s, just started: the text does not say that nothing was received or saved yet, and since when:\n%s", names[i], text)
		}
	}

	// The load: sysbench at a steady rate.
	steadyLoad(t, ctx, src, 2000, 31)
	for i, in := range ins {
		pageWaitFor(t, ctx, 60*time.Second, names[i]+" caught up", func() bool {
			in.alive()
			st := in.rep.Status()
			// With --delay, what the delay holds back is a backlog on
			// purpose.
			return st.LagBeyondDelay() < 300*time.Millisecond && st.Lag > 0 && (st.Delay > 0 || st.Backlog < 200)
		})
	}

	for i, in := range ins {
		agreeAt(t, ctx, chrome, in, names[i], i == 1)
	}
}

// agreeAt reads one pipeline's figures in the four places at one snapshot
// and compares them (see TestStatusAgrees).
func agreeAt(t *testing.T, ctx context.Context, chrome string, in *instance, name string, delayed bool) {
	t.Helper()
	// /metrics, read every 150 ms for 12 s: each read is a snapshot, and
	// the last one's window starts at one of them or at one of the
	// server's own, a second apart.
	byID := map[int64]promSample{}
	var last promSample
	for end := time.Now().Add(12 * time.Second); time.Now().Before(end); time.Sleep(150 * time.Millisecond) {
		in.alive()
		m := scrape(t, in.url)
		byID[int64(m.get("paraply_status_snapshot"))] = m
		last = m
	}
	id := int64(last.get("paraply_status_snapshot"))
	rep, _, err := Fetch(http.DefaultClient, strings.TrimPrefix(in.url, "http://"), DefaultWindow, id)
	if err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	if err := WriteText(&tb, rep); err != nil {
		t.Fatal(err)
	}
	text := tb.String()
	shot := pageArtifact(t, "status-page-"+strings.NewReplacer(",", "", " ", "-").Replace(name)+".png")
	out, err := runChromium(ctx, chrome, "--dump-dom", "--screenshot="+shot, "--window-size=1280,1000", "--hide-scrollbars", fmt.Sprintf("%s/?snapshot=%d", in.url, id))
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	t.Logf("%s: screenshot of the page at snapshot %d: %s", name, id, shot)
	dom := string(out)
	iv := rep.Interval
	t.Logf("%s, snapshot %d: applied %.1f/s, lag %.3f s (beyond the delay %.3f s), exec %.3f turn %.3f commit %.3f idle %.3f of %.2f workers, over %.1f s; limit %d (%s)\n%s",
		name, id, iv.AppliedRate, iv.LagEnd, iv.LagBeyondDelay, iv.ExecShare, iv.TurnShare, iv.CommitShare, iv.IdleShare, iv.WorkersAllowed, iv.Seconds,
		rep.Status.Scheduler.Limit, rep.Status.Scheduler.LimitReason, text)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(name+": "+format, args...)
	}

	// The same snapshot everywhere.
	if rep.Snapshot.ID != id {
		fail("/status.json?snapshot=%d is snapshot %d", id, rep.Snapshot.ID)
	}
	if !strings.Contains(text, fmt.Sprintf("snapshot %d,", id)) {
		fail("the text does not name snapshot %d", id)
	}
	if got := attr(pageElement(dom, "snapshot"), "data-id"); got != strconv.FormatInt(id, 10) {
		fail("the page shows snapshot %q, want %d:\n%s", got, id, pageElement(dom, "snapshot"))
	}
	if got := last.get("paraply_status_snapshot_timestamp_seconds"); got != float64(rep.Snapshot.Time.UnixMicro())/1e6 {
		fail("/metrics' snapshot was taken at %v, /status.json's at %v", got, rep.Snapshot.Time)
	}

	// The window, stated in each.
	if iv.WindowSeconds != 10 || iv.Seconds < 9.5 || iv.Seconds > 10.5 {
		fail("window %v s asked, %v s covered; want 10", iv.WindowSeconds, iv.Seconds)
	}
	if last.get("paraply_status_window_seconds") != iv.Seconds {
		fail("/metrics' window %v s, /status.json's %v s", last.get("paraply_status_window_seconds"), iv.Seconds)
	}
	if !strings.Contains(text, "rates and shares over the last 10 s") || !strings.Contains(text, "worker time, last 10 s") {
		fail("the text does not say its window is the last 10 s")
	}
	if !strings.Contains(pageElement(dom, "applied-window"), "over the last 10 s") || !strings.Contains(pageElement(dom, "throughput-sub"), "over 10 s") {
		fail("the page does not say its window is the last 10 s: %s", pageElement(dom, "applied-window"))
	}

	// Applied rate.
	applied := iv.AppliedRate
	same(t, name+": applied rate in /metrics", last.get("paraply_status_applied_per_second"), applied, 0)
	same(t, name+": applied rate on the page (data-value)", num(t, attr(pageElement(dom, "applied-rate"), "data-value")), applied, 0)
	same(t, name+": applied rate on the page", num(t, inner(pageElement(dom, "applied-rate"))), applied, rateUnit(applied))
	same(t, name+": applied rate in the text", num(t, find(t, text, `(?m)^applied ([\d,.]+)/s`)), applied, rateUnit(applied))
	if applied < 50 {
		fail("applied %.1f/s under a load of 200 transactions a second", applied)
	}

	// Lag, and with --delay the part beyond it.
	lag := iv.LagEnd
	same(t, name+": lag in /status.json's status", rep.Status.Lag.Seconds(), lag, 0)
	same(t, name+": lag in /metrics", last.get("paraply_lag_seconds"), lag, 0)
	same(t, name+": lag on the page (data-value)", num(t, attr(pageElement(dom, "lag"), "data-value")), lag, 0)
	same(t, name+": lag on the page", secs(t, inner(pageElement(dom, "lag"))), lag, lagUnit(lag))
	same(t, name+": lag in the text", secs(t, find(t, text, `(?m)^lag ([\d.]+ m?s)`)), lag, lagUnit(lag))
	beyond := iv.LagBeyondDelay
	same(t, name+": lag beyond the delay in /metrics", last.get("paraply_lag_beyond_delay_seconds"), beyond, 0)
	same(t, name+": lag beyond the delay on the page (data-value)", num(t, attr(pageElement(dom, "lag-delay"), "data-value")), beyond, 0)
	if delayed {
		// Behind by the delay on purpose: a transaction is applied at its
		// source second plus 3 s, so the lag is 2-3 s and more, not 0 ms.
		if lag < 2 {
			fail("lag %.3f s with --delay 3s under load: the delay is part of how far the target is behind", lag)
		}
		page := inner(pageElement(dom, "lag-delay"))
		if !strings.Contains(page, "--delay 3.0 s, beyond it "+lagText(beyond)) {
			fail("the page's header does not say the delay and the lag beyond it: %q", page)
		}
		if want := lagLine(iv); !strings.Contains(text, want) {
			fail("the text does not say %q", want)
		}
		advice := ""
		for _, f := range rep.Diagnosis {
			if f.Cause == "delay" {
				advice = f.Advice
			}
		}
		if advice != delayAdvice(lag, iv.DelaySeconds) || !strings.Contains(advice, lagText(lag)) || !strings.Contains(text, advice) ||
			!strings.Contains(pageElement(dom, "diagnosis"), htmlEscape(advice)) {
			fail("the diagnosis does not say the lag %s and how much of it the delay is, the same in the text and on the page: %q", lagText(lag), advice)
		}
	} else if lag >= 1 {
		fail("lag %.3f s: not keeping up with 200 transactions a second", lag)
	}

	// Worker time shares, of the workers allowed.
	for _, s := range []struct {
		state, text string
		v           float64
	}{{"exec", "exec", iv.ExecShare}, {"turn", "commit-turn wait", iv.TurnShare}, {"commit", "commit", iv.CommitShare}, {"idle", "idle", iv.IdleShare}} {
		what := name + ": " + s.state + " share"
		same(t, what+" in /metrics", last.get(`paraply_status_worker_time_share{state="`+s.state+`"}`), s.v, 0)
		el := pageElement(dom, "share-"+s.state)
		same(t, what+" on the page (data-value)", num(t, attr(el, "data-value")), s.v, 0)
		same(t, what+" on the page", num(t, strings.TrimSuffix(inner(el), "%"))/100, s.v, 0.01)
		same(t, what+" in the text", num(t, find(t, text, `worker time, last [^\n]*?\b`+s.text+` (\d+)%`))/100, s.v, 0.01)
	}
	same(t, name+": busy share", iv.BusyShare, iv.ExecShare+iv.TurnShare+iv.CommitShare, 1e-12)
	same(t, name+": busy share on the page", num(t, attr(pageElement(dom, "share-busy"), "data-value")), iv.BusyShare, 0)
	if iv.ExecShare <= 0 || iv.IdleShare >= 1 {
		fail("workers did nothing while applying %.0f/s", applied)
	}

	// The counters over the window give the gauges: the PromQL of
	// dashboards/README.md, increase() over the window's two ends. The
	// end is the /metrics read; the start is a snapshot /metrics may not
	// have been read at (the server's own tick), so its counters come
	// from /history.json, which has every snapshot's, the same as
	// /metrics served for those it was read at.
	hist := history(t, in.url)
	for sid, m := range byID {
		h, ok := hist[sid]
		if !ok {
			continue // dropped from the history, or not taken for it
		}
		for metric, v := range map[string]float64{
			"paraply_applied_transactions_total":           float64(h.Applied),
			`paraply_worker_seconds_total{state="exec"}`:   h.ExecSecs,
			`paraply_worker_seconds_total{state="turn"}`:   h.TurnSecs,
			`paraply_worker_seconds_total{state="commit"}`: h.CommitSecs,
			"paraply_worker_capacity_seconds_total":        h.CapacitySecs,
			"paraply_status_snapshot_timestamp_seconds":    float64(h.Time.UnixMicro()) / 1e6,
		} {
			same(t, fmt.Sprintf("%s: snapshot %d: %s in /metrics and /history.json", name, sid, metric), m.get(metric), v, 0)
		}
	}
	var from *Sample
	for _, h := range hist {
		if h.Time.Equal(iv.From) {
			from = &h
		}
	}
	if from == nil {
		fail("/history.json has no snapshot at %v, where the window starts", iv.From)
	} else {
		// The interval is measured on the monotonic clock, which the
		// JSON's times do not carry: they agree to a microsecond.
		same(t, name+": the window between the snapshots", rep.Snapshot.Time.Sub(from.Time).Seconds(), iv.Seconds, 1e-6)
		same(t, name+": increase(paraply_applied_transactions_total) / window",
			(last.get("paraply_applied_transactions_total")-float64(from.Applied))/iv.Seconds, applied, 1e-9*applied)
		capacity := last.get("paraply_worker_capacity_seconds_total") - from.CapacitySecs
		for _, s := range []struct {
			state string
			start float64
			v     float64
		}{{"exec", from.ExecSecs, iv.ExecShare}, {"turn", from.TurnSecs, iv.TurnShare}, {"commit", from.CommitSecs, iv.CommitShare}} {
			same(t, name+": increase(paraply_worker_seconds_total{state="+s.state+"}) / increase(paraply_worker_capacity_seconds_total)",
				(last.get(`paraply_worker_seconds_total{state="`+s.state+`"}`)-s.start)/capacity, s.v, 1e-9)
		}
	}

	// Positions in words, and the workers the limit allows.
	for _, bad := range []string{"up to -", " - (", "(-:", "never"} {
		if strings.Contains(text, bad) {
			fail("the text has %q", bad)
		}
	}
	if got := inner(pageElement(dom, "received-up-to")); got != htmlEscape(rep.Progress.Received) || !strings.Contains(text, "received up to "+rep.Progress.Received) {
		fail("received up to %q on the page, %q in the JSON", got, rep.Progress.Received)
	}
	p := rep.Pool
	if p.Size != 16 || p.Allowed != rep.Status.Scheduler.Limit || len(rep.Workers) != p.Allowed || p.Others != p.Size-p.Allowed {
		fail("pool %+v, %d rows, limit %d: want the rows of the workers the limit allows", p, len(rep.Workers), rep.Status.Scheduler.Limit)
	}
	if rows := strings.Count(pageElement(dom, "workers"), "data-worker="); rows != p.Allowed {
		fail("the page's workers table has %d rows, the limit allows %d", rows, p.Allowed)
	}
	if rows := len(regexp.MustCompile(`(?m)^ +\d+ +\d+ +\d+ +\d+% `).FindAllString(text, -1)); rows != p.Allowed {
		fail("the text's workers table has %d rows, the limit allows %d", rows, p.Allowed)
	}
	if line := othersText(p, true); !strings.Contains(text, line) || !strings.Contains(pageElement(dom, "pool-others"), line) {
		fail("the text and the page do not say %q", line)
	}
	// The charts' axes tell their ticks apart.
	for _, id := range []string{"lag-chart", "throughput-chart", "utilization-chart"} {
		ls := strings.Split(canvasAttr(dom, id, "data-y-labels"), "|")
		for i := 1; i < len(ls); i++ {
			if ls[i] == ls[i-1] {
				fail("%s's y labels %v repeat", id, ls)
			}
		}
		if len(ls) < 3 {
			fail("%s's y labels: %v", id, ls)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
}

// agreeText prints the report of snapshot id (0: the newest) as `paraply
// status` does.
func agreeText(t *testing.T, in *instance, id int64) string {
	t.Helper()
	rep, _, err := Fetch(http.DefaultClient, strings.TrimPrefix(in.url, "http://"), DefaultWindow, id)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// promSample is one read of /metrics: values by metric name and labels as
// printed (name{label="value"}), the default stream's label left out.
type promSample map[string]float64

// withoutDefaultStream drops stream="default" from a printed series.
var withoutDefaultStream = strings.NewReplacer(`{stream="default"}`, "", `,stream="default"`, "", `stream="default",`, "")

var promLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$`)

func scrape(t *testing.T, url string) promSample {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	m := promSample{}
	for _, l := range strings.Split(string(body), "\n") {
		if s := promLine.FindStringSubmatch(l); s != nil {
			v, err := strconv.ParseFloat(s[2], 64)
			if err == nil {
				m[withoutDefaultStream.Replace(s[1])] = v
			}
		}
	}
	return m
}

func (m promSample) get(name string) float64 {
	v, ok := m[name]
	if !ok {
		return math.NaN()
	}
	return v
}

// history reads /history.json: every snapshot's counters, by number.
func history(t *testing.T, url string) map[int64]Sample {
	t.Helper()
	resp, err := http.Get(url + "/history.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var samples []Sample
	if err := json.NewDecoder(resp.Body).Decode(&samples); err != nil {
		t.Fatal(err)
	}
	out := map[int64]Sample{}
	for _, s := range samples {
		out[s.ID] = s
	}
	return out
}

// same fails unless got is want within tol.
func same(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s: %v, want %v (within %v)", what, got, want, tol)
	}
}

// rateUnit is the unit of the last digit rate and fmtRate print.
func rateUnit(r float64) float64 {
	if r < 10 {
		return 0.1
	}
	return 1
}

// lagUnit is the unit of the last digit lagText and fmtLag print.
func lagUnit(s float64) float64 {
	if s < 1 {
		return 0.001
	}
	return 0.1
}

func find(t *testing.T, text, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, text)
	}
	return m[1]
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
	if err != nil {
		t.Errorf("not a number: %q", s)
		return math.NaN()
	}
	return v
}

// secs reads "12 ms" or "2.7 s".
func secs(t *testing.T, s string) float64 {
	t.Helper()
	if v, ok := strings.CutSuffix(strings.TrimSpace(s), " ms"); ok {
		return num(t, v) / 1000
	}
	return num(t, strings.TrimSuffix(strings.TrimSpace(s), " s"))
}

var attrRE = map[string]*regexp.Regexp{}

// attr is the value of the attribute name of the first tag of el.
func attr(el, name string) string {
	re, ok := attrRE[name]
	if !ok {
		re = regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `="([^"]*)"`)
		attrRE[name] = re
	}
	tag := el
	if i := strings.Index(el, ">"); i >= 0 {
		tag = el[:i]
	}
	if m := re.FindStringSubmatch(tag); m != nil {
		return m[1]
	}
	return ""
}

// canvasAttr is the attribute name of the canvas id.
func canvasAttr(dom, id, name string) string {
	for _, tag := range canvasTag.FindAllString(dom, -1) {
		if attr(tag, "id") == id {
			return attr(tag, name)
		}
	}
	return ""
}

// inner is the text of an element without children.
func inner(el string) string {
	i, j := strings.Index(el, ">"), strings.LastIndex(el, "</")
	if i < 0 || j < i {
		return ""
	}
	return el[i+1 : j]
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
