package clone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// While it copies, a clone serves on the stream's --http address what
// replicate serves there afterwards, of the copy: /metrics (paraply_clone_*),
// /clone.json (its Progress) and a page at / that refreshes itself;
// /status.json says that a clone copies.

// Serve serves the clone's metrics, status and page on l until ctx is
// done.
func (c *Cloner) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // the listener is closed either way
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler serves /metrics, /clone.json, /status.json and the page.
func (c *Cloner) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	prometheus.WrapRegistererWith(prometheus.Labels{"stream": c.Stream()}, reg).MustRegister(&collector{c: c})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/clone.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c.Progress()) // a client gone changes nothing
	})
	// replicate's API is not served yet: `paraply status` (which reads
	// it) prints this instead of figures that would all be zero.
	mux.HandleFunc("/status.json", func(w http.ResponseWriter, _ *http.Request) {
		p := c.Progress()
		http.Error(w, fmt.Sprintf("paraply clone is copying the source (%s; %d/%d tables, %s/%s rows, ETA %s): "+
			"its progress is on the page and in /clone.json; replicate serves /status.json once the copy is done",
			p.Phase, p.Done, p.Total, count(p.Rows), count(p.EstRows), eta(p.ETASeconds)), http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprint(w, page(c.Progress()))
	})
	return mux
}

// page is the status page: the progress as the display shows it.
func page(p Progress) string {
	var b strings.Builder
	render(&b, p)
	return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="2"><title>paraply clone</title>` +
		`<style>body{font-family:sans-serif;margin:2em}pre{font-size:14px}</style></head><body><h1>paraply clone</h1>` +
		`<p>position ` + html.EscapeString(p.Position) + `; source commits blocked ` + fmt.Sprintf("%.3f", p.BlockedSeconds) + ` s; ` +
		`<a href="/metrics">/metrics</a>, <a href="/clone.json">/clone.json</a></p><pre>` + html.EscapeString(b.String()) + `</pre></body></html>`
}

// collector exposes the clone's progress as paraply_clone_* metrics.
type collector struct{ c *Cloner }

var (
	cloneRows      = prometheus.NewDesc("paraply_clone_rows", "Rows copied by the clone (its earlier runs included).", nil, nil)
	cloneEstRows   = prometheus.NewDesc("paraply_clone_rows_estimated", "Rows the clone copies, as the source's statistics estimate them.", nil, nil)
	cloneBytes     = prometheus.NewDesc("paraply_clone_bytes", "Bytes of rows copied by the clone (as sent to the target).", nil, nil)
	cloneChunks    = prometheus.NewDesc("paraply_clone_chunks", "Chunks the clone committed on the target.", nil, nil)
	cloneTables    = prometheus.NewDesc("paraply_clone_tables", "Tables the clone copies, by state.", []string{"state"}, nil)
	cloneRate      = prometheus.NewDesc("paraply_clone_rows_per_second", "Rows copied per second since the copy began.", nil, nil)
	cloneETA       = prometheus.NewDesc("paraply_clone_eta_seconds", "Time left at that rate (-1 while unknown).", nil, nil)
	cloneBlocked   = prometheus.NewDesc("paraply_clone_source_commits_blocked_seconds", "How long opening the snapshot blocked the source's commits (0: no lock).", nil, nil)
	cloneTableRows = prometheus.NewDesc("paraply_clone_table_rows", "Rows copied of each table being copied.", []string{"table"}, nil)
)

func (*collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cloneRows, cloneEstRows, cloneBytes, cloneChunks, cloneTables, cloneRate, cloneETA, cloneBlocked, cloneTableRows} {
		ch <- d
	}
}

func (m *collector) Collect(ch chan<- prometheus.Metric) {
	p := m.c.Progress()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(cloneRows, float64(p.Rows))
	gauge(cloneEstRows, float64(p.EstRows))
	gauge(cloneBytes, float64(p.Bytes))
	gauge(cloneChunks, float64(p.Chunks))
	busy := 0
	for _, t := range p.Tables {
		if t.Busy {
			busy++
			gauge(cloneTableRows, float64(t.Rows), t.Name)
		}
	}
	gauge(cloneTables, float64(p.Done), "done")
	gauge(cloneTables, float64(busy), "copying")
	gauge(cloneTables, float64(p.Total-p.Done-busy), "waiting")
	gauge(cloneRate, p.RowsPerSecond)
	gauge(cloneETA, p.ETASeconds)
	gauge(cloneBlocked, p.BlockedSeconds)
}
