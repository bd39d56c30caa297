package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paraply/paraply/internal/metrics"
)

// historyLen is how many one-second samples the server keeps (10 minutes).
const historyLen = 600

// Server samples a pipeline and serves /metrics, /status.json,
// /history.json and the web page at /.
type Server struct {
	src      metrics.StatusSource
	workers  *metrics.Workers
	registry *prometheus.Registry

	mu      sync.Mutex // guards samples
	samples []Sample   // oldest first, at most historyLen
}

// NewServer serves src's state; workers are the pool's counters.
func NewServer(src metrics.StatusSource, workers *metrics.Workers) *Server {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(src, workers))
	return &Server{src: src, workers: workers, registry: reg}
}

// ErrRemoteBind is returned for a non-loopback address without consent.
var ErrRemoteBind = errors.New("the status endpoint binds to loopback addresses only unless --http-allow-remote is given")

// CheckAddr refuses a listen address that is not on loopback, unless
// allowRemote: the endpoint has no authentication.
func CheckAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--http %q: %w", addr, ErrRemoteBind)
	}
	return nil
}

// Listen opens addr after checking it.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	if err := CheckAddr(addr, allowRemote); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

// Serve samples every second and serves on l until ctx is done.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	done := make(chan struct{})
	defer close(done)
	go s.sampleLoop(ctx, done)
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) sampleLoop(ctx context.Context, done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	s.sample()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-tick.C:
			s.sample()
		}
	}
}

// sample records the current counters.
func (s *Server) sample() Sample {
	smp := takeSample(s.src.Status(), s.workers.Snapshot())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, smp)
	if len(s.samples) > historyLen {
		s.samples = append(s.samples[:0], s.samples[len(s.samples)-historyLen:]...)
	}
	return smp
}

// Report builds the status report over the last interval (from the newest
// sample at least interval old).
func (s *Server) Report(interval time.Duration) Report {
	st := s.src.Status()
	ws := s.workers.Snapshot()
	now := takeSample(st, ws)
	s.mu.Lock()
	// The interval starts at the newest sample at least interval old (or
	// the oldest there is), so that it spans at least what was asked: with
	// a sample a second, the newest sample within the interval may be a
	// few milliseconds old, and rates over a few milliseconds say nothing.
	start := now
	lagMax := now.LagSeconds
	for i := len(s.samples) - 1; i >= 0; i-- {
		start = s.samples[i]
		lagMax = max(lagMax, start.LagSeconds)
		if now.Time.Sub(start.Time) >= interval {
			break
		}
	}
	s.mu.Unlock()
	iv := between(start, now, st.AtOnce())
	iv.LagMax = lagMax
	hot := topCounts(st.Scheduler.HotTables, 5)
	return Report{Status: st, Workers: ws, Interval: iv, HotTables: hot, Diagnosis: Diagnose(st, iv, hot)}
}

// History returns the samples, oldest first.
func (s *Server) History() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

// Handler serves the endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/status.json", func(w http.ResponseWriter, r *http.Request) {
		interval := 10 * time.Second
		if v := r.URL.Query().Get("interval"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				http.Error(w, "interval: want a duration such as 10s", http.StatusBadRequest)
				return
			}
			interval = d
		}
		writeJSON(w, s.Report(interval))
	})
	mux.HandleFunc("/history.json", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, s.History())
	})
	mux.Handle("/", pageHandler())
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
