package ui

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/humanize"
	"github.com/agora-etl/agora/runtime/history"
)

// Chart geometry, in SVG user units (the picture scales to its box).
const (
	chartW, chartH = 800, 160
	chartPad       = 28 // room for the axis labels
)

// durationChart draws runs (newest first, as the history reads) as an SVG
// bar per run, oldest on the left, each as tall as its duration and
// coloured by its outcome (CSS classes "bar succeeded" and so on, so the
// page's stylesheet colours it under the CSP), with a tooltip naming it.
// It is rendered on the server and inlined: no script, no external asset.
func durationChart(runs []history.Record) template.HTML {
	if len(runs) == 0 {
		return ""
	}
	var longest time.Duration
	for _, r := range runs {
		longest = max(longest, r.Duration)
	}
	if longest <= 0 {
		longest = time.Millisecond
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="duration-chart" viewBox="0 0 %d %d" role="img" aria-label="duration and outcome of the last %d runs">`, chartW, chartH, len(runs))
	plotW, plotH := float64(chartW-2*chartPad), float64(chartH-2*chartPad)
	step := plotW / float64(len(runs))
	barW := max(step*0.8, 1)
	for i := range runs {
		r := runs[len(runs)-1-i]
		h := max(plotH*float64(r.Duration)/float64(longest), 1)
		x := float64(chartPad) + float64(i)*step
		y := float64(chartPad) + plotH - h
		fmt.Fprintf(&b, `<rect class="bar %s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
			html.EscapeString(string(r.Outcome)), x, y, barW, h,
			html.EscapeString(fmt.Sprintf("%s · %s · %s", r.End.UTC().Format("2006-01-02 15:04:05Z"), r.Outcome, humanize.RunDuration(r.Duration))))
	}
	axisY := chartH - chartPad
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, chartPad, axisY, chartW-chartPad, axisY)
	fmt.Fprintf(&b, `<text class="label" x="%d" y="%d">%s</text>`, chartPad, chartPad-8, html.EscapeString("longest "+humanize.RunDuration(longest)))
	fmt.Fprintf(&b, `<text class="label" x="%d" y="%d">%s</text>`, chartPad, chartH-8, runs[len(runs)-1].End.UTC().Format("2006-01-02 15:04Z"))
	fmt.Fprintf(&b, `<text class="label end" x="%d" y="%d">%s</text>`, chartW-chartPad, chartH-8, runs[0].End.UTC().Format("2006-01-02 15:04Z"))
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it is escaped above
}
