package status

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
)

// TestTargetUnreachable is issue 39's target stopped under load: status
// said "target has everything up to …", the workers "idle 100%", and "lag
// grows with no single cause", and --workers auto went on changing the
// worker count on 0 tps samples.
//
// A sysbench load at 200 transactions a second, --workers auto; once
// caught up, the target is stopped for 15 s. Within 5 s of the stop the
// text (paraply status), the page (headless Chromium, screenshot kept),
// /status.json and /metrics say that the target is unreachable, and the
// diagnosis puts it first, with no "lag grows" beside it; the workers'
// time is waiting for the target, not idle; and the worker count does not
// move while the target is away. Restarted, the target catches up.
//
// Every surface is read as a client reads it (text, JSON by name, the
// metric's line, the page's DOM), so that the test runs unchanged against
// a paraply that shows none of it.
func TestTargetUnreachable(t *testing.T) {
	chrome := chromiumForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "tusrc", Binlog: true})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "tutgt", ServerID: 2})
	if err := src.Exec(ctx, "CREATE DATABASE warmup"); err != nil {
		t.Fatal(err)
	}
	in := startInstance(t, src, tgt, pageGTIDPosition(t, src), func(c *replicate.Config) { c.Workers = 0 })
	steadyLoad(t, ctx, src, 1000, 39)
	pageWaitFor(t, ctx, 60*time.Second, "caught up under load", func() bool {
		in.alive()
		st := in.rep.Status()
		return st.Lag < time.Second && st.Backlog < 200 && st.Scheduler.Committed > 500
	})

	if err := tgt.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	addr := strings.TrimPrefix(in.url, "http://")
	within := func(what string) {
		t.Helper()
		if d := time.Since(stopped); d > 5*time.Second {
			t.Errorf("%s said the target is unreachable %.1f s after it stopped, want within 5 s", what, d.Seconds())
		}
	}
	var raw []byte
	pageWaitFor(t, ctx, 10*time.Second, "/status.json to say the target is unreachable", func() bool {
		_, raw, _ = Fetch(http.DefaultClient, addr, DefaultWindow, 0)
		return targetJSON(raw)["connected"] == false
	})
	within("/status.json")
	if tj := targetJSON(raw); tj["since"] == nil || !strings.Contains(fmt.Sprint(tj["last_error"]), "connect") {
		t.Errorf("/status.json's target does not say since when and why: %v", tj)
	}
	var text string
	pageWaitFor(t, ctx, 10*time.Second, "paraply status to say the target is unreachable", func() bool {
		text = agreeText(t, in, 0)
		return strings.Contains(text, "target unreachable since")
	})
	within("paraply status")
	pageWaitFor(t, ctx, 10*time.Second, "/metrics to say the target is down", func() bool {
		return scrape(t, in.url).get("paraply_target_up") == 0
	})
	within("/metrics")
	shot := pageArtifact(t, "status-page-target-unreachable.png")
	loaded := time.Since(stopped)
	out, err := runChromium(ctx, chrome, "--dump-dom", "--screenshot="+shot, "--window-size=1280,1000", "--hide-scrollbars", in.url+"/")
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	t.Logf("screenshot of the page, the target stopped %.1f s before: %s", loaded.Seconds(), shot)
	pageCheckPNG(t, shot)
	dom := string(out)
	if chip := pageElement(dom, "target-state"); !strings.Contains(chip, "target unreachable since") {
		t.Errorf("the page's header does not say the target is unreachable: %q", chip)
	}
	if diag := pageElement(dom, "diagnosis"); !strings.Contains(diag, `data-cause="target_unreachable"`) || !strings.Contains(diag, "Target unreachable since") {
		t.Errorf("the page's diagnosis does not say the target is unreachable:\n%s", diag)
	}
	if loaded > 5*time.Second {
		t.Errorf("the page was loaded %.1f s after the stop, want within 5 s", loaded.Seconds())
	}

	// The rest of the 15 s: the worker count holds, and at the end the
	// diagnosis and the workers' time say why nothing is applied.
	limit := in.rep.Status().Scheduler.Limit
	for time.Since(stopped) < 15*time.Second {
		in.alive()
		if st := in.rep.Status(); st.Scheduler.Limit != limit {
			t.Errorf("%.1f s into the outage --workers auto moved from %d to %d workers (%s)",
				time.Since(stopped).Seconds(), limit, st.Scheduler.Limit, st.Scheduler.LimitReason)
			limit = st.Scheduler.Limit
		}
		time.Sleep(100 * time.Millisecond)
	}
	rep, raw, err := Fetch(http.DefaultClient, addr, DefaultWindow, 0)
	if err != nil {
		t.Fatal(err)
	}
	text = agreeText(t, in, rep.Snapshot.ID)
	t.Logf("paraply status, the target stopped %.1f s before:\n%s", time.Since(stopped).Seconds(), text)
	if len(rep.Diagnosis) == 0 || rep.Diagnosis[0].Cause != "target_unreachable" {
		t.Errorf("the diagnosis does not put the target first: %v", causes(rep))
	}
	for _, bad := range []string{"lagging", "source_idle", "keeping_up", "workers_busy"} {
		if has(rep, bad) {
			t.Errorf("with the target down the diagnosis says %s: %v", bad, causes(rep))
		}
	}
	var iv map[string]any
	var doc struct {
		Interval map[string]any `json:"interval"`
	}
	if err := json.Unmarshal(raw, &doc); err == nil {
		iv = doc.Interval
	}
	share := func(k string) float64 { f, _ := iv[k].(float64); return f }
	if share("idle_share") > 0.1 || share("target_wait_share") < 0.9 || !strings.Contains(text, "waiting for the target (unreachable) 100%") {
		t.Errorf("10 s into the outage the workers' time is idle %.2f, waiting for the target %.2f; want waiting for the target", share("idle_share"), share("target_wait_share"))
	}
	if w, _ := iv["waits"].(map[string]any); w != nil {
		for reason, v := range w {
			if s, _ := v.(map[string]any)["share"].(float64); s > 1 {
				t.Errorf("waited %s %.0f%% of the time", reason, 100*s)
			}
		}
	}

	if err := tgt.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	pageWaitFor(t, ctx, 60*time.Second, "caught up after the target came back", func() bool {
		in.alive()
		st := in.rep.Status()
		return st.Lag < time.Second && st.Backlog < 200
	})
	if text := agreeText(t, in, 0); !strings.Contains(text, "target connected since") {
		t.Errorf("the target is back and the text does not say so:\n%s", text)
	}
}

// targetJSON is /status.json's status.target, read by name, or nil.
func targetJSON(raw []byte) map[string]any {
	var doc struct {
		Status struct {
			Target map[string]any `json:"target"`
		} `json:"status"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	return doc.Status.Target
}
