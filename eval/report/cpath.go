package report

import (
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
// (CPathPlot), each atomically.
func WriteCPath(prefix string, pts []CPathPoint, chosen float64, H int) error {
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
	return CPathPlot(prefix+".cpath", pts, chosen, H)
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
func CPathPlot(path string, pts []CPathPoint, chosen float64, H int) error {
	logX := len(pts) > 0
	for _, p := range pts {
		logX = logX && p.C > 0
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
	vleg, sleg := newLegend(), newLegend()
	series(values, &vleg, 0, false, "value estimate (the solver's)", func(p CPathPoint) float64 { return p.ValueEstimate })
	series(values, &vleg, 1, false, "robust value from data", func(p CPathPoint) float64 { return p.RobustValue })
	series(values, &vleg, 2, true, "pessimistic value", func(p CPathPoint) float64 { return p.PessimisticValue })
	series(shares, &sleg, 3, false, "without evidence (fallback)", func(p CPathPoint) float64 { return p.NoEvidence })
	series(shares, &sleg, 4, true, "same action as the behaviour", func(p CPathPoint) float64 { return p.Agreement })
	if finite(chosen) {
		for i, p := range []*plot.Plot{values, shares} {
			l := refLine{Value: chosen, Vertical: true, Style: draw.LineStyle{Color: black, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}}
			p.Add(l)
			leg := []*plot.Legend{&vleg, &sleg}[i]
			leg.Add(fmt.Sprintf("chosen c = %.3g", chosen), l)
		}
	}
	shares.Y.Min, shares.Y.Max = 0, 1
	if values.Y.Min > 0 {
		values.Y.Min = 0
	}
	for _, p := range []*plot.Plot{values, shares} {
		if logX {
			fixLogRange(&p.X)
		}
	}
	// Both panels span the same c range.
	lo, hi := math.Min(values.X.Min, shares.X.Min), math.Max(values.X.Max, shares.X.Max)
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
		if logX {
			lo, hi = 1, 10
		}
	}
	values.X.Min, values.X.Max, shares.X.Min, shares.X.Max = lo, hi, lo, hi
	f := &panels{plots: []*plot.Plot{values, shares}, legends: []plot.Legend{vleg, sleg}, w: lineWidth, h: 6 * vg.Inch,
		caption: "Each point is the policy solved at one penalty constant c (the pessimism coefficient beta grows in " +
			"proportion to it). A larger c makes the solver more pessimistic: " +
			"more decisions have no evidence and follow the fallback, and the policy comes closer to the care " +
			"actually given. The dotted vertical line marks the c of the policy written."}
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
