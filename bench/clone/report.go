package main

import (
	"fmt"
	"strings"
	"time"
)

// results is what results.json holds.
type results struct {
	Started, Finished     time.Time
	Tables, Rows, Threads int
	Rate                  int     `json:"rate_tps"`
	DataMB                float64 `json:"data_mb"`
	LoadBefore, LoadAfter string
	Runs                  []measurement
}

// markdown is results.md: the table, and each way's time against clone's.
func (r *results) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# paraply clone against mariadb-dump and mydumper\n\n")
	fmt.Fprintf(&b, "%s to %s UTC. %d sysbench tables of %d rows (%.0f MB of data and indexes) on the source, which sysbench oltp_write_only "+
		"writes %d transactions a second throughout; a durable target (innodb_flush_log_at_trx_commit=1, sync_binlog=1, binlog on); "+
		"%d threads for clone (--copy-workers), mydumper and myloader; each way from an empty target to caught up with the source "+
		"(paraply replicate --until-caught-up from the seed's position), then checked with paraply verify. Load average before: %s; after: %s.\n\n",
		r.Started.Format("2006-01-02 15:04"), r.Finished.Format("15:04"), r.Tables, r.Rows, r.DataMB, r.Rate, r.Threads, r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(&b, "| way | to caught up | seeding | x clone | longest source write | CPU s: target | source | tools | paraply peak RSS | load before | verified |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	var base float64
	for _, m := range r.Runs {
		if m.Method == "clone" {
			base = m.Seconds
		}
	}
	for _, m := range r.Runs {
		ratio := "-"
		if base > 0 {
			ratio = fmt.Sprintf("%.2f", m.Seconds/base)
		}
		fmt.Fprintf(&b, "| %s | %.1f s | %.1f s | %s | %.0f ms | %.1f | %.1f | %.1f | %.0f MiB | %s | %v |\n", label(m.Method), m.Seconds, m.SeedSeconds, ratio,
			m.LongestWriteMs, m.TargetCPU, m.SourceCPU, m.ToolsCPU, m.ParaplyMaxRSSMB, m.LoadAverage, m.Verified)
	}
	for _, m := range r.Runs {
		if m.Note != "" {
			fmt.Fprintf(&b, "\n%s: %s.\n", label(m.Method), m.Note)
		}
	}
	return b.String()
}

func label(method string) string {
	switch method {
	case "clone":
		return "paraply clone"
	case "clone-2readers":
		return "paraply clone --copy-readers 2"
	case "dump":
		return "mariadb-dump \\| mariadb, replicate"
	case "mydumper":
		return "mydumper, myloader, replicate"
	}
	return method
}
