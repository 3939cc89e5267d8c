package console

import (
	"fmt"
	"html"
	"html/template"
	"strconv"
	"strings"
	"time"
)

// Charts and range bars are inline SVG rendered here: no script draws
// them, so they show without JavaScript. Each has a text alternative
// (role="img" with aria-label) and per-element <title> tooltips.

// chart draws one series of the last hour, a bar per minute.
func chart(minutes []minuteJSON, series, label string) template.HTML {
	const w, h, top, base = 290, 96, 14, 76
	vals := make([]uint64, len(minutes))
	var total, peak uint64
	for i, m := range minutes {
		switch series {
		case "submitted":
			vals[i] = m.Submitted
		case "accepted":
			vals[i] = m.Accepted
		case "delivered":
			vals[i] = m.Delivered
		case "failed":
			vals[i] = m.Failed
		}
		total += vals[i]
		peak = max(peak, vals[i])
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart chart-%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s per minute over the last hour: %d in all, at most %d in one minute" data-total="%d">`,
		series, w, h, w, h, html.EscapeString(label), total, peak, total)
	fmt.Fprintf(&b, `<text x="0" y="10" class="axis">peak %d/min</text>`, peak)
	if len(vals) > 0 {
		step := float64(w) / float64(len(vals))
		for i, v := range vals {
			if v == 0 {
				continue
			}
			bh := max(1, float64(v)/float64(max(peak, 1))*float64(base-top))
			at := minutes[i].At
			if t, err := time.Parse(time.RFC3339, at); err == nil {
				at = t.UTC().Format("15:04")
			}
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d</title></rect>`,
				float64(i)*step+0.5, float64(base)-bh, max(1, step-1), bh, html.EscapeString(at), v)
		}
	}
	fmt.Fprintf(&b, `<line class="baseline" x1="0" y1="%d" x2="%d" y2="%d"/>`, base, w, base)
	fmt.Fprintf(&b, `<text x="0" y="%d" class="axis">−60 min</text><text x="%d" y="%d" class="axis" text-anchor="end">now</text></svg>`, h-4, w, h-4)
	return template.HTML(b.String())
}

func rangeText(r [2]uint64) string {
	if r[0] == r[1] {
		return strconv.FormatUint(r[0], 10)
	}
	return strconv.FormatUint(r[0], 10) + "–" + strconv.FormatUint(r[1], 10)
}

// behindGap is the part of ranges above the first missing number: what an
// ordered receiving group holds until the gap fills (R48).
func behindGap(ranges, missing [][2]uint64) [][2]uint64 {
	if len(missing) == 0 {
		return nil
	}
	var out [][2]uint64
	for _, r := range ranges {
		if r[0] > missing[0][1] {
			out = append(out, r)
		}
	}
	return out
}

// rangesText writes ranges as "0–4, 6".
func rangesText(ranges [][2]uint64) string {
	if len(ranges) == 0 {
		return "none"
	}
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = rangeText(r)
	}
	return strings.Join(parts, ", ")
}

// rangesBar draws the numbers 0..highest as a bar: received (or
// acknowledged) ranges filled, the gaps between them (missing, as the
// API computes them) in a contrasting colour at least 3 px wide, so that
// a gap of one number among millions still shows.
func rangesBar(ranges, missing [][2]uint64, wide bool) template.HTML {
	w, h := 200.0, 14.0
	if wide {
		w, h = 720, 24
	}
	label := "received " + rangesText(ranges)
	if len(missing) > 0 {
		label += "; missing " + rangesText(missing)
	} else {
		label += "; no gap"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="ranges" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s" data-gaps="%d">`,
		w, h, w, h, html.EscapeString(label), len(missing))
	fmt.Fprintf(&b, `<rect class="track" x="0" y="0" width="%.0f" height="%.0f"/>`, w, h)
	if len(ranges) > 0 {
		span := float64(ranges[len(ranges)-1][1]) + 1
		x := func(n uint64) float64 { return float64(n) / span * w }
		for _, r := range ranges {
			x0, x1 := x(r[0]), x(r[1]+1)
			fmt.Fprintf(&b, `<rect class="have" x="%.2f" y="0" width="%.2f" height="%.0f"><title>received %s</title></rect>`,
				x0, max(x1-x0, 1), h, rangeText(r))
		}
		for _, r := range missing {
			x0, x1 := x(r[0]), x(r[1]+1)
			gw := max(x1-x0, 3)
			x0 = min(max(0, (x0+x1)/2-gw/2), w-gw)
			fmt.Fprintf(&b, `<rect class="gap" x="%.2f" y="0" width="%.2f" height="%.0f"><title>missing %s</title></rect>`,
				x0, gw, h, rangeText(r))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
