package bench

import (
	"fmt"
	"html"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = 900
	labelWidth  = 310 // configuration names, right-aligned
	barMaxWidth = 480
	barHeight   = 14
	barGap      = 4
	groupGap    = 34 // room for a group's heading
	chartTop    = 40
)

// Bar colours by kind: native grey, paraply orange (lighter without
// batching), ceiling green; point-in-time recovery: mariadb-binlog slate,
// paraply apply violet.
func barColour(a Apply) string {
	switch {
	case a.Kind == MariadbBinlog:
		return "#475569"
	case a.Kind == ParaplyApply:
		return "#7c3aed"
	case a.Kind == Native && a.Threads == 0:
		return "#4b5563"
	case a.Kind == Native:
		return "#9ca3af"
	case a.Kind == Paraply && a.Batch == 1:
		return "#fdba74"
	case a.Kind == Paraply:
		return "#ea580c"
	}
	return "#16a34a"
}

// chart draws the throughput of every run of workload w as horizontal
// bars, one group per backlog (source clients × durability). Each group
// has its own scale: a non-durable target is an order of magnitude faster.
func (res *Results) chart(w string) string {
	var body strings.Builder
	y := chartTop
	for _, b := range res.Backlogs {
		if b.Workload != w {
			continue
		}
		y += groupGap
		fmt.Fprintf(&body, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y-10, esc(b.title()))
		top := 0.0
		for _, r := range b.representatives() {
			if r.ok() {
				top = max(top, r.TPS)
			}
		}
		if b.Error != "" {
			fmt.Fprintf(&body, `<text x="%d" y="%d" fill="#b91c1c">backlog failed</text>`+"\n", labelWidth+10, y+barHeight-3)
			y += barHeight + barGap
			continue
		}
		for _, r := range b.representatives() {
			label := r.Apply.Label()
			if r.Apply.Kind == Ceiling {
				label = "ceiling (16 clients direct)"
			}
			fmt.Fprintf(&body, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelWidth, y+barHeight-3, esc(label))
			if !r.ok() {
				fmt.Fprintf(&body, `<text x="%d" y="%d" fill="#b91c1c">failed</text>`+"\n", labelWidth+10, y+barHeight-3)
			} else {
				width := barMaxWidth * r.TPS / top
				fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %.0f tps</title></rect>`+"\n",
					labelWidth+10, y, width, barHeight, barColour(r.Apply), esc(r.Apply.Label()), r.TPS)
				fmt.Fprintf(&body, `<text x="%.1f" y="%d">%s tps</text>`+"\n", float64(labelWidth+10)+width+6, y+barHeight-3, tps(r.TPS))
			}
			y += barHeight + barGap
		}
	}
	height := y + 20
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&sb, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartWidth, height)
	fmt.Fprintf(&sb, `<text x="10" y="22" font-size="16" font-weight="bold">%s: apply throughput of the same backlog (transactions/s, each group on its own scale)</text>`+"\n", esc(w))
	sb.WriteString(body.String())
	sb.WriteString("</svg>\n")
	return sb.String()
}

func esc(s string) string { return html.EscapeString(s) }
