package clone

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Progress is a clone's progress: what Cloner.Progress returns while it
// runs, and what the display, /status.json and the metrics show.
type Progress struct {
	// Phase says what the clone does now, in words.
	Phase string `json:"phase"`
	// Position is the source position the copy is taken at (its
	// snapshot's); Blocked how long opening the snapshot blocked the
	// source's commits (0: it took no lock).
	Position       string  `json:"position"`
	BlockedSeconds float64 `json:"source_commits_blocked_seconds"`
	Started        time.Time
	// Tables are the tables this run copies, the busy ones first.
	Tables []TableProgress `json:"tables"`
	// Rows and Bytes copied, of EstRows (information_schema's estimate);
	// Chunks committed. Each counts what earlier runs copied too.
	Rows    int64 `json:"rows"`
	Bytes   int64 `json:"bytes"`
	EstRows int64 `json:"estimated_rows"`
	Chunks  int   `json:"chunks"`
	// Done of Total tables are copied whole.
	Done  int `json:"tables_done"`
	Total int `json:"tables_total"`
	// RowsPerSecond since the copy began; ETASeconds at that rate (-1
	// while unknown).
	RowsPerSecond float64 `json:"rows_per_second"`
	ETASeconds    float64 `json:"eta_seconds"`
}

// TableProgress is one table's progress.
type TableProgress struct {
	Name          string  `json:"table"`
	Rows          int64   `json:"rows"`
	EstRows       int64   `json:"estimated_rows"`
	Bytes         int64   `json:"bytes"`
	Chunks        int     `json:"chunks"`
	Done          bool    `json:"done"`
	Busy          bool    `json:"busy"`
	RowsPerSecond float64 `json:"rows_per_second"`
	ETASeconds    float64 `json:"eta_seconds"`
}

// progress gathers the tables' progress into a Progress at now.
func gather(phase, position string, blocked time.Duration, started time.Time, runs []*tableRun, now time.Time) Progress {
	p := Progress{Phase: phase, Position: position, BlockedSeconds: blocked.Seconds(), Started: started, Total: len(runs), ETASeconds: -1}
	var copyBegan time.Time
	for _, tr := range runs {
		tp := tr.progress()
		est := max(tp.EstRows, tp.Rows)
		t := TableProgress{Name: tp.Name, Rows: tp.Rows, EstRows: est, Bytes: tp.Bytes, Chunks: tp.Chunks, Done: tp.Finished, Busy: tp.Busy, ETASeconds: -1}
		if !tp.Began.IsZero() {
			if copyBegan.IsZero() || tp.Began.Before(copyBegan) {
				copyBegan = tp.Began
			}
			end := now
			if tp.Finished {
				end = tp.Done
			}
			if d := end.Sub(tp.Began).Seconds(); d > 0 {
				t.RowsPerSecond = float64(tp.Rows) / d
			}
			if t.RowsPerSecond > 0 && !tp.Finished {
				t.ETASeconds = float64(est-tp.Rows) / t.RowsPerSecond
			}
		}
		if tp.Finished {
			p.Done++
			t.ETASeconds = 0
		}
		p.Rows, p.Bytes, p.EstRows, p.Chunks = p.Rows+tp.Rows, p.Bytes+tp.Bytes, p.EstRows+est, p.Chunks+tp.Chunks
		p.Tables = append(p.Tables, t)
	}
	if !copyBegan.IsZero() {
		if d := now.Sub(copyBegan).Seconds(); d > 0 {
			p.RowsPerSecond = float64(p.Rows) / d
		}
		if p.RowsPerSecond > 0 {
			p.ETASeconds = float64(p.EstRows-p.Rows) / p.RowsPerSecond
		}
	}
	sort.SliceStable(p.Tables, func(i, j int) bool { return p.Tables[i].Busy && !p.Tables[j].Busy })
	return p
}

// maxShown bounds the tables the display lists.
const maxShown = 8

// render writes p as the display shows it: a line for the whole, a line
// with a bar for each busy table.
func render(w io.Writer, p Progress) int {
	lines := 1
	fmt.Fprintf(w, "clone: %s; %d/%d tables, %s/%s rows (%s), %s, %s rows/s, ETA %s\n", p.Phase, p.Done, p.Total,
		count(p.Rows), count(p.EstRows), percent(p.Rows, p.EstRows), size(p.Bytes), count(int64(p.RowsPerSecond)), eta(p.ETASeconds))
	shown := 0
	for _, t := range p.Tables {
		if !t.Busy || shown == maxShown {
			continue
		}
		shown++
		lines++
		fmt.Fprintf(w, "  %-32s %s %5s  %s/%s rows  %s  %s rows/s  ETA %s\n", t.Name, bar(t.Rows, t.EstRows, 20), percent(t.Rows, t.EstRows),
			count(t.Rows), count(t.EstRows), size(t.Bytes), count(int64(t.RowsPerSecond)), eta(t.ETASeconds))
	}
	return lines
}

// display writes the progress every so often: on a terminal in place
// (the lines written last time are cleared first), else as new lines.
type display struct {
	w        io.Writer
	terminal bool
	last     int // lines written last time, on a terminal
}

func (d *display) show(p Progress) {
	var b strings.Builder
	if d.terminal && d.last > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", d.last)
	}
	d.last = render(&b, p)
	_, _ = io.WriteString(d.w, b.String()) // a display that cannot be written changes nothing
}

func bar(n, of int64, width int) string {
	full := 0
	if of > 0 {
		full = int(min(int64(width), n*int64(width)/of))
	}
	return "[" + strings.Repeat("#", full) + strings.Repeat(".", width-full) + "]"
}

func percent(n, of int64) string {
	if of <= 0 {
		return "?%"
	}
	return fmt.Sprintf("%d%%", min(100, n*100/of))
}

// count writes n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

func eta(s float64) string {
	if s < 0 {
		return "?"
	}
	return (time.Duration(s) * time.Second).Round(time.Second).String()
}
