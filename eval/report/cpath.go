package report

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/grmdp/grmdp/io/fileio"
)

// CPathPoint is one point of a penalty path (`grmdp solve --c-path`): the
// policy solved at penalty constant C, its beta, its values and its
// shares. Its fields are dataset.PathPoint's, which converts to it.
type CPathPoint struct {
	C, Beta float64
	// NoEvidence is the share of the data's decisions without evidence
	// (they follow the fallback).
	NoEvidence float64
	// ValueEstimate is the solver's own estimate of the policy's value,
	// RobustValue the robust fitted-Q value from data and PessimisticValue that
	// value minus the pessimism penalty.
	ValueEstimate, RobustValue, PessimisticValue float64
	// Agreement is the share of the data's decisions equal to the
	// behaviour policy's.
	Agreement float64
}

// WriteCPath writes a penalty path beside a policy: prefix+".cpath.csv"
// (one row per point) and the plots prefix+".cpath.png" and ".svg"
// (CPathPlot), each atomically. selection is the policy's record of a
// cross-fitted choice (nil for none).
func WriteCPath(prefix string, pts []CPathPoint, chosen float64, H int, selection json.RawMessage) error {
	var sb strings.Builder
	sb.WriteString("c,beta,no_evidence_share,value_estimate,robust_fqe,pessimistic_value,behaviour_agreement\n")
	for _, p := range pts {
		fmt.Fprintf(&sb, "%g,%g,%g,%g,%g,%g,%g\n", p.C, p.Beta, p.NoEvidence, p.ValueEstimate, p.RobustValue, p.PessimisticValue, p.Agreement)
	}
	if err := fileio.WriteAtomic(prefix+".cpath.csv", func(w io.Writer) error {
		_, err := io.WriteString(w, sb.String())
		return err
	}); err != nil {
		return err
	}
	return CPathPlot(prefix+".cpath", pts, chosen, H, selection)
}

// cpathSelection is what the plot reads of a policy's selection record
// (package dataset's Selection as JSON): the interval's level, the choice,
// and each candidate's settings, score, worst site and sites' held-out
// values with their intervals. The behaviour fallback has c null.
type cpathSelection struct {
	Level  float64 `json:"level"`
	Chosen struct {
		C          *float64 `json:"c"`
		Lambda     *float64 `json:"lambda"`
		Stationary *bool    `json:"stationary"`
	} `json:"chosen"`
	Candidates []struct {
		C          *float64 `json:"c"`
		Lambda     *float64 `json:"lambda"`
		Stationary *bool    `json:"stationary"`
		Score      *float64 `json:"score"`
		WorstSite  string   `json:"worst_site"`
		Sites      []struct {
			Site   string   `json:"site"`
			Value  *float64 `json:"value"`
			CILow  *float64 `json:"ci_low"`
			CIHigh *float64 `json:"ci_high"`
		} `json:"sites"`
	} `json:"candidates"`
}

// heldOutPanel returns the panel of a cross-fitted choice's held-out
// scores over c, with its legend, and the chosen c (NaN when the choice
// is the behaviour fallback): per setting of lambda and step pooling, each
// candidate's worst site's held-out value with that site's interval and
// its score (the lower limit of the worst site's value); the behaviour
// fallback's score as a horizontal line; the chosen candidate ringed.
// Candidates at c = 0 are left out on a log axis.
func heldOutPanel(sel *cpathSelection, logX bool) (*plot.Plot, plot.Legend, float64) {
	p := newPlot("", "", fmt.Sprintf("held out: worst site's value\n(%g%% intervals)", 100*sel.Level))
	addGrid(p, true, true)
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	leg := newLegend()
	same := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	sameB := func(a, b *bool) bool { return a == nil || b == nil || *a == *b }
	chosen := math.NaN()
	type key struct {
		lambda     float64
		stationary bool
	}
	var order []key
	groups := map[key][]int{}
	for i, c := range sel.Candidates {
		if c.C == nil || c.Lambda == nil {
			if c.Score != nil && finite(*c.Score) {
				l := refLine{Value: *c.Score, Style: draw.LineStyle{Color: grey, Width: vg.Points(1.2), Dashes: dashed}}
				name := "behaviour fallback: score"
				if sel.Chosen.C == nil {
					l.Style.Color, l.Style.Width = black, vg.Points(2)
					name += " (chosen)"
				}
				p.Add(l)
				leg.Add(name, l)
			}
			continue
		}
		if !finite(*c.C) || (logX && !(*c.C > 0)) {
			continue
		}
		k := key{lambda: *c.Lambda, stationary: c.Stationary != nil && *c.Stationary}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	multi := len(order) > 1
	var ring plotter.XYs
	for g, k := range order {
		ls, gs := seriesStyle(g)
		var vals, scores plotter.XYs
		iv := &intervals{Style: draw.LineStyle{Color: ls.Color, Width: vg.Points(1)}, Cap: vg.Points(5)}
		for _, i := range groups[k] {
			c := sel.Candidates[i]
			x := *c.C
			for _, st := range c.Sites {
				if st.Site != c.WorstSite || st.Value == nil {
					continue
				}
				vals = append(vals, plotter.XY{X: x, Y: *st.Value})
				if st.CILow != nil && st.CIHigh != nil {
					iv.Pos, iv.Lo, iv.Hi = append(iv.Pos, x), append(iv.Lo, *st.CILow), append(iv.Hi, *st.CIHigh)
				}
			}
			if c.Score != nil && finite(*c.Score) {
				scores = append(scores, plotter.XY{X: x, Y: *c.Score})
			}
			if sel.Chosen.C != nil && same(c.C, sel.Chosen.C) && same(c.Lambda, sel.Chosen.Lambda) && sameB(c.Stationary, sel.Chosen.Stationary) {
				chosen = x
				if c.Score != nil && finite(*c.Score) {
					ring = append(ring, plotter.XY{X: x, Y: *c.Score})
				}
			}
		}
		name := "worst site's value"
		if multi {
			name = fmt.Sprintf("lambda %g", k.lambda)
			if k.stationary {
				name += ", steps pooled"
			}
			name += ": " + "worst site's value"
		}
		if len(vals) > 0 {
			line := &plotter.Line{XYs: vals, LineStyle: ls}
			sc := &plotter.Scatter{XYs: vals, GlyphStyle: gs}
			p.Add(iv, line, sc)
			leg.Add(name, line, sc)
		}
		if len(scores) > 0 {
			sls := ls
			sls.Dashes = dashed
			sgs := gs
			sgs.Shape = draw.PyramidGlyph{}
			line := &plotter.Line{XYs: scores, LineStyle: sls}
			sc := &plotter.Scatter{XYs: scores, GlyphStyle: sgs}
			p.Add(line, sc)
			leg.Add("  score (lower limit)", line, sc)
		}
	}
	if len(ring) > 0 {
		sc := &plotter.Scatter{XYs: ring, GlyphStyle: draw.GlyphStyle{Color: black, Radius: vg.Points(7), Shape: draw.RingGlyph{}}}
		p.Add(sc)
		leg.Add("chosen candidate", sc)
	}
	return p, leg, chosen
}

// CPathPlot writes path+".png" and path+".svg": the penalty path in two
// panels over a shared c axis (logarithmic when every c is positive):
// above, the values (value estimate, robust value, pessimistic value) in
// expected total reward over H steps; below, the shares of the data's
// decisions without evidence and agreeing with the behaviour policy, on
// [0, 1]. A vertical line in both panels marks chosen, the c of the policy
// written (NaN: none). Points with a non-finite value, or a nonpositive c
// on a log axis, are left out. The directory of path must exist; each file
// is written atomically, and the bytes depend only on the arguments.
//
// With selection, the policy's record of a cross-fitted choice of c
// (package dataset's Selection as JSON; nil for none), a middle panel
// shows the held-out scores the choice was made by: each candidate's
// worst site's held-out value with that site's interval, its score (the
// lower limit the choice ranks), the behaviour fallback's score as a
// line, and the chosen candidate ringed; the vertical line then marks the
// chosen c (none when the fallback was chosen). The axis is logarithmic
// when every positive c of the path and the candidates allows it; c = 0
// is then left out.
func CPathPlot(path string, pts []CPathPoint, chosen float64, H int, selection json.RawMessage) error {
	var sel *cpathSelection
	if len(selection) > 0 && string(selection) != "null" {
		sel = &cpathSelection{}
		if err := json.Unmarshal(selection, sel); err != nil {
			return fmt.Errorf("report: the policy's selection record: %w", err)
		}
	}
	logX := len(pts) > 0
	for _, p := range pts {
		logX = logX && p.C > 0
	}
	if sel != nil {
		// The default path of c ends at 0: a log axis leaves it out when
		// the other candidates span more than a decade.
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range pts {
			if p.C > 0 {
				lo, hi = math.Min(lo, p.C), math.Max(hi, p.C)
			}
		}
		for _, c := range sel.Candidates {
			if c.C != nil && *c.C > 0 {
				lo, hi = math.Min(lo, *c.C), math.Max(hi, *c.C)
			}
		}
		logX = hi >= 10*lo
	}
	if logX && !(chosen > 0) {
		chosen = math.NaN()
	}
	ylabel := "value: expected total reward"
	if H > 0 {
		ylabel = fmt.Sprintf("value: expected total reward\nover H = %d steps", H)
	}
	values := newPlot("Penalty path: values and shares as the penalty constant c grows", "", ylabel)
	shares := newPlot("", "penalty constant c", "share of the data's decisions")
	values.Title.TextStyle.Font.Size = 12
	for _, p := range []*plot.Plot{values, shares} {
		addGrid(p, true, true)
		if logX {
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = logTicks{}
		}
	}
	series := func(p *plot.Plot, leg *plot.Legend, style int, dashes bool, name string, y func(CPathPoint) float64) {
		ls, gs := seriesStyle(style)
		if dashes {
			ls.Dashes = dashed
		}
		var xy plotter.XYs
		for _, pt := range pts {
			if v := y(pt); finite(v) && finite(pt.C) && (!logX || pt.C > 0) {
				xy = append(xy, plotter.XY{X: pt.C, Y: v})
			}
		}
		line := &plotter.Line{XYs: xy, LineStyle: ls}
		sc := &plotter.Scatter{XYs: xy, GlyphStyle: gs}
		if len(xy) > 0 {
			p.Add(line, sc)
		}
		leg.Add(name, line, sc)
	}
	if sel != nil {
		chosen = math.NaN()
	}
	vleg, sleg := newLegend(), newLegend()
	series(values, &vleg, 0, false, "value estimate (the solver's)", func(p CPathPoint) float64 { return p.ValueEstimate })
	series(values, &vleg, 1, false, "robust value from data", func(p CPathPoint) float64 { return p.RobustValue })
	series(values, &vleg, 2, true, "pessimistic value", func(p CPathPoint) float64 { return p.PessimisticValue })
	series(shares, &sleg, 3, false, "without evidence (fallback)", func(p CPathPoint) float64 { return p.NoEvidence })
	series(shares, &sleg, 4, true, "same action as the behaviour", func(p CPathPoint) float64 { return p.Agreement })
	plots, legends := []*plot.Plot{values, shares}, []*plot.Legend{&vleg, &sleg}
	var hleg plot.Legend
	if sel != nil {
		var held *plot.Plot
		held, hleg, chosen = heldOutPanel(sel, logX)
		plots = []*plot.Plot{values, held, shares}
		legends = []*plot.Legend{&vleg, &hleg, &sleg}
	}
	if finite(chosen) && (!logX || chosen > 0) {
		for i, p := range plots {
			l := refLine{Value: chosen, Vertical: true, Style: draw.LineStyle{Color: black, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}}
			p.Add(l)
			legends[i].Add(fmt.Sprintf("chosen c = %.3g", chosen), l)
		}
	}
	shares.Y.Min, shares.Y.Max = 0, 1
	if values.Y.Min > 0 {
		values.Y.Min = 0
	}
	for _, p := range plots {
		if logX {
			fixLogRange(&p.X)
		}
	}
	// Every panel spans the same c range.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range plots {
		lo, hi = math.Min(lo, p.X.Min), math.Max(hi, p.X.Max)
	}
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
		if logX {
			lo, hi = 1, 10
		}
	}
	for _, p := range plots {
		p.X.Min, p.X.Max = lo, hi
	}
	f := &panels{plots: plots, w: lineWidth, h: 6 * vg.Inch,
		caption: "Each point is the policy solved at one penalty constant c (the pessimism coefficient beta grows in " +
			"proportion to it). A larger c makes the solver more pessimistic: " +
			"more decisions have no evidence and follow the fallback, and the policy comes closer to the care " +
			"actually given. The dotted vertical line marks the c of the policy written."}
	for _, l := range legends {
		f.legends = append(f.legends, *l)
	}
	if sel != nil {
		f.h = 8.5 * vg.Inch
		f.caption += " The middle panel shows what c was chosen by: each candidate learned on the other folds of " +
			"trajectories and evaluated on the held-out fold, its worst site's held-out value with that site's interval, and " +
			"its score, the lower limit of the worst site's value, which the choice ranks; a candidate may be chosen only if " +
			"its held-out worst site beats the behaviour fallback's. The ring marks the chosen candidate."
		if logX {
			f.caption += " c = 0 is not drawn on the logarithmic axis."
		}
	}
	return f.save(path)
}

// panels is a column of plots over a shared x axis, each with its legend
// in a strip at its right, and a caption below.
type panels struct {
	plots   []*plot.Plot
	legends []plot.Legend
	// w and h are the size of the plots' column; the strip adds to w and
	// the caption to h.
	w, h    vg.Length
	caption string
}

func (f *panels) strip() vg.Length {
	var right vg.Length
	for _, l := range f.legends {
		r := l.Rectangle(draw.Canvas{})
		right = max(right, r.Max.X-r.Min.X+2*stripGap)
	}
	return right
}

func (f *panels) captionLines() []string {
	sty := captionStyle()
	return wrapText(f.caption, f.w+f.strip()-2*margin, func(s string) vg.Length { return sty.Width(s) })
}

func (f *panels) captionHeight() vg.Length {
	sty := captionStyle()
	return vg.Length(len(f.captionLines()))*sty.Handler.Extents(sty.Font).Height*1.2 + margin
}

func (f *panels) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, margin, -margin, margin, -margin)
	c = drawCaption(c, f.captionLines())
	right := f.strip()
	main := draw.Crop(c, 0, -right, 0, 0)
	// Stack the panels, and move each one's left and right edges so that
	// the data areas line up whatever the widths of their axes' labels.
	n := vg.Length(len(f.plots))
	gap := vg.Points(12)
	tileH := (main.Max.Y - main.Min.Y - (n-1)*gap) / n
	canvases := make([]draw.Canvas, len(f.plots))
	var left, rightPad vg.Length
	for i, p := range f.plots {
		top := main.Max.Y - vg.Length(i)*(tileH+gap)
		canvases[i] = main
		canvases[i].Min.Y, canvases[i].Max.Y = top-tileH, top
		d := p.DataCanvas(canvases[i])
		left = max(left, d.Min.X-canvases[i].Min.X)
		rightPad = max(rightPad, canvases[i].Max.X-d.Max.X)
	}
	for i, p := range f.plots {
		d := p.DataCanvas(canvases[i])
		canvases[i].Min.X += left - (d.Min.X - canvases[i].Min.X)
		canvases[i].Max.X -= rightPad - (canvases[i].Max.X - d.Max.X)
		p.Draw(canvases[i])
		data := p.DataCanvas(canvases[i])
		lc := draw.Crop(c, c.Max.X-c.Min.X-right+stripGap, 0, 0, 0)
		lc.Min.Y, lc.Max.Y = data.Min.Y, data.Max.Y
		f.legends[i].Draw(lc)
	}
}

func (f *panels) save(base string) error {
	return saveDrawing(base, f.w+f.strip()+2*margin, f.h+f.captionHeight(), f.draw)
}
