package status

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/config"
	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/workload"
)

// TestPageInBrowser replicates a sysbench load between sandboxed servers,
// serves the status page for it and loads the page in headless Chromium:
// the charts must have drawn samples of the running replication, the
// diagnosis and the header must be filled in, and the screenshot is kept as
// a test artifact ($PARAPLY_ARTIFACTS/status-page.png).
func TestPageInBrowser(t *testing.T) {
	chrome := chromiumForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	src := sandboxtest.ForTest(t, sandbox.Options{Name: "pagesrc", Binlog: true})
	tgt := sandboxtest.ForTest(t, sandbox.Options{Name: "pagetgt", ServerID: 2})
	// One transaction, so that the start position is not empty; then
	// everything after it (sbtest included) is replicated.
	if err := src.Exec(ctx, "CREATE DATABASE IF NOT EXISTS warmup"); err != nil {
		t.Fatal(err)
	}
	cfg := replicate.Default()
	cfg.Source, cfg.Target = pageEndpoint(t, src), pageEndpoint(t, tgt)
	// Workers: the default, --workers auto.
	cfg.RelayDir = filepath.Join(t.TempDir(), "relay")
	cfg.StartGTID = pageGTIDPosition(t, src)
	cfg.Heartbeat = 200 * time.Millisecond
	workers := metrics.NewWorkers(cfg.Pool())
	cfg.Observer = workers
	rep := replicate.New(cfg)
	srv := NewServer(rep, workers)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/"

	runCtx, stop := context.WithCancel(ctx)
	repDone, srvDone := make(chan error, 1), make(chan error, 1)
	go func() { repDone <- rep.Run(runCtx) }()
	go func() { srvDone <- srv.Serve(runCtx, l) }()
	defer func() {
		stop()
		if err := <-repDone; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("replicate: %v", err)
		}
		if err := <-srvDone; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	// The load: sysbench on the source for a fixed time (whatever the
	// machine's speed) while paraply follows it.
	start := time.Now()
	if err := src.CreateDatabase(ctx, "sbtest"); err != nil {
		t.Fatal(err)
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_write_only", 2, 1000, 2, 0); err != nil {
		t.Fatal(err)
	}
	loadDone := make(chan error, 1)
	go func() {
		out, err := src.Sysbench(ctx, "oltp_write_only", "--tables=2", "--table-size=1000", "--threads=4",
			"--time=8", "--events=0", "--report-interval=0", "--rand-seed=42", "run").CombinedOutput()
		if err != nil {
			err = fmt.Errorf("sysbench run: %w\n%s", err, out)
		}
		loadDone <- err
	}()

	// The page is loaded under load, once the charts have a few seconds
	// to show and the diagnosis has something to say (prepare's CREATE
	// TABLEs are DDL barriers, which it reports from then on).
	pageWaitFor(t, ctx, 20*time.Second, "5 samples of history and a diagnosis", func() bool {
		return len(srv.History()) >= 5 && len(srv.Report(10*time.Second).Diagnosis) > 0
	})
	shot := pageArtifact(t, "status-page.png")
	out, err := runChromium(ctx, chrome, "--dump-dom", "--screenshot="+shot, "--window-size=1280,1000", "--hide-scrollbars", base)
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	t.Logf("screenshot of the status page under load: %s", shot)
	pageCheckPNG(t, shot)
	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	dom := string(out)
	for _, id := range []string{"lag-chart", "throughput-chart", "utilization-chart"} {
		n, ok := pageChartPoints(dom, id)
		if !ok {
			t.Errorf("no <canvas id=%q data-points=...> in the page", id)
		} else if n < 3 {
			t.Errorf("%s drew %d data points, want at least 3", id, n)
		}
	}
	if n := strings.Count(pageElement(dom, "diagnosis"), "data-cause="); n < 1 {
		t.Errorf("the diagnosis list has no entry:\n%s", pageElement(dom, "diagnosis"))
	}
	// --workers auto (the default): how many of the pool apply at once,
	// and why, in the header.
	if w := pageElement(dom, "workers-limit"); !strings.Contains(w, "of 16 at once") || !strings.Contains(w, "title=") {
		t.Errorf("the header does not show the workers auto chose: %q", w)
	}
	if hdr := pageElement(dom, "endpoints"); !strings.Contains(hdr, src.URL()) {
		t.Errorf("the header does not show the source %s:\n%s", src.URL(), hdr)
	}
	if rate := pageElement(dom, "applied-rate"); !strings.Contains(rate, ">") || strings.Contains(rate, ">–<") {
		t.Errorf("the header shows no applied rate: %s", rate)
	}
	if strings.Contains(dom, `id="offline" class="offline">`) {
		t.Errorf("the page says paraply is not answering")
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
	t.Logf("%.1f s from the first statement of the load to the end", time.Since(start).Seconds())
}

// TestPageNotAnswering serves the page with endpoints that drop every
// connection: the page must say that paraply is not answering.
func TestPageNotAnswering(t *testing.T) {
	chrome := chromiumForTest(t)
	mux := http.NewServeMux()
	drop := func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	mux.HandleFunc("/status.json", drop)
	mux.HandleFunc("/history.json", drop)
	mux.Handle("/", pageHandler())
	hs := httptest.NewServer(mux)
	defer hs.Close()
	out, err := runChromium(t.Context(), chrome, "--dump-dom", hs.URL+"/")
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, out)
	}
	banner := pageElement(string(out), "offline")
	if !strings.Contains(banner, "paraply is not answering") || strings.Contains(banner, " hidden") {
		t.Errorf("the page does not say that paraply is not answering:\n%s", out)
	}
	if !strings.Contains(banner, "Retrying") {
		t.Errorf("the banner does not say it retries:\n%s", banner)
	}
}

// chromiumForTest finds Debian's chromium; the test fails without it (the
// browser test is part of the suite, not optional).
func chromiumForTest(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: run `apt-get install chromium` (Debian's package; the status page test drives it headless)")
	return ""
}

// runChromium runs headless Chromium with a fresh profile and nothing that
// reaches for the network, letting the page's scripts run for 5 s of
// virtual time (virtual time stands still while a request is pending, so
// the page polls about five times). It returns stdout, or on failure the
// end of stderr.
func runChromium(ctx context.Context, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	profile, err := os.MkdirTemp("", "paraply-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + profile, "--virtual-time-budget=5000",
	}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		e := stderr.Bytes()
		if len(e) > 4000 {
			e = e[len(e)-4000:]
		}
		return e, err
	}
	return stdout.Bytes(), nil
}

var (
	canvasTag = regexp.MustCompile(`<canvas\b[^>]*>`)
	attrID    = regexp.MustCompile(`\bid="([^"]*)"`)
	attrPts   = regexp.MustCompile(`\bdata-points="(\d+)"`)
)

// pageChartPoints reads the data-points attribute of the canvas id.
func pageChartPoints(dom, id string) (int, bool) {
	for _, tag := range canvasTag.FindAllString(dom, -1) {
		if m := attrID.FindStringSubmatch(tag); m == nil || m[1] != id {
			continue
		}
		m := attrPts.FindStringSubmatch(tag)
		if m == nil {
			return 0, false
		}
		n, err := strconv.Atoi(m[1])
		return n, err == nil
	}
	return 0, false
}

// pageElement returns the serialized element with the given id, up to its
// closing tag (elements of the same name must not nest in it).
func pageElement(dom, id string) string {
	i := strings.Index(dom, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	open := strings.LastIndex(dom[:i], "<")
	name := dom[open+1:]
	name = name[:strings.IndexAny(name, " >")]
	end := strings.Index(dom[open:], "</"+name+">")
	if end < 0 {
		return dom[open:]
	}
	return dom[open : open+end+len(name)+3]
}

// pageCheckPNG fails unless path is a PNG of a drawn page: a reasonable
// size and more than a handful of colours.
func pageCheckPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < 640 || b.Dy() < 480 {
		t.Fatalf("screenshot %s is %dx%d", path, b.Dx(), b.Dy())
	}
	colours := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < 16 {
		t.Fatalf("screenshot %s has %d colours: the page did not draw", path, len(colours))
	}
}

// pageArtifact is where the screenshot name goes: $PARAPLY_ARTIFACTS when
// set (CI keeps it), else the test's temporary directory.
func pageArtifact(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("PARAPLY_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func pageWaitFor(t *testing.T, ctx context.Context, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("gave up waiting for %s after %s", what, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func pageEndpoint(t *testing.T, s *sandbox.Server) config.Endpoint {
	t.Helper()
	ep, err := config.ParseEndpoint(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func pageGTIDPosition(t *testing.T, s *sandbox.Server) string {
	t.Helper()
	db, err := s.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	if pos == "" {
		t.Fatal(fmt.Errorf("%s: empty @@gtid_binlog_pos", s.Name))
	}
	return pos
}
