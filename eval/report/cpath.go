package report

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
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
	// Lambda and Stationary are the other settings the point was solved
	// with; a selection's candidate at C with them is the point's.
	Lambda     float64
	Stationary bool
}

// WriteCPath writes a penalty path beside a policy: prefix+".cpath.csv"
// (one row per point) and the plots prefix+".cpath.png" and ".svg"
// (CPathPlot), each atomically. selection is the policy's record of a
// cross-fitted choice (nil for none); with one, each row also holds the
// held-out scores of the point's candidate (cpathHeldOut).
func WriteCPath(prefix string, pts []CPathPoint, chosen float64, H int, selection json.RawMessage) error {
	sel, err := parseSelection(selection)
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("c,beta,no_evidence_share,value_estimate,robust_fqe,pessimistic_value,behaviour_agreement")
	if sel != nil {
		sb.WriteString(",heldout_score,heldout_value,heldout_ci_low,heldout_ci_high,heldout_worst_site,fallback_score,chosen")
	}
	sb.WriteString("\n")
	for _, p := range pts {
		fmt.Fprintf(&sb, "%g,%g,%g,%g,%g,%g,%g", p.C, p.Beta, p.NoEvidence, p.ValueEstimate, p.RobustValue, p.PessimisticValue, p.Agreement)
		if sel != nil {
			sb.WriteString(sel.heldOutFields(p))
		}
		sb.WriteString("\n")
	}
	if err := fileio.WriteAtomic(prefix+".cpath.csv", func(w io.Writer) error {
		_, err := io.WriteString(w, sb.String())
		return err
	}); err != nil {
		return err
	}
	return CPathPlot(prefix+".cpath", pts, chosen, H, selection)
}

// heldOutFields returns the c-path CSV's held-out fields of point p, each
// after a comma: the score (lower limit) of the learned candidate with
// p's c, lambda and step pooling, its worst site's held-out value and
// that value's interval at the selection's level, the worst site, the
// behaviour fallback's score, and whether the candidate was chosen.
// Fields the record lacks (no such candidate, a null value) are empty.
func (sel *cpathSelection) heldOutFields(p CPathPoint) string {
	num := func(x *float64) string {
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'g', -1, 64)
	}
	var c *cpathCandidate
	for i := range sel.Candidates {
		k := &sel.Candidates[i]
		if !k.isFallback() && *k.C == p.C && *k.Lambda == p.Lambda && (k.Stationary == nil || *k.Stationary == p.Stationary) {
			c = k
			break
		}
	}
	var fallback *float64
	for i := range sel.Candidates {
		if k := &sel.Candidates[i]; k.isFallback() {
			fallback = k.Score
		}
	}
	f := make([]string, 7)
	f[5] = num(fallback)
	f[6] = "false"
	if c != nil {
		f[0], f[4] = num(c.Score), csvField(c.WorstSite)
		for _, st := range c.Sites {
			if st.Site == c.WorstSite {
				f[1], f[2], f[3] = num(st.Value), num(st.CILow), num(st.CIHigh)
			}
		}
		f[6] = strconv.FormatBool(sel.isChosen(c))
	}
	return "," + strings.Join(f, ",")
}

// csvField quotes s as a CSV field when it holds a comma, a quote or a
// line break (RFC 4180).
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
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
// lower limit of the basic interval of the minimum over sites, which the
// choice ranks), the behaviour fallback's score as a
// line, and the chosen candidate ringed; the vertical line then marks the
// chosen c (none when the fallback was chosen). The axis is logarithmic
// when every positive c of the path and the candidates allows it; c = 0
// is then left out.
func CPathPlot(path string, pts []CPathPoint, chosen float64, H int, selection json.RawMessage) error {
	sel, err := parseSelection(selection)
	if err != nil {
		return err
	}
	logX := useLogAxis(pts, sel)
	if logX && !(chosen > 0) {
		chosen = math.NaN()
	}
	drawn := drawnPath{pts: pts, logX: logX}
	values, vleg := drawn.valuesPanel(H)
	shares, sleg := drawn.sharesPanel()
	plots, legends := []*plot.Plot{values, shares}, []*plot.Legend{&vleg, &sleg}
	var hleg plot.Legend
	if sel != nil {
		var held *plot.Plot
		held, hleg, chosen = heldOutPanel(sel, logX)
		plots = []*plot.Plot{values, held, shares}
		legends = []*plot.Legend{&vleg, &hleg, &sleg}
	}
	markChosenC(plots, legends, chosen, logX)
	alignCAxes(plots, logX)
	f := &panels{plots: plots, w: lineWidth, h: 6 * vg.Inch, caption: cpathCaption}
	for _, l := range legends {
		f.legends = append(f.legends, *l)
	}
	if sel != nil {
		f.h = 8.5 * vg.Inch
		f.caption += heldOutCaption(logX)
	}
	return f.save(path)
}

// parseSelection reads a policy's selection record; nil when there is
// none.
func parseSelection(selection json.RawMessage) (*cpathSelection, error) {
	if len(selection) == 0 || string(selection) == "null" {
		return nil, nil
	}
	sel := &cpathSelection{}
	if err := json.Unmarshal(selection, sel); err != nil {
		return nil, fmt.Errorf("report: the policy's selection record: %w", err)
	}
	return sel, nil
}

// useLogAxis reports whether the c axis is logarithmic: without a
// selection, when every c of the path is positive; with one, when the
// positive c of the path and the candidates span at least a decade.
func useLogAxis(pts []CPathPoint, sel *cpathSelection) bool {
	if sel == nil {
		logX := len(pts) > 0
		for _, p := range pts {
			logX = logX && p.C > 0
		}
		return logX
	}
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
	return hi >= 10*lo
}

// setLogAxis puts p's c axis on a logarithmic scale.
func setLogAxis(p *plot.Plot) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
}

// drawnPath is a penalty path on its c axis: a log axis shows positive c
// only.
type drawnPath struct {
	pts  []CPathPoint
	logX bool
}

// newPanel returns a panel over the path's c axis, with a grid.
func (d drawnPath) newPanel(title, xlabel, ylabel string) *plot.Plot {
	p := newPlot(title, xlabel, ylabel)
	addGrid(p, true, true)
	if d.logX {
		setLogAxis(p)
	}
	return p
}

// valuesPanel returns the top panel, the path's values, with its legend;
// its y axis starts no higher than 0.
func (d drawnPath) valuesPanel(H int) (*plot.Plot, plot.Legend) {
	ylabel := "value: expected total reward"
	if H > 0 {
		ylabel = fmt.Sprintf("value: expected total reward\nover H = %d steps", H)
	}
	p := d.newPanel("Penalty path: values and shares as the penalty constant c grows", "", ylabel)
	p.Title.TextStyle.Font.Size = 12
	leg := newLegend()
	d.addSeries(p, &leg, 0, false, "value estimate (the solver's)", func(pt CPathPoint) float64 { return pt.ValueEstimate })
	d.addSeries(p, &leg, 1, false, "robust value from data", func(pt CPathPoint) float64 { return pt.RobustValue })
	d.addSeries(p, &leg, 2, true, "pessimistic value", func(pt CPathPoint) float64 { return pt.PessimisticValue })
	if p.Y.Min > 0 {
		p.Y.Min = 0
	}
	return p, leg
}

// sharesPanel returns the bottom panel, the path's shares on [0, 1], with
// its legend.
func (d drawnPath) sharesPanel() (*plot.Plot, plot.Legend) {
	p := d.newPanel("", "penalty constant c", "share of the data's decisions")
	leg := newLegend()
	d.addSeries(p, &leg, 3, false, "without evidence (fallback)", func(pt CPathPoint) float64 { return pt.NoEvidence })
	d.addSeries(p, &leg, 4, true, "same action as the behaviour", func(pt CPathPoint) float64 { return pt.Agreement })
	p.Y.Min, p.Y.Max = 0, 1
	return p, leg
}

// addSeries draws y over c as a line with points in the given series
// style (dashed if asked) and names it in leg; points the axis cannot
// show, or with a non-finite c or y, are left out.
func (d drawnPath) addSeries(p *plot.Plot, leg *plot.Legend, style int, dashes bool, name string, y func(CPathPoint) float64) {
	ls, gs := seriesStyle(style)
	if dashes {
		ls.Dashes = dashed
	}
	var xy plotter.XYs
	for _, pt := range d.pts {
		if v := y(pt); finite(v) && finite(pt.C) && (!d.logX || pt.C > 0) {
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

// markChosenC draws a vertical line at chosen in every panel and names it
// in the panel's legend, when chosen is finite and on the axis.
func markChosenC(plots []*plot.Plot, legends []*plot.Legend, chosen float64, logX bool) {
	if !finite(chosen) || (logX && !(chosen > 0)) {
		return
	}
	for i, p := range plots {
		l := refLine{Value: chosen, Vertical: true, Style: draw.LineStyle{Color: black, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}}
		p.Add(l)
		legends[i].Add(fmt.Sprintf("chosen c = %.3g", chosen), l)
	}
}

// alignCAxes gives every panel the same c range, the union of theirs;
// [0, 1], or [1, 10] on a log axis, when they have none.
func alignCAxes(plots []*plot.Plot, logX bool) {
	if logX {
		for _, p := range plots {
			fixLogRange(&p.X)
		}
	}
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
}

// cpathCaption explains the penalty path's panels.
const cpathCaption = "Each point is the policy solved at one penalty constant c (the pessimism coefficient beta grows in " +
	"proportion to it). A larger c makes the solver more pessimistic: " +
	"more decisions have no evidence and follow the fallback, and the policy comes closer to the care " +
	"actually given. The dotted vertical line marks the c of the policy written."

// heldOutCaption explains the held-out panel, to follow cpathCaption.
func heldOutCaption(logX bool) string {
	s := " The middle panel shows what c was chosen by: each candidate learned on the other folds of " +
		"trajectories and evaluated on the held-out fold, its worst site's held-out value with that site's interval, and " +
		"its score, the lower limit of the basic bootstrap interval of the minimum over sites (a ranking score whose replicates are paired " +
		"across candidates, optimistic for the minimum), which the choice ranks; a candidate may be chosen only if " +
		"its held-out worst site beats the behaviour fallback's. The ring marks the chosen candidate."
	if logX {
		s += " c = 0 is not drawn on the logarithmic axis."
	}
	return s
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
	Candidates []cpathCandidate `json:"candidates"`
}

// cpathCandidate is one candidate of a selection record.
type cpathCandidate struct {
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
}

// isFallback reports whether c is the behaviour fallback, which has no c
// or no lambda.
func (c *cpathCandidate) isFallback() bool { return c.C == nil || c.Lambda == nil }

// hasScore reports whether c has a finite score.
func (c *cpathCandidate) hasScore() bool { return c.Score != nil && finite(*c.Score) }

// isChosen reports whether c has the chosen settings; a learned choice
// only, never the fallback. A stationary setting missing on either side
// matches any.
func (sel *cpathSelection) isChosen(c *cpathCandidate) bool {
	same := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	sameB := func(a, b *bool) bool { return a == nil || b == nil || *a == *b }
	ch := &sel.Chosen
	return ch.C != nil && same(c.C, ch.C) && same(c.Lambda, ch.Lambda) && sameB(c.Stationary, ch.Stationary)
}

// candidateSetting is a setting of lambda and step pooling; the held-out
// panel draws one series per setting.
type candidateSetting struct {
	lambda     float64
	stationary bool
}

// label names the series of the setting's worst site's values; multi says
// whether the panel has other settings to tell it from.
func (k candidateSetting) label(multi bool) string {
	if !multi {
		return "worst site's value"
	}
	name := fmt.Sprintf("lambda %g", k.lambda)
	if k.stationary {
		name += ", steps pooled"
	}
	return name + ": " + "worst site's value"
}

// heldOutPanel returns the panel of a cross-fitted choice's held-out
// scores over c, with its legend, and the chosen c (NaN when the choice
// is the behaviour fallback): per setting of lambda and step pooling, each
// candidate's worst site's held-out value with that site's interval and
// its score (the lower limit of the basic interval of the minimum over
// sites); the behaviour
// fallback's score as a horizontal line; the chosen candidate ringed.
// Candidates at c = 0 are left out on a log axis.
func heldOutPanel(sel *cpathSelection, logX bool) (*plot.Plot, plot.Legend, float64) {
	p := newPlot("", "", fmt.Sprintf("held out: worst site's value\n(%g%% intervals)", 100*sel.Level))
	addGrid(p, true, true)
	if logX {
		setLogAxis(p)
	}
	leg := newLegend()
	addFallbackScores(p, &leg, sel)
	order, groups := candidateSettings(sel, logX)
	for g, k := range order {
		addSettingSeries(p, &leg, g, k.label(len(order) > 1), sel, groups[k])
	}
	chosen, ring := chosenCandidate(sel, order, groups)
	if len(ring) > 0 {
		sc := &plotter.Scatter{XYs: ring, GlyphStyle: draw.GlyphStyle{Color: black, Radius: vg.Points(7), Shape: draw.RingGlyph{}}}
		p.Add(sc)
		leg.Add("chosen candidate", sc)
	}
	return p, leg, chosen
}

// addFallbackScores draws the behaviour fallback's score, when finite, as
// a horizontal line, in black and named as chosen when the fallback was.
func addFallbackScores(p *plot.Plot, leg *plot.Legend, sel *cpathSelection) {
	for i := range sel.Candidates {
		c := &sel.Candidates[i]
		if !c.isFallback() || !c.hasScore() {
			continue
		}
		l := refLine{Value: *c.Score, Style: draw.LineStyle{Color: grey, Width: vg.Points(1.2), Dashes: dashed}}
		name := "behaviour fallback: score"
		if sel.Chosen.C == nil {
			l.Style.Color, l.Style.Width = black, vg.Points(2)
			name += " (chosen)"
		}
		p.Add(l)
		leg.Add(name, l)
	}
}

// candidateSettings groups the learned candidates the axis can show by
// setting: the settings in the order they first appear, and each one's
// candidates as indices into sel.Candidates.
func candidateSettings(sel *cpathSelection, logX bool) ([]candidateSetting, map[candidateSetting][]int) {
	var order []candidateSetting
	groups := map[candidateSetting][]int{}
	for i, c := range sel.Candidates {
		if c.isFallback() || !finite(*c.C) || (logX && !(*c.C > 0)) {
			continue
		}
		k := candidateSetting{lambda: *c.Lambda, stationary: c.Stationary != nil && *c.Stationary}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	return order, groups
}

// addSettingSeries draws the g-th setting's candidates (indices into
// sel.Candidates) over c: their worst site's values with intervals, named
// name, and their scores dashed.
func addSettingSeries(p *plot.Plot, leg *plot.Legend, g int, name string, sel *cpathSelection, idx []int) {
	ls, gs := seriesStyle(g)
	iv := &intervals{Style: draw.LineStyle{Color: ls.Color, Width: vg.Points(1)}, Cap: vg.Points(5)}
	var vals, scores plotter.XYs
	for _, i := range idx {
		c := &sel.Candidates[i]
		vals = appendWorstSite(vals, iv, c)
		if c.hasScore() {
			scores = append(scores, plotter.XY{X: *c.C, Y: *c.Score})
		}
	}
	if len(vals) > 0 {
		line := &plotter.Line{XYs: vals, LineStyle: ls}
		sc := &plotter.Scatter{XYs: vals, GlyphStyle: gs}
		p.Add(iv, line, sc)
		leg.Add(name, line, sc)
	}
	if len(scores) > 0 {
		sls, sgs := ls, gs
		sls.Dashes = dashed
		sgs.Shape = draw.PyramidGlyph{}
		line := &plotter.Line{XYs: scores, LineStyle: sls}
		sc := &plotter.Scatter{XYs: scores, GlyphStyle: sgs}
		p.Add(line, sc)
		leg.Add("  score (lower limit)", line, sc)
	}
}

// appendWorstSite appends candidate c's worst site's held-out value at
// its c to vals, and that value's interval, when it has one, to iv.
func appendWorstSite(vals plotter.XYs, iv *intervals, c *cpathCandidate) plotter.XYs {
	x := *c.C
	for _, st := range c.Sites {
		if st.Site != c.WorstSite || st.Value == nil {
			continue
		}
		vals = append(vals, plotter.XY{X: x, Y: *st.Value})
		if st.CILow != nil && st.CIHigh != nil {
			iv.add(x, *st.CILow, *st.CIHigh)
		}
	}
	return vals
}

// chosenCandidate returns the c of the chosen candidate among the grouped
// ones (NaN when none is, as when the fallback was chosen) and the ring
// marking its score, empty when the score is not finite.
func chosenCandidate(sel *cpathSelection, order []candidateSetting, groups map[candidateSetting][]int) (float64, plotter.XYs) {
	chosen := math.NaN()
	var ring plotter.XYs
	for _, k := range order {
		for _, i := range groups[k] {
			c := &sel.Candidates[i]
			if !sel.isChosen(c) {
				continue
			}
			chosen = *c.C
			if c.hasScore() {
				ring = append(ring, plotter.XY{X: *c.C, Y: *c.Score})
			}
		}
	}
	return chosen, ring
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
