package bench

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Header describes the machine, the software and the settings of a
// benchmark.
type Header struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Seconds  float64   `json:"seconds"`
	Quick    bool      `json:"quick"`

	MariaDB  string `json:"mariadb"`
	Sysbench string `json:"sysbench"`
	// Paraply is `git describe --dirty` of the directory the benchmark
	// runs in, which is usually, but not necessarily, the source of the
	// binary measured.
	Paraply string `json:"paraply"`
	// ParaplyBinary identifies the binary measured: SHA-256 prefix and
	// build time (the working tree may change while a benchmark runs).
	ParaplyBinary string `json:"paraply_binary"`
	// ParaplyBinaryB identifies the second binary (Config.ParaplyB), if
	// any: the configurations named ...@b ran it.
	ParaplyBinaryB string `json:"paraply_binary_b,omitempty"`
	// Rounds is how many times each configuration ran on each backlog.
	Rounds int `json:"rounds,omitempty"`
	// RepeatUnderSeconds is Config.RepeatUnder: with it, only the
	// configurations whose first run was shorter ran in every round.
	RepeatUnderSeconds float64 `json:"repeat_under_seconds,omitempty"`
	Go                 string  `json:"go"`

	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model"`
	MemoryMB int    `json:"memory_mb"`
	Kernel   string `json:"kernel"`
	// Load averages (1, 5, 15 minutes) at the start and the end, and the
	// lowest and highest one-minute load seen when a run started. The
	// machine is shared; a high load makes every number lower and noisier.
	LoadStart  [3]float64 `json:"load_start"`
	LoadEnd    [3]float64 `json:"load_end"`
	LoadRunMin float64    `json:"load_run_min"`
	LoadRunMax float64    `json:"load_run_max"`

	Tables    int `json:"tables"`
	TableSize int `json:"table_size"`
	Events    int `json:"events"`
	// EventsFor is Config.EventsFor: K of the workloads it names.
	EventsFor    map[string]int `json:"events_for,omitempty"`
	Clients      []int          `json:"clients"`
	Workloads    []string       `json:"workloads"`
	Configs      []string       `json:"configs"`
	Durability   []string       `json:"durability"`
	BufferPoolMB int            `json:"buffer_pool_mb"`
	BinlogFormat string         `json:"binlog_format,omitempty"` // the source's; "" is ROW
	RunTimeout   string         `json:"run_timeout"`
	Verify       string         `json:"verify"`
	Warm         bool           `json:"warm"`
}

func newHeader(ctx context.Context, cfg Config) Header {
	h := Header{
		Started: time.Now().UTC().Truncate(time.Second), Quick: cfg.Quick,
		MariaDB:  firstLine(output(ctx, "mariadbd", "--version")),
		Sysbench: firstLine(output(ctx, "sysbench", "--version")),
		Paraply:  gitVersion(ctx), ParaplyBinary: fileID(cfg.Paraply),
		Go:   runtime.Version(),
		CPUs: runtime.NumCPU(), CPUModel: cpuModel(), MemoryMB: memoryMB(),
		Kernel:    strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")),
		LoadStart: loadAverage(),
		Tables:    cfg.Tables, TableSize: cfg.TableSize, Events: cfg.Events, EventsFor: cfg.EventsFor, Clients: cfg.Clients,
		BufferPoolMB: cfg.BufferPoolMB, BinlogFormat: cfg.BinlogFormat, RunTimeout: cfg.RunTimeout.String(), Verify: cfg.Verify, Warm: cfg.Warm,
	}
	if h.MariaDB == "" {
		h.MariaDB = firstLine(output(ctx, "/usr/sbin/mariadbd", "--version"))
	}
	for _, w := range cfg.Workloads {
		h.Workloads = append(h.Workloads, w.Name)
	}
	for _, a := range cfg.Applies {
		h.Configs = append(h.Configs, a.Name())
	}
	if cfg.ParaplyB != "" {
		h.ParaplyBinaryB = fileID(cfg.ParaplyB)
	}
	if cfg.rounds() > 1 {
		h.Rounds = cfg.rounds()
		h.RepeatUnderSeconds = cfg.RepeatUnder.Seconds()
	}
	for _, d := range cfg.Durable {
		h.Durability = append(h.Durability, durabilityName(d))
	}
	return h
}

// finish notes the end of the benchmark.
func (h *Header) finish() {
	h.Finished = time.Now().UTC().Truncate(time.Second)
	h.Seconds = round(h.Finished.Sub(h.Started).Seconds(), 0)
	h.LoadEnd = loadAverage()
}

// loadAverage reads /proc/loadavg.
func loadAverage() [3]float64 {
	var l [3]float64
	f := strings.Fields(readFile("/proc/loadavg"))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

func cpuModel() string {
	for _, line := range strings.Split(readFile("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func memoryMB() int {
	s := bufio.NewScanner(strings.NewReader(readFile("/proc/meminfo")))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	return 0
}

func gitVersion(ctx context.Context) string {
	v := strings.TrimSpace(output(ctx, "git", "describe", "--always", "--dirty", "--abbrev=12"))
	if v == "" {
		return "unknown"
	}
	return v
}

// output runs a command and returns its standard output, or "" if it
// fails.
func output(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// fileID returns "sha256:<12 hex> built <time>" for a file, or "".
func fileID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	id := fmt.Sprintf("sha256:%x", h.Sum(nil)[:6])
	if fi, err := f.Stat(); err == nil {
		id += " built " + fi.ModTime().UTC().Format("2006-01-02 15:04 MST")
	}
	return id
}
