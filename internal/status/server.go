package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/metrics"
)

const (
	// sampleEvery is how often the server samples on its own: the
	// charts' points.
	sampleEvery = time.Second
	// historyKept is how long samples are kept: the charts' history, and
	// the snapshots a report can still be asked for.
	historyKept = 10 * time.Minute
	// historyLen bounds the samples kept, whatever asks for fresh ones: a
	// tick a second and, say, a page and a Prometheus polling, keep 10
	// minutes.
	historyLen = 2400
	// freshFor is how old the newest sample may be and still serve as a
	// request's snapshot: requests at the same moment (the page's and a
	// scrape) share one.
	freshFor = 50 * time.Millisecond
)

// DefaultWindow is the window of the figures when none is asked for: the
// page's, `paraply status`'s and the paraply_status_* metrics'.
const DefaultWindow = 10 * time.Second

// Server samples a pipeline and serves /metrics, /status.json,
// /history.json and the web page at /.
//
// Every figure it serves is of a sample it took (a snapshot), not
// recomputed from the pipeline's state by each view: a request for the
// newest (/metrics, /status.json, the page, `paraply status`) takes a
// fresh one, numbered, and any view of that number later (?snapshot=N,
// kept 10 minutes) shows the same figures. The server also samples every
// second on its own, for the charts.
type Server struct {
	src      metrics.StatusSource
	workers  *metrics.Workers
	registry *prometheus.Registry
	// version is Report.Version (SetVersion); set before Serve.
	version string

	// sampling serializes taking samples, so that they are appended in
	// the order they were taken.
	sampling sync.Mutex
	mu       sync.Mutex // guards samples and lastID
	// samples are oldest first. Elements are never written once appended
	// (trimming reslices), so a reader may keep the slice it got under mu
	// and read it after.
	samples []Sample
	lastID  int64
}

// NewServer serves src's state; workers are the pool's counters.
func NewServer(src metrics.StatusSource, workers *metrics.Workers) *Server {
	s := &Server{src: src, workers: workers, registry: prometheus.NewRegistry()}
	// Every metric says its stream, so that one Prometheus tells the
	// processes of several streams on one target apart.
	stream := checkpoint.DefaultStream
	if n, ok := src.(interface{ Stream() string }); ok {
		stream = n.Stream()
	}
	prometheus.WrapRegistererWith(prometheus.Labels{"stream": stream}, s.registry).MustRegister(metrics.NewCollector(s, workers))
	// The first sample is the pipeline's start, taken before it runs:
	// a report "since the start" then counts all it did, however late
	// Serve's own sampling begins.
	s.sample(true)
	return s
}

// SetVersion says which paraply serves (`paraply version`'s line), for
// Report.Version; call it before Serve.
func (s *Server) SetVersion(v string) { s.version = v }

// ErrSnapshotGone is returned for a snapshot the server no longer keeps
// (or has not taken yet).
var ErrSnapshotGone = errors.New("no such snapshot: snapshots are kept 10 minutes")

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

// Serve samples every second (and for each request for the newest
// figures) and serves on l until ctx is done.
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
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	s.sample(true)
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-tick.C:
			s.sample(true)
		}
	}
}

// sample takes a snapshot of the pipeline; tick marks the ones the server
// takes every second, which the charts draw.
func (s *Server) sample(tick bool) Sample {
	s.sampling.Lock()
	defer s.sampling.Unlock()
	smp := takeSample(s.src.Status(), s.workers.Snapshot())
	smp.tick = tick
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastID++
	smp.ID = s.lastID
	if n := len(s.samples); n > 0 {
		prev := s.samples[n-1]
		dt := max(0, smp.Time.Sub(prev.Time).Seconds())
		smp.CapacitySecs = prev.CapacitySecs + dt*float64(prev.Limit+smp.Limit)/2
	}
	s.samples = append(s.samples, smp)
	drop := max(0, len(s.samples)-historyLen)
	for drop < len(s.samples)-1 && smp.Time.Sub(s.samples[drop].Time) > historyKept {
		drop++
	}
	s.samples = s.samples[drop:]
	return smp
}

// view returns the samples up to and including snapshot id; for id 0, up
// to a fresh one.
func (s *Server) view(id int64) ([]Sample, error) {
	if id == 0 {
		s.mu.Lock()
		fresh := len(s.samples) > 0 && time.Since(s.samples[len(s.samples)-1].Time) < freshFor
		s.mu.Unlock()
		if !fresh {
			s.sample(false)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.samples
	if id == 0 {
		return v, nil
	}
	// IDs are consecutive.
	if len(v) == 0 {
		return nil, fmt.Errorf("snapshot %d: %w", id, ErrSnapshotGone)
	}
	i := int(id - v[0].ID)
	if i < 0 || i >= len(v) {
		return nil, fmt.Errorf("snapshot %d: %w (the server has %d to %d)", id, ErrSnapshotGone, v[0].ID, v[len(v)-1].ID)
	}
	return v[:i+1], nil
}

// windowStart is the index of the sample an interval of window ending at
// the last of v starts at: the one nearest to the window before it (a
// tick comes a few milliseconds early or late, and "the last 10 s" must
// be 10 s, not 11), at least half the window before it (rates over a few
// milliseconds say nothing), or the oldest there is.
func windowStart(v []Sample, window time.Duration) int {
	end := len(v) - 1
	best := -1
	var off time.Duration
	for i := end - 1; i >= 0; i-- {
		d := v[end].Time.Sub(v[i].Time)
		if d < window/2 {
			continue
		}
		if o := (d - window).Abs(); best < 0 || o < off {
			best, off = i, o
		}
		if d > window+sampleEvery {
			break // older ones are further off
		}
	}
	if best < 0 {
		return 0
	}
	return best
}

// Report builds the report of the newest snapshot over window.
func (s *Server) Report(window time.Duration) Report {
	r, _ := s.ReportAt(window, 0, false) // the newest snapshot is always there
	return r
}

// ReportAt builds the report of snapshot id (0: the newest) over window,
// with the charts' series if withSeries.
func (s *Server) ReportAt(window time.Duration, id int64, withSeries bool) (Report, error) {
	v, err := s.view(id)
	if err != nil {
		return Report{}, err
	}
	r := build(v, window)
	r.Version = s.version
	if withSeries {
		r.Series = series(v, window)
	}
	return r, nil
}

// build is the report of the last of v over window.
func build(v []Sample, window time.Duration) Report {
	end := v[len(v)-1]
	i := windowStart(v, window)
	start := end
	if i < len(v)-1 {
		start = v[i]
	}
	iv := between(start, end)
	iv.WindowSeconds = window.Seconds()
	for _, smp := range v[i:] {
		iv.LagMax = max(iv.LagMax, smp.LagSeconds)
	}
	st := end.st
	allowed := st.Scheduler.Limit // 0 until the coordinator runs
	if allowed == 0 && !st.AutoWorkers {
		allowed = st.Workers
	}
	down := 0.0
	if iv.Seconds > 0 {
		down = iv.TargetDownSeconds / iv.Seconds
	}
	workers, pool := allowedWorkers(end.workers, start.workers, allowed, iv.Seconds, down)
	hot := topCounts(st.Scheduler.HotTables, 5)
	return Report{
		Snapshot: Snapshot{ID: end.ID, Time: end.Time}, Status: st, Progress: progress(st),
		Workers: workers, Pool: pool, Interval: iv, HotTables: hot, Diagnosis: Diagnose(st, iv, hot),
	}
}

// Snapshot implements metrics.SnapshotSource: the newest snapshot, with
// the figures over DefaultWindow.
func (s *Server) Snapshot() metrics.Snapshot {
	v, _ := s.view(0)
	end := v[len(v)-1]
	r := build(v, DefaultWindow)
	iv := r.Interval
	return metrics.Snapshot{
		ID: end.ID, Time: end.Time, Status: end.st, Workers: end.workers, CapacitySeconds: end.CapacitySecs,
		Window: metrics.Window{Seconds: iv.Seconds, AppliedPerSecond: iv.AppliedRate,
			Exec: iv.ExecShare, Turn: iv.TurnShare, Commit: iv.CommitShare, TargetWait: iv.TargetWaitShare, Idle: iv.IdleShare},
	}
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
		q := r.URL.Query()
		window := DefaultWindow
		if v := q.Get("interval"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				http.Error(w, "interval: want a duration such as 10s", http.StatusBadRequest)
				return
			}
			window = d
		}
		var id int64
		if v := q.Get("snapshot"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				http.Error(w, "snapshot: want a snapshot number", http.StatusBadRequest)
				return
			}
			id = n
		}
		rep, err := s.ReportAt(window, id, q.Get("series") == "1")
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		writeJSON(w, rep)
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
