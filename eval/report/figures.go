package report

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
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
// adjusted permutation p-value is below 0.05, titled and captioned in
// words: what Delta is and which p-values the rings use.
func deltaFigure(rep *eval.Report) *figure {
	p := newPlot("How far the sites' regressions lie from their cluster's, by step",
		"step h of the horizon", "Δ_h,m: distance of the most different site's\nregression from its cluster's pooled one")
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
		leg.Add(fmt.Sprintf("adjusted p < %g: the sites differ", significance), ring)
		leg.Add("  beyond reshuffling's noise")
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
	return &figure{plot: p, legend: leg, hasLegend: true, w: lineWidth, h: lineHeight, caption: deltaCaption(rep)}
}

// deltaCaption says in words what the Delta plot shows and which
// p-values its rings use.
func deltaCaption(rep *eval.Report) string {
	s := "Δ_h,m is how far, at step h, the ridge regression of the most different site of cluster m lies " +
		"from the cluster's pooled regression (the Euclidean distance of their coefficients); 0 means the " +
		"sites agree. Below the dashed yardstick, pooling the cluster's sites gains more precision than " +
		"their differences cost (the paper's criterion, a guide rather than a test)."
	tested := false
	for _, c := range rep.Delta {
		tested = tested || !math.IsNaN(c.PValue)
	}
	if !tested {
		return s + " No permutation p-values were computed."
	}
	s += fmt.Sprintf(" Rings mark adjusted p-values below %g. Each p-value comes from a permutation test "+
		"(trajectories reshuffled among a cluster's sites", significance)
	if rep.Permutations > 0 {
		s += fmt.Sprintf(", %d permutations", rep.Permutations)
	}
	s += ") and is adjusted for all steps and clusters at once by the max-statistic method, so a ring " +
		"anywhere holds the family-wise error at 0.05."
	return s
}

// RobustCaption says why the robust value can lie below every site's own
// value; the site-value figure and the report print it under the plot.
const RobustCaption = "Why the robust value can lie below every site's own value: at each step and for " +
	"each feature the robust evaluation keeps the smallest of the sites' regression coefficients, " +
	"as an adversary that picks each feature's worst site would. Different features can take " +
	"their worst value at different sites, so the combination is worse than any one site."

// notIdentifiedLabel marks a site whose value the data cannot identify.
const notIdentifiedLabel = "not identified"

// siteFigure shows each site's value of the policy with its interval,
// sites along the x axis (the worst in red) and values on the y axis, in
// units of expected total reward over H steps. The robust value is a black
// line across the plot, its bootstrap interval a grey band and its
// pessimistic value a dashed line; a first column, "robust", repeats
// it with its identification bounds and, with a model, its exact value.
// With a model each site's exact value is a cross; identification bounds
// (indicator maps) are grey bars left of a site's interval, the observed
// care (mean realised return) a triangle right of it. A site whose value is
// not identified says so under its name. The caption says why the robust
// value can lie below every site's own value.
func siteFigure(rep *eval.Report, mv *eval.ExactValues) *figure {
	n := len(rep.Sites)
	ylabel := "value of the policy"
	unit := "expected total reward"
	if rep.H > 0 {
		ylabel = fmt.Sprintf("value: expected total reward over H = %d steps", rep.H)
		unit = fmt.Sprintf("expected total reward over H = %d steps", rep.H)
	}
	title := "Value of the policy at each site"
	p := newPlot(title, "site", ylabel)
	addGrid(p, false, true)
	level := ""
	if rep.Bootstrap > 0 {
		level = fmt.Sprintf("%.4g%% ", 100*rep.Level)
	}
	leg := newLegend()
	addRobustLines(p, &leg, rep, level)
	m := newSiteMarks(rep, mv)
	m.addTo(p, &leg, level)
	setSiteAxes(p, m.names)
	caption := RobustCaption + " Values are in " + unit + "."
	if m.notIdentified > 0 || rep.HasBounds && !rep.Identified {
		caption += fmt.Sprintf(" \"%s\": the identification bounds are wider than %g%% of the value range, "+
			"so the data cannot pin the value down, whatever its interval says.", notIdentifiedLabel, 100*eval.IdentifiedShare)
	}
	w := max(lineWidth, 1.5*vg.Inch+vg.Length(n+1)*0.9*vg.Inch)
	return &figure{plot: p, legend: leg, hasLegend: true, w: min(w, 16*vg.Inch), h: lineHeight, caption: caption}
}

// addRobustLines draws the robust value across the plot: its interval as
// a band, its estimate as a line, and the pessimistic value dashed.
func addRobustLines(p *plot.Plot, leg *plot.Legend, rep *eval.Report, level string) {
	if finite(rep.ValueCILow) && finite(rep.ValueCIHigh) {
		b := band{Lo: rep.ValueCILow, Hi: rep.ValueCIHigh, Fill: color.Gray{Y: 0xDD}}
		p.Add(b)
		leg.Add(fmt.Sprintf("robust value's %sinterval [%.4g, %.4g]", level, rep.ValueCILow, rep.ValueCIHigh), b)
	}
	if finite(rep.PolicyValue) {
		l := refLine{Value: rep.PolicyValue, Style: draw.LineStyle{Color: black, Width: vg.Points(1.2)}}
		p.Add(l)
		leg.Add(fmt.Sprintf("robust value %.4g (from data)", rep.PolicyValue), l)
	}
	if finite(rep.PessimisticValue) && rep.PessimisticValue != rep.PolicyValue {
		l := refLine{Value: rep.PessimisticValue, Style: draw.LineStyle{Color: black, Width: vg.Points(1), Dashes: dashed}}
		p.Add(l)
		leg.Add(fmt.Sprintf("pessimistic value %.4g", rep.PessimisticValue), l)
	}
}

// Offsets from a site's column of its identification bounds (left) and
// its observed care (right).
const (
	boundsOff = -0.25
	obsOff    = 0.25
)

// siteMarks are the site figure's marks. Column 0 is the robust value,
// columns 1..n the sites.
type siteMarks struct {
	names              []string
	iv, worstIV, bi    *intervals
	pts, worst, ex, ob plotter.XYs
	worstName          string
	notIdentified      int // sites whose value is not identified
}

// newSiteMarks places the robust value's and every site's marks.
func newSiteMarks(rep *eval.Report, mv *eval.ExactValues) *siteMarks {
	n := len(rep.Sites)
	m := &siteMarks{
		names:   make([]string, n+1),
		iv:      &intervals{Style: draw.LineStyle{Color: seriesColors[0], Width: vg.Points(1.4)}, Cap: vg.Points(7)},
		worstIV: &intervals{Style: draw.LineStyle{Color: red, Width: vg.Points(1.6)}, Cap: vg.Points(7)},
		bi:      &intervals{Style: draw.LineStyle{Color: grey, Width: vg.Points(3.5)}, Cap: vg.Points(0)},
	}
	m.names[0] = "robust\n(worst site\nper feature)"
	if rep.HasBounds && !rep.Identified {
		m.names[0] += "\n" + notIdentifiedLabel
	}
	if rep.HasBounds && finite(rep.Lower) && finite(rep.Upper) {
		m.bi.add(boundsOff, rep.Lower, rep.Upper)
	}
	if finite(rep.PolicyValue) {
		m.pts = append(m.pts, plotter.XY{X: 0, Y: rep.PolicyValue})
	}
	if finite(rep.ValueCILow) && finite(rep.ValueCIHigh) {
		m.iv.add(0, rep.ValueCILow, rep.ValueCIHigh)
	}
	if mv != nil && finite(mv.PolicyValue) {
		m.ex = append(m.ex, plotter.XY{X: 0, Y: mv.PolicyValue})
	}
	for i, s := range rep.Sites {
		m.addSite(rep, i+1, s, mv != nil)
	}
	if len(rep.Observed) == n {
		for i, o := range rep.Observed {
			if finite(o.Value) {
				m.ob = append(m.ob, plotter.XY{X: float64(i+1) + obsOff, Y: o.Value})
			}
		}
	}
	return m
}

// add appends the interval [lo, hi] at position x.
func (iv *intervals) add(x, lo, hi float64) {
	iv.Pos, iv.Lo, iv.Hi = append(iv.Pos, x), append(iv.Lo, lo), append(iv.Hi, hi)
}

// addSite places site s's marks in column i; hasModel says whether the
// exact values under a model are drawn.
func (m *siteMarks) addSite(rep *eval.Report, i int, s eval.SiteValue, hasModel bool) {
	x := float64(i)
	m.names[i] = oneLine(s.Site)
	if rep.HasBounds && !s.Identified {
		m.names[i] += "\n" + notIdentifiedLabel
		m.notIdentified++
	}
	isWorst := s.Site == rep.WorstSite
	if isWorst {
		m.worstName = oneLine(s.Site)
	}
	if finite(s.CILow) && finite(s.CIHigh) {
		dst := m.iv
		if isWorst {
			dst = m.worstIV
		}
		dst.add(x, s.CILow, s.CIHigh)
	}
	if rep.HasBounds && finite(s.Lower) && finite(s.Upper) {
		m.bi.add(x+boundsOff, s.Lower, s.Upper)
	}
	if hasModel && finite(s.Exact) {
		m.ex = append(m.ex, plotter.XY{X: x, Y: s.Exact})
	}
	if finite(s.Value) {
		if isWorst {
			m.worst = append(m.worst, plotter.XY{X: x, Y: s.Value})
		} else {
			m.pts = append(m.pts, plotter.XY{X: x, Y: s.Value})
		}
	}
}

// addTo draws the marks that have points and lists them in the legend.
func (m *siteMarks) addTo(p *plot.Plot, leg *plot.Legend, level string) {
	iv, worstIV, bi, ex, ob := m.iv, m.worstIV, m.bi, m.ex, m.ob
	dot := &plotter.Scatter{XYs: m.pts, GlyphStyle: draw.GlyphStyle{Color: seriesColors[0], Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}}
	worstDot := &plotter.Scatter{XYs: m.worst, GlyphStyle: draw.GlyphStyle{Color: red, Radius: vg.Points(4.5), Shape: draw.CircleGlyph{}}}
	exDot := &plotter.Scatter{XYs: ex, GlyphStyle: draw.GlyphStyle{Color: black, Radius: vg.Points(4.5), Shape: draw.CrossGlyph{}}}
	obDot := &plotter.Scatter{XYs: ob, GlyphStyle: draw.GlyphStyle{Color: seriesColors[1], Radius: vg.Points(4), Shape: draw.TriangleGlyph{}}}
	for _, x := range []plot.Plotter{bi, iv, worstIV} {
		if iv, ok := x.(*intervals); ok && len(iv.Pos) == 0 {
			continue
		}
		p.Add(x)
	}
	for _, sc := range []*plotter.Scatter{dot, worstDot, obDot, exDot} {
		if len(sc.XYs) > 0 {
			p.Add(sc)
		}
	}
	if len(iv.Pos) > 0 {
		leg.Add(fmt.Sprintf("estimate from data, %sbootstrap interval", level), iv, dot)
	} else {
		leg.Add("estimate from data", dot)
	}
	if m.worstName != "" {
		leg.Add("worst site: "+m.worstName, worstIV, worstDot)
	}
	if len(ex) > 0 {
		leg.Add("exact value under the model", exDot)
	}
	if len(bi.Pos) > 0 {
		leg.Add("identification bounds: cells without data", bi)
		leg.Add("  counted as 0 and as their maximum")
	}
	if len(ob) > 0 {
		leg.Add("observed care: mean realised return", obDot)
		leg.Add("  of the care actually given")
	}
}

// setSiteAxes labels the site columns, tilting the labels when there are
// many, and starts the value axis at 0 unless a value is negative.
func setSiteAxes(p *plot.Plot, names []string) {
	n := len(names) - 1
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(n)+0.6
	p.X.Tick.Label.Font.Size = 9
	if n > 8 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YTop
	}
	// Values are totals of rewards: start the axis at 0 unless a value is
	// negative.
	p.Y.Min = math.Min(0, p.Y.Min)
	if pad := 0.05 * (p.Y.Max - p.Y.Min); pad > 0 && finite(pad) {
		p.Y.Max += pad
		if p.Y.Min < 0 {
			p.Y.Min -= pad
		}
	}
}

// coverageGrid is the heat map's grid: column c is column c of classes,
// row r is site K-1-r (so the first site is drawn at the top).
type coverageGrid struct{ classes [][]float64 }

func (g coverageGrid) Dims() (c, r int) {
	if len(g.classes) == 0 {
		return 0, 0
	}
	return len(g.classes[0]), len(g.classes)
}
func (g coverageGrid) X(c int) float64    { return float64(c) }
func (g coverageGrid) Y(r int) float64    { return float64(r) }
func (g coverageGrid) Z(c, r int) float64 { return g.classes[len(g.classes)-1-r][c] }

// coverageClasses are the classes of the coverage map: class 0 holds the
// zero counts (never observed), and a positive count c falls in the first
// other class whose Below exceeds it. The limits are fixed, so that a
// colour means the same number of observations in every report.
var coverageClasses = []struct {
	Label string
	Below float64
	Color color.Color
}{
	{"0: never observed", 0, red},
	{"1–4", 5, color.RGBA{R: 0xC6, G: 0xDB, B: 0xEF, A: 0xFF}},
	{"5–19", 20, color.RGBA{R: 0x6B, G: 0xAE, B: 0xD6, A: 0xFF}},
	{"20–99", 100, color.RGBA{R: 0x21, G: 0x71, B: 0xB5, A: 0xFF}},
	{"100 or more", math.Inf(1), color.RGBA{R: 0x08, G: 0x30, B: 0x6B, A: 0xFF}},
}

// coverageClass returns the class of a count (NaN stays NaN).
func coverageClass(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return v
	case v <= 0:
		return 0
	}
	for i := 1; i < len(coverageClasses); i++ {
		if v < coverageClasses[i].Below {
			return float64(i)
		}
	}
	return float64(len(coverageClasses) - 1)
}

// classPalette is the palette of coverageClasses, one colour per class.
type classPalette struct{}

func (classPalette) Colors() []color.Color {
	out := make([]color.Color, len(coverageClasses))
	for i, c := range coverageClasses {
		out[i] = c.Color
	}
	return out
}

// maxCoverageColumns is the most columns the coverage heat map draws; more
// features than this are binned, so that a feature a site never observes
// never becomes narrower than a pixel and disappears.
const maxCoverageColumns = 600

// columnGroup is a run of heat map columns [Start, End) that belong to one
// action.
type columnGroup struct {
	Label      string
	Start, End int
}

// coverageLayout returns the heat map's columns: the features ordered by
// action when cov.FeatureAction is given (features of no action last), one
// column per feature or, with more than maxCoverageColumns features, one
// per bin of binSize consecutive features of one action, holding the bin's
// smallest count (NaN counts ignored) so that a bin with a never-observed
// feature shows it; and the columns' action groups (nil without
// FeatureAction).
func coverageLayout(cov *Coverage) (labels []string, counts [][]float64, binSize int, groups []columnGroup) {
	F := len(cov.Features)
	binSize = max(1, (F+maxCoverageColumns-1)/maxCoverageColumns)
	// runs of feature indices, one per action (or one in all).
	type run struct {
		label string
		feats []int
	}
	var runs []run
	if len(cov.FeatureAction) == F {
		nA := 0
		for _, a := range cov.FeatureAction {
			nA = max(nA, a+1)
		}
		byAction := make([][]int, nA+1)
		for j, a := range cov.FeatureAction {
			if a < 0 {
				a = nA
			}
			byAction[a] = append(byAction[a], j)
		}
		for a, feats := range byAction {
			if len(feats) == 0 {
				continue
			}
			label := "no action"
			if a < nA {
				label = fmt.Sprintf("a%d", a)
				if a < len(cov.Actions) {
					label = cov.Actions[a]
				}
			}
			runs = append(runs, run{label, feats})
		}
	} else {
		all := make([]int, F)
		for j := range all {
			all[j] = j
		}
		runs = []run{{"", all}}
	}
	counts = make([][]float64, len(cov.Counts))
	for _, r := range runs {
		start := len(labels)
		for b := 0; b < len(r.feats); b += binSize {
			bin := r.feats[b:min(len(r.feats), b+binSize)]
			l := cov.Features[bin[0]]
			if len(bin) > 1 {
				l += "–" + cov.Features[bin[len(bin)-1]]
			}
			labels = append(labels, l)
			for k, row := range cov.Counts {
				m := math.NaN()
				for _, j := range bin {
					if v := row[j]; !math.IsNaN(v) && !(v >= m) {
						m = v
					}
				}
				counts[k] = append(counts[k], m)
			}
		}
		if len(cov.FeatureAction) == F {
			groups = append(groups, columnGroup{Label: r.label, Start: start, End: len(labels)})
		}
	}
	return labels, counts, binSize, groups
}

// binCoverage is coverageLayout without the groups.
func binCoverage(cov *Coverage) (labels []string, counts [][]float64, binSize int) {
	labels, counts, binSize, _ = coverageLayout(cov)
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

// maxLabelledColumns is the most columns labelled one by one; wider maps
// with action groups label the groups instead.
const maxLabelledColumns = 40

// coverageFigure is a heat map of how often each site observes each
// feature, sites down and features across (grouped by action, the actions
// named on the axis, when the input says which action each feature
// belongs to), the counts binned into the fixed classes of
// coverageClasses, zero counts in red, with a legend of the classes.
func coverageFigure(cov *Coverage) *figure {
	labels, counts, binSize, groups := coverageLayout(cov)
	K, F := len(cov.Sites), len(labels)
	classes := make([][]float64, len(counts))
	for k, row := range counts {
		classes[k] = make([]float64, len(row))
		for j, v := range row {
			classes[k][j] = coverageClass(v)
		}
	}
	xlabel := "feature"
	if groups != nil {
		xlabel = "action (the features of each action side by side)"
		if F <= maxLabelledColumns {
			xlabel = "feature (grouped by action)"
		}
	}
	if binSize > 1 {
		xlabel += fmt.Sprintf("; in bins of %d features, a bin shows its least-observed one", binSize)
	}
	p := newPlot("Observations per site and feature (all steps)", xlabel, "site")
	hm := plotter.NewHeatMap(coverageGrid{classes}, classPalette{})
	hm.Min, hm.Max = 0, float64(len(coverageClasses)-1)
	hm.NaN = color.Gray{Y: 0xA0}
	vector := K*F <= maxVectorCells
	if vector {
		p.Add(hm)
	} else {
		p.Add(rasterHeat{hm})
	}
	p.Y.Tick.Marker = thinTicks(cov.Sites, func(i int) float64 { return float64(K - 1 - i) }, 60)
	if groups != nil && F > maxLabelledColumns {
		var ticks plot.ConstantTicks
		for _, g := range groups {
			ticks = append(ticks, plot.Tick{Value: float64(g.Start+g.End-1) / 2, Label: oneLine(g.Label)})
		}
		p.X.Tick.Marker = ticks
		p.X.Tick.Length = 0
		if len(groups) > 12 {
			p.X.Tick.Label.Rotation = math.Pi / 2
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
		}
	} else {
		p.X.Tick.Marker = thinTicks(labels, func(i int) float64 { return float64(i) }, 60)
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.X.Padding, p.Y.Padding = 0, 0
	// Lines between the cells, when the cells are large enough, and the
	// counts in them when there is room to read them.
	if F <= 80 && K <= 80 && vector {
		p.Add(cellBorders{cols: F, rows: K})
	}
	if len(groups) > 1 {
		p.Add(groupLines{groups: groups, rows: K})
	}
	if F <= 24 && K <= 40 && binSize == 1 {
		p.Add(cellCounts{counts: counts, classes: classes})
	}
	leg := newLegend()
	leg.Add("observations (rows)")
	for _, c := range coverageClasses {
		leg.Add(c.Label, swatch{c.Color})
	}
	if hasNaN(classes) {
		leg.Add("not counted", swatch{hm.NaN})
	}
	w := min(14*vg.Inch, max(5*vg.Inch, 2*vg.Inch+vg.Length(F)*0.22*vg.Inch))
	h := min(14*vg.Inch, max(3*vg.Inch, 2.2*vg.Inch+vg.Length(K)*0.3*vg.Inch))
	return &figure{plot: p, legend: leg, hasLegend: true, w: w, h: h, caption: coverageCaption(len(groups) > 1)}
}

// coverageCaption is the coverage map's caption; grouped says its
// features are grouped by action.
func coverageCaption(grouped bool) string {
	s := "Each cell counts the rows (all steps) at which the site observed the feature, binned into the " +
		"classes 0, 1–4, 5–19, 20–99 and 100 or more. A red cell is a feature the site never observed: the " +
		"site's estimates for it rest on the ridge penalty alone."
	if grouped {
		s += " The features of each action stand side by side, black lines between the actions."
	}
	return s
}

func hasNaN(x [][]float64) bool {
	for _, row := range x {
		for _, v := range row {
			if math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

// swatch is a legend thumbnail filled with one colour.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.SetColor(s.c)
	r := c.Rectangle
	side := min(r.Max.Y-r.Min.Y, r.Max.X-r.Min.X)
	x := r.Min.X + (r.Max.X-r.Min.X-side)/2
	c.Fill(vg.Rectangle{Min: vg.Point{X: x, Y: r.Min.Y}, Max: vg.Point{X: x + side, Y: r.Min.Y + side}}.Path())
}

// groupLines draws black lines between the action groups of a heat map.
type groupLines struct {
	groups []columnGroup
	rows   int
}

func (g groupLines) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := draw.LineStyle{Color: black, Width: vg.Points(1.2)}
	for _, gr := range g.groups[1:] {
		x := tx(float64(gr.Start) - 0.5)
		c.StrokeLine2(sty, x, ty(-0.5), x, ty(float64(g.rows)-0.5))
	}
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

// cellCounts writes each cell's count in it, white on the dark classes
// and on red, dark on the light ones.
type cellCounts struct {
	counts, classes [][]float64
}

func (cc cellCounts) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := p.X.Tick.Label
	sty.Rotation = 0
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	K := len(cc.counts)
	for k, row := range cc.counts {
		for j, v := range row {
			sty.Color = black
			if cl := cc.classes[k][j]; cl == 0 || cl >= 3 || math.IsNaN(cl) {
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
