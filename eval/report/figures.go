package report

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/grmdp/grmdp/eval"
)

// significance is the p-value below which the report calls a cluster's
// heterogeneity real.
const significance = 0.05

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// clusterSeries groups Delta cells by cluster, in order of the clusters'
// first appearance, each sorted by step.
func clusterSeries(cells []eval.DeltaValue) (names []string, byCluster [][]eval.DeltaValue) {
	index := map[string]int{}
	for _, c := range cells {
		i, ok := index[c.Cluster]
		if !ok {
			i = len(names)
			index[c.Cluster] = i
			names = append(names, c.Cluster)
			byCluster = append(byCluster, nil)
		}
		byCluster[i] = append(byCluster[i], c)
	}
	for _, s := range byCluster {
		slices.SortStableFunc(s, func(a, b eval.DeltaValue) int { return a.Step - b.Step })
	}
	return names, byCluster
}

// deltaFigure plots Delta_{h,m} against h, one line per cluster, with the
// yardstick as a dashed horizontal line and rings around cells whose
// permutation p-value is below 0.05.
func deltaFigure(rep *eval.Report) *figure {
	p := newPlot("Within-cluster heterogeneity Δ_h,m by step", "step h",
		"Δ_h,m: largest distance of a site's regression from its cluster's")
	p.Y.Label.TextStyle.Font.Size = 10
	addGrid(p, false, true)
	p.X.Tick.Marker = intTicks{}
	leg := newLegend()
	names, byCluster := clusterSeries(rep.Delta)
	var signif plotter.XYs
	for i, cells := range byCluster {
		ls, gs := seriesStyle(i)
		var pts plotter.XYs
		for _, c := range cells {
			if !finite(c.Delta) {
				continue
			}
			pts = append(pts, plotter.XY{X: float64(c.Step), Y: c.Delta})
			if c.PValue < significance {
				signif = append(signif, plotter.XY{X: float64(c.Step), Y: c.Delta})
			}
		}
		line := &plotter.Line{XYs: pts, LineStyle: ls}
		sc := &plotter.Scatter{XYs: pts, GlyphStyle: gs}
		if len(pts) > 0 {
			p.Add(line, sc)
		}
		leg.Add("cluster "+oneLine(names[i]), line, sc)
	}
	if len(signif) > 0 {
		ring := &plotter.Scatter{XYs: signif, GlyphStyle: draw.GlyphStyle{Color: black, Radius: vg.Points(6.5), Shape: draw.RingGlyph{}}}
		p.Add(ring)
		leg.Add(fmt.Sprintf("p < %g", significance), ring)
	}
	if finite(rep.Yardstick) {
		y := refLine{Value: rep.Yardstick, Style: draw.LineStyle{Color: black, Width: vg.Points(1.2), Dashes: dashed}}
		p.Add(y)
		leg.Add(fmt.Sprintf("yardstick %.4g", rep.Yardstick), y)
		leg.Add("  = 1/√N_min − 1/√N_min^pool")
	}
	// Delta is a distance: the axis starts at 0.
	p.Y.Min = 0
	if p.Y.Max > 0 && !math.IsInf(p.Y.Max, 0) {
		p.Y.Max *= 1.08 // room for the rings
	} else {
		p.Y.Max = 1
	}
	return &figure{plot: p, legend: leg, hasLegend: true, w: lineWidth, h: lineHeight}
}

// siteFigure is a forest plot: one row per site (in the report's order, top
// to bottom) with its value and interval, the robust policy value and its
// lower bound as vertical lines, and the worst site in red; with a model
// each site's exact value, with identification bounds the bounds (grey,
// just above the site's row), and the observed care (just below).
func siteFigure(rep *eval.Report, model bool) *figure {
	n := len(rep.Sites)
	xlabel := "value of the policy at the site"
	if rep.H > 0 {
		xlabel = fmt.Sprintf("value: expected total reward over H = %d steps", rep.H)
	}
	if rep.Bootstrap > 0 {
		xlabel += fmt.Sprintf(", with %.4g%% bootstrap interval", 100*rep.Level)
	}
	p := newPlot("Value of the policy per site", xlabel, "")
	addGrid(p, true, false)
	names := make([]string, n)
	iv := &intervals{Horizontal: true, Style: draw.LineStyle{Color: seriesColors[0], Width: vg.Points(1.2)}, Cap: vg.Points(6)}
	worstIV := &intervals{Horizontal: true, Style: draw.LineStyle{Color: red, Width: vg.Points(1.6)}, Cap: vg.Points(6)}
	var pts, worst plotter.XYs
	worstName := ""
	for i, s := range rep.Sites {
		y := float64(n - 1 - i)
		names[n-1-i] = oneLine(s.Site)
		isWorst := s.Site == rep.WorstSite
		if isWorst {
			worstName = oneLine(s.Site)
		}
		if finite(s.CILow) && finite(s.CIHigh) {
			dst := iv
			if isWorst {
				dst = worstIV
			}
			dst.Pos = append(dst.Pos, y)
			dst.Lo = append(dst.Lo, s.CILow)
			dst.Hi = append(dst.Hi, s.CIHigh)
		}
		if !finite(s.Value) {
			continue
		}
		if isWorst {
			worst = append(worst, plotter.XY{X: s.Value, Y: y})
		} else {
			pts = append(pts, plotter.XY{X: s.Value, Y: y})
		}
	}
	leg := newLegend()
	if finite(rep.PolicyValue) {
		l := refLine{Value: rep.PolicyValue, Vertical: true, Style: draw.LineStyle{Color: black, Width: vg.Points(1.2)}}
		p.Add(l)
		leg.Add(fmt.Sprintf("robust policy value %.4g", rep.PolicyValue), l)
	}
	if finite(rep.LowerBound) {
		l := refLine{Value: rep.LowerBound, Vertical: true, Style: draw.LineStyle{Color: black, Width: vg.Points(1.2), Dashes: dashed}}
		p.Add(l)
		leg.Add(fmt.Sprintf("lower bound %.4g", rep.LowerBound), l)
	}
	dot := &plotter.Scatter{XYs: pts, GlyphStyle: draw.GlyphStyle{Color: seriesColors[0], Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}}
	worstDot := &plotter.Scatter{XYs: worst, GlyphStyle: draw.GlyphStyle{Color: red, Radius: vg.Points(4.5), Shape: draw.CircleGlyph{}}}
	if len(iv.Pos) > 0 {
		p.Add(iv)
	}
	if len(worstIV.Pos) > 0 {
		p.Add(worstIV)
	}
	if len(pts) > 0 {
		p.Add(dot)
	}
	if len(worst) > 0 {
		p.Add(worstDot)
	}
	if len(iv.Pos) > 0 {
		leg.Add("site value and interval", iv, dot)
	} else {
		leg.Add("site value", dot)
	}
	if worstName != "" {
		leg.Add("worst site: "+worstName, worstIV, worstDot)
	}
	if model {
		var ex plotter.XYs
		for i, s := range rep.Sites {
			if finite(s.Exact) {
				ex = append(ex, plotter.XY{X: s.Exact, Y: float64(n - 1 - i)})
			}
		}
		if len(ex) > 0 {
			sc := &plotter.Scatter{XYs: ex, GlyphStyle: draw.GlyphStyle{Color: black, Radius: vg.Points(4), Shape: draw.CrossGlyph{}}}
			p.Add(sc)
			leg.Add("site's exact value (model)", sc)
		}
	}
	if rep.HasBounds {
		bi := &intervals{Horizontal: true, Style: draw.LineStyle{Color: grey, Width: vg.Points(0.8), Dashes: dashed}, Cap: vg.Points(4)}
		for i, s := range rep.Sites {
			if finite(s.Lower) && finite(s.Upper) {
				bi.Pos = append(bi.Pos, float64(n-1-i)+0.22)
				bi.Lo = append(bi.Lo, s.Lower)
				bi.Hi = append(bi.Hi, s.Upper)
			}
		}
		if len(bi.Pos) > 0 {
			p.Add(bi)
			leg.Add("identification bounds (cells without data at 0 and at the maximum)", bi)
		}
	}
	if len(rep.Observed) == n {
		var ob plotter.XYs
		for i, o := range rep.Observed {
			if finite(o.Value) {
				ob = append(ob, plotter.XY{X: o.Value, Y: float64(n-1-i) - 0.22})
			}
		}
		if len(ob) > 0 {
			sc := &plotter.Scatter{XYs: ob, GlyphStyle: draw.GlyphStyle{Color: seriesColors[1], Radius: vg.Points(3.5), Shape: draw.TriangleGlyph{}}}
			p.Add(sc)
			leg.Add("observed care (mean realised return)", sc)
		}
	}
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3
	if pad := 0.05 * (p.X.Max - p.X.Min); pad > 0 && finite(pad) {
		p.X.Min -= pad
		p.X.Max += pad
	}
	h := max(3*vg.Inch, 1.5*vg.Inch+vg.Length(n)*0.28*vg.Inch)
	return &figure{plot: p, legend: leg, hasLegend: true, w: lineWidth, h: h}
}

// coverageGrid is the heat map's grid: column c is column c of counts, row
// r is site K-1-r (so the first site is drawn at the top); a zero count
// maps to -1, below the palette, so that it takes the underflow colour.
type coverageGrid struct{ counts [][]float64 }

func (g coverageGrid) Dims() (c, r int) {
	if len(g.counts) == 0 {
		return 0, 0
	}
	return len(g.counts[0]), len(g.counts)
}
func (g coverageGrid) X(c int) float64 { return float64(c) }
func (g coverageGrid) Y(r int) float64 { return float64(r) }
func (g coverageGrid) Z(c, r int) float64 {
	v := g.counts[len(g.counts)-1-r][c]
	switch {
	case math.IsNaN(v):
		return v
	case v <= 0:
		return -1
	}
	return math.Log10(1 + v)
}

// maxCoverageColumns is the most columns the coverage heat map draws; more
// features than this are binned, so that a feature a site never observes
// never becomes narrower than a pixel and disappears.
const maxCoverageColumns = 600

// binCoverage returns the heat map's columns: one per feature, or, with
// more than maxCoverageColumns features, one per bin of binSize
// consecutive features, holding the bin's smallest count (NaN counts
// ignored) so that a bin with a never-observed feature stays red.
func binCoverage(cov *Coverage) (labels []string, counts [][]float64, binSize int) {
	F := len(cov.Features)
	binSize = max(1, (F+maxCoverageColumns-1)/maxCoverageColumns)
	if binSize == 1 {
		return cov.Features, cov.Counts, 1
	}
	nb := (F + binSize - 1) / binSize
	labels = make([]string, nb)
	for b := range nb {
		first, last := b*binSize, min(F, (b+1)*binSize)-1
		labels[b] = cov.Features[first] + "–" + cov.Features[last]
	}
	counts = make([][]float64, len(cov.Counts))
	for k, row := range cov.Counts {
		counts[k] = make([]float64, nb)
		for b := range nb {
			m := math.NaN()
			for _, v := range row[b*binSize : min(F, (b+1)*binSize)] {
				if !math.IsNaN(v) && !(v >= m) {
					m = v
				}
			}
			counts[k][b] = m
		}
	}
	return labels, counts, binSize
}

// rasterHeat draws a heat map as one image whose cells are whole blocks of
// pixels, at about the resolution of the PNG, so that scaling the image to
// the plot blurs only the cells' edges (plotter.HeatMap's raster mode
// draws one pixel per cell and lets the scaling smear them).
type rasterHeat struct {
	*plotter.HeatMap
}

func (h rasterHeat) Plot(c draw.Canvas, p *plot.Plot) {
	cols, rows := h.GridXYZ.Dims()
	if cols == 0 || rows == 0 {
		return
	}
	xmin, xmax, ymin, ymax := h.DataRange()
	tx, ty := p.Transforms(&c)
	r := vg.Rectangle{Min: vg.Point{X: tx(xmin), Y: ty(ymin)}, Max: vg.Point{X: tx(xmax), Y: ty(ymax)}}
	sx := max(1, int(math.Ceil(float64(r.Size().X.Dots(dpi))/float64(cols))))
	sy := max(1, int(math.Ceil(float64(r.Size().Y.Dots(dpi))/float64(rows))))
	img := image.NewRGBA(image.Rect(0, 0, cols*sx, rows*sy))
	pal := h.Palette.Colors()
	scale := float64(len(pal)-1) / (h.Max - h.Min)
	for i := range cols {
		for j := range rows {
			var col color.Color
			switch v := h.GridXYZ.Z(i, j); {
			case math.IsNaN(v):
				col = h.NaN
			case v < h.Min:
				col = h.Underflow
			case v > h.Max:
				col = h.Overflow
			default:
				col = pal[int((v-h.Min)*scale+0.5)]
			}
			if col == nil {
				continue
			}
			for y := (rows - 1 - j) * sy; y < (rows-j)*sy; y++ {
				for x := i * sx; x < (i+1)*sx; x++ {
					img.Set(x, y, col)
				}
			}
		}
	}
	c.DrawImage(r, img)
}

// coverageMap is light for few observations and dark for many; red, which
// marks features never observed, is not in it.
func coverageMap() palette.ColorMap {
	cm, err := moreland.NewLuminance([]color.Color{
		color.RGBA{R: 0x08, G: 0x1D, B: 0x58, A: 0xFF},
		color.RGBA{R: 0x22, G: 0x5E, B: 0xA8, A: 0xFF},
		color.RGBA{R: 0x41, G: 0xB6, B: 0xC4, A: 0xFF},
		color.RGBA{R: 0xC7, G: 0xE9, B: 0xB4, A: 0xFF},
		color.RGBA{R: 0xFF, G: 0xFF, B: 0xD9, A: 0xFF},
	})
	if err != nil {
		panic("report: coverage colour map: " + err.Error())
	}
	return palette.Reverse(cm)
}

// thinTicks returns ticks at positions pos(i), labelled for at most about
// limit of the labels, evenly spaced; with more than 4*limit labels the
// unlabelled ticks are left out, as they would merge into a bar.
func thinTicks(labels []string, pos func(i int) float64, limit int) plot.ConstantTicks {
	every := max(1, (len(labels)+limit-1)/limit)
	var ticks plot.ConstantTicks
	for i, l := range labels {
		t := plot.Tick{Value: pos(i)}
		if i%every == 0 {
			t.Label = oneLine(l)
		} else if len(labels) > 4*limit {
			continue
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// maxVectorCells is the largest heat map drawn as one rectangle per cell;
// larger ones are drawn as an image, so the SVG stays small.
const maxVectorCells = 20000

// coverageFigure is a heat map of log10(1+count), sites down, features
// across, with zero counts in red and a colour bar at the right.
func coverageFigure(cov *Coverage) *figure {
	labels, counts, binSize := binCoverage(cov)
	K, F := len(cov.Sites), len(labels)
	mx := 0.0
	for _, row := range counts {
		for _, v := range row {
			if v > 0 && finite(v) {
				mx = max(mx, math.Log10(1+v))
			}
		}
	}
	if mx == 0 {
		mx = 1
	}
	cm := coverageMap()
	cm.SetMin(0)
	cm.SetMax(mx)
	xlabel := "feature"
	if binSize > 1 {
		xlabel = fmt.Sprintf("feature, in bins of %d; a bin shows its least-observed feature", binSize)
	}
	p := newPlot("Coverage per site and feature (red: never observed)", xlabel, "")
	hm := plotter.NewHeatMap(coverageGrid{counts}, cm.Palette(256))
	hm.Min, hm.Max = 0, mx
	hm.Underflow = red
	hm.NaN = color.Gray{Y: 0xA0}
	vector := K*F <= maxVectorCells
	if vector {
		p.Add(hm)
	} else {
		p.Add(rasterHeat{hm})
	}
	p.X.Tick.Marker = thinTicks(labels, func(i int) float64 { return float64(i) }, 60)
	p.Y.Tick.Marker = thinTicks(cov.Sites, func(i int) float64 { return float64(K - 1 - i) }, 60)
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.X.Padding, p.Y.Padding = 0, 0
	// Lines between the cells, when the cells are large enough, and the
	// counts in them when there is room to read them.
	if F <= 80 && K <= 80 && vector {
		p.Add(cellBorders{cols: F, rows: K})
	}
	if F <= 24 && K <= 40 && binSize == 1 {
		p.Add(cellCounts{cov: cov, max: mx})
	}

	side := plot.New()
	side.BackgroundColor = color.White
	side.HideX()
	side.Y.Label.Text = "log10(1 + count)"
	side.Y.Label.TextStyle.Font = p.X.Label.TextStyle.Font
	side.Y.Tick.Label.Font = p.Y.Tick.Label.Font
	side.Y.Padding = 0
	side.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true, Colors: 256})

	w := min(14*vg.Inch, max(5*vg.Inch, 2*vg.Inch+vg.Length(F)*0.22*vg.Inch))
	h := min(14*vg.Inch, max(3*vg.Inch, 2.2*vg.Inch+vg.Length(K)*0.3*vg.Inch))
	return &figure{plot: p, side: side, sideWidth: 1.2 * vg.Inch, w: w, h: h}
}

// cellBorders draws thin white lines between heat map cells.
type cellBorders struct{ cols, rows int }

func (b cellBorders) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.White, Width: vg.Points(0.75)}
	for i := 0; i <= b.cols; i++ {
		x := tx(float64(i) - 0.5)
		c.StrokeLine2(sty, x, ty(-0.5), x, ty(float64(b.rows)-0.5))
	}
	for j := 0; j <= b.rows; j++ {
		y := ty(float64(j) - 0.5)
		c.StrokeLine2(sty, tx(-0.5), y, tx(float64(b.cols)-0.5), y)
	}
}

// cellCounts writes each cell's count in it, dark on light cells and white
// on dark ones.
type cellCounts struct {
	cov *Coverage
	max float64 // the top of the colour scale, log10(1+count)
}

func (cc cellCounts) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := p.X.Tick.Label
	sty.Rotation = 0
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	K := len(cc.cov.Sites)
	for k, row := range cc.cov.Counts {
		for j, v := range row {
			sty.Color = black
			if v > 0 && math.Log10(1+v) > 0.55*cc.max || v <= 0 || math.IsNaN(v) {
				sty.Color = color.White
			}
			c.FillText(sty, vg.Point{X: tx(float64(j)), Y: ty(float64(K - 1 - k))}, countLabel(v))
		}
	}
}

// countLabel formats a count compactly: integers as such up to 99999,
// anything else with three significant digits.
func countLabel(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e5 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
