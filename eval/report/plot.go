package report

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line of a [LinePlot]: the points (X[i], Y[i]) joined in the
// order given, with optional intervals [Lo[i], Hi[i]] drawn as error bars.
type Series struct {
	// Name labels the series in the legend; an empty name leaves it out.
	Name string
	// X and Y are the points; they must have the same length.
	X, Y []float64
	// Lo and Hi, when not nil, are the ends of an interval around each
	// point (absolute values, not offsets from Y); both or neither must be
	// given, with the length of Y. A NaN end draws no bar for that point.
	Lo, Hi []float64
	// Dashed draws the series as a dashed line without markers, in the
	// colour of the series just before it when that one is not dashed (a
	// fit drawn after its data), else in a colour of its own.
	Dashed bool
}

// BoxGroup is one box of a [BoxPlot].
type BoxGroup struct {
	Name   string
	Values []float64
}

// Figure sizes of LinePlot and BoxPlot, without the legend strip.
const (
	lineWidth  = 6.5 * vg.Inch
	lineHeight = 4.5 * vg.Inch
)

// LinePlot writes path+".png" and path+".svg": one line per series, with
// markers at the points and error bars where the series has intervals, and
// a legend to the right of the plot.
//
// With logX (logY), points whose X (Y) is not positive cannot be drawn and
// are left out, as are points with a NaN or infinite coordinate; the plot's
// title then says how many points are not shown. An interval with an end
// that is not positive on a log Y axis is left out too (its point stays).
//
// LinePlot returns an error, without writing anything, if a series' X and
// Y differ in length or its Lo and Hi do not match Y. (An error rather than
// a panic: a plot is often the last step of a long run.) The directory of
// path must exist. Each file is written atomically, and the bytes depend
// only on the arguments.
func LinePlot(path string, title, xlabel, ylabel string, series []Series, logX, logY bool) error {
	for _, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("report: series %q has %d x values and %d y values", s.Name, len(s.X), len(s.Y))
		}
		if (s.Lo == nil) != (s.Hi == nil) {
			return fmt.Errorf("report: series %q has only one of Lo and Hi", s.Name)
		}
		if s.Lo != nil && (len(s.Lo) != len(s.Y) || len(s.Hi) != len(s.Y)) {
			return fmt.Errorf("report: series %q has %d points but %d Lo and %d Hi values", s.Name, len(s.Y), len(s.Lo), len(s.Hi))
		}
	}
	p := newPlot(title, xlabel, ylabel)
	addGrid(p, true, true)
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	valid := func(v float64, log bool) bool {
		return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
	}
	leg := newLegend()
	hasLegend := false
	dropped := 0
	style := -1
	for i, s := range series {
		if !s.Dashed || i == 0 || series[i-1].Dashed {
			style++
		}
		ls, gs := seriesStyle(style)
		if s.Dashed {
			ls.Dashes = dashed
		}
		var pts plotter.XYs
		iv := &intervals{Style: draw.LineStyle{Color: ls.Color, Width: vg.Points(1)}, Cap: vg.Points(6)}
		for j := range s.X {
			x, y := s.X[j], s.Y[j]
			if !valid(x, logX) || !valid(y, logY) {
				dropped++
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
			if s.Lo != nil && valid(s.Lo[j], logY) && valid(s.Hi[j], logY) {
				iv.Pos = append(iv.Pos, x)
				iv.Lo = append(iv.Lo, s.Lo[j])
				iv.Hi = append(iv.Hi, s.Hi[j])
			}
		}
		line := &plotter.Line{XYs: pts, LineStyle: ls}
		thumbs := []plot.Thumbnailer{line}
		if len(iv.Pos) > 0 {
			p.Add(iv)
		}
		if len(pts) > 0 {
			p.Add(line)
		}
		if !s.Dashed {
			sc := &plotter.Scatter{XYs: pts, GlyphStyle: gs}
			if len(pts) > 0 {
				p.Add(sc)
			}
			thumbs = append(thumbs, sc)
		}
		if s.Name != "" {
			leg.Add(oneLine(s.Name), thumbs...)
			hasLegend = true
		}
	}
	if logX {
		fixLogRange(&p.X)
	}
	if logY {
		fixLogRange(&p.Y)
	}
	if dropped > 0 {
		what := "points"
		if dropped == 1 {
			what = "point"
		}
		p.Title.Text += fmt.Sprintf("\n(%d %s not shown: nonpositive on a log axis, or not finite)", dropped, what)
		p.Title.TextStyle.Font.Size = 12
	}
	f := &figure{plot: p, legend: leg, hasLegend: hasLegend, w: lineWidth, h: lineHeight}
	return f.save(path)
}

// fixLogRange gives a log axis a drawable range: [1, 10] when it has no
// positive data, and a factor of two either side of a single value.
func fixLogRange(a *plot.Axis) {
	if !(a.Min > 0) || math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || math.IsNaN(a.Max) {
		a.Min, a.Max = 1, 10
	}
	if a.Min == a.Max {
		a.Min, a.Max = a.Min/2, a.Max*2
	}
}

// BoxPlot writes path+".png" and path+".svg": one Tukey box per group, in
// the order given, with the group's name below it. The box spans the
// quartiles, the bar inside it is the median, whiskers reach the furthest
// values within 1.5 times the interquartile range, values beyond them are
// drawn as points, and a cross marks the mean. NaN and infinite values are
// left out; a group with no values left keeps its place, marked "no data".
// The directory of path must exist. Each file is written atomically, and
// the bytes depend only on the arguments.
func BoxPlot(path string, title, ylabel string, groups []BoxGroup) error {
	p := newPlot(title, "", ylabel)
	addGrid(p, false, true)
	width := vg.Points(28)
	if n := len(groups); n > 0 {
		width = min(width, 0.5*lineWidth/vg.Length(n))
	}
	names := make([]string, len(groups))
	longest := 0
	boxStyle := draw.LineStyle{Color: seriesColors[0], Width: vg.Points(1.2)}
	meanStyle := draw.GlyphStyle{Color: seriesColors[1], Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}
	outStyle := draw.GlyphStyle{Color: grey, Radius: vg.Points(2), Shape: draw.RingGlyph{}}
	for i, g := range groups {
		names[i] = oneLine(g.Name)
		longest = max(longest, len(g.Name))
		var vals plotter.Values
		for _, v := range g.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			names[i] += " (no data)"
			continue
		}
		b, err := plotter.NewBoxPlot(width, float64(i), vals)
		if err != nil {
			return fmt.Errorf("report: box of %q: %w", g.Name, err)
		}
		b.FillColor = color.RGBA{R: 0xD6, G: 0xE6, B: 0xF2, A: 0xFF}
		b.BoxStyle = boxStyle
		b.MedianStyle = draw.LineStyle{Color: black, Width: vg.Points(2)}
		b.WhiskerStyle = draw.LineStyle{Color: boxStyle.Color, Width: vg.Points(1)}
		b.GlyphStyle = outStyle
		mean := 0.0
		for _, v := range vals {
			mean += v
		}
		mean /= float64(len(vals))
		p.Add(b, &plotter.Scatter{XYs: plotter.XYs{{X: float64(i), Y: mean}}, GlyphStyle: meanStyle})
	}
	if len(names) > 0 {
		p.NominalX(names...) // it panics on no names
		// Keep every group's place, also an empty last one.
		p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	} else {
		p.HideX()
	}
	if pad := 0.05 * (p.Y.Max - p.Y.Min); pad > 0 && finite(pad) {
		p.Y.Min -= pad
		p.Y.Max += pad
	}
	if len(groups) > 6 || longest > 12 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	leg := newLegend()
	leg.Add("quartiles", &plotter.BarChart{Color: color.RGBA{R: 0xD6, G: 0xE6, B: 0xF2, A: 0xFF}, LineStyle: boxStyle})
	leg.Add("median", &plotter.Line{LineStyle: draw.LineStyle{Color: black, Width: vg.Points(2)}})
	leg.Add("mean", &plotter.Scatter{GlyphStyle: meanStyle})
	leg.Add("beyond 1.5 IQR", &plotter.Scatter{GlyphStyle: outStyle})
	f := &figure{plot: p, legend: leg, hasLegend: true, w: lineWidth, h: lineHeight}
	return f.save(path)
}

// oneLine keeps a name on one line of a legend or a tick label.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
