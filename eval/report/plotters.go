package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// refLine is a reference line across the whole data area: horizontal at
// y = Value, or vertical at x = Value. It widens the axis range to include
// Value, and its legend thumbnail is a short line.
type refLine struct {
	Value    float64
	Vertical bool
	Style    draw.LineStyle
}

func (r refLine) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	var a, b vg.Point
	if r.Vertical {
		x := tx(r.Value)
		a, b = vg.Point{X: x, Y: c.Min.Y}, vg.Point{X: x, Y: c.Max.Y}
	} else {
		y := ty(r.Value)
		a, b = vg.Point{X: c.Min.X, Y: y}, vg.Point{X: c.Max.X, Y: y}
	}
	c.StrokeLines(r.Style, c.ClipLinesXY([]vg.Point{a, b})...)
}

func (r refLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	inf := math.Inf(1)
	if r.Vertical {
		return r.Value, r.Value, inf, -inf
	}
	return inf, -inf, r.Value, r.Value
}

func (r refLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(r.Style, c.Min.X, y, c.Max.X, y)
}

// intervals draws one interval [Lo[i], Hi[i]] at position Pos[i] with caps:
// vertical bars at x = Pos[i], or, with Horizontal, horizontal bars at
// y = Pos[i]. Unlike plotter.YErrorBars the ends are absolute values, so
// an interval that does not contain its point estimate is drawn as it is.
type intervals struct {
	Pos, Lo, Hi []float64
	Horizontal  bool
	Style       draw.LineStyle
	Cap         vg.Length
}

func (iv *intervals) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for i := range iv.Pos {
		if iv.Horizontal {
			y, lo, hi := ty(iv.Pos[i]), tx(iv.Lo[i]), tx(iv.Hi[i])
			c.StrokeLines(iv.Style, c.ClipLinesX([]vg.Point{{X: lo, Y: y}, {X: hi, Y: y}})...)
			for _, x := range []vg.Length{lo, hi} {
				if c.ContainsX(x) {
					c.StrokeLine2(iv.Style, x, y-iv.Cap/2, x, y+iv.Cap/2)
				}
			}
			continue
		}
		x, lo, hi := tx(iv.Pos[i]), ty(iv.Lo[i]), ty(iv.Hi[i])
		c.StrokeLines(iv.Style, c.ClipLinesY([]vg.Point{{X: x, Y: lo}, {X: x, Y: hi}})...)
		for _, y := range []vg.Length{lo, hi} {
			if c.ContainsY(y) {
				c.StrokeLine2(iv.Style, x-iv.Cap/2, y, x+iv.Cap/2, y)
			}
		}
	}
}

func (iv *intervals) DataRange() (xmin, xmax, ymin, ymax float64) {
	pmin, pmax := math.Inf(1), math.Inf(-1)
	vmin, vmax := math.Inf(1), math.Inf(-1)
	for i := range iv.Pos {
		pmin, pmax = math.Min(pmin, iv.Pos[i]), math.Max(pmax, iv.Pos[i])
		vmin = math.Min(vmin, math.Min(iv.Lo[i], iv.Hi[i]))
		vmax = math.Max(vmax, math.Max(iv.Lo[i], iv.Hi[i]))
	}
	if iv.Horizontal {
		return vmin, vmax, pmin, pmax
	}
	return pmin, pmax, vmin, vmax
}

// GlyphBoxes keeps the caps inside the plot.
func (iv *intervals) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	var boxes []plot.GlyphBox
	r := vg.Rectangle{Min: vg.Point{X: -iv.Cap / 2, Y: -iv.Cap / 2}, Max: vg.Point{X: iv.Cap / 2, Y: iv.Cap / 2}}
	for i := range iv.Pos {
		for _, v := range []float64{iv.Lo[i], iv.Hi[i]} {
			x, y := p.X.Norm(iv.Pos[i]), p.Y.Norm(v)
			if iv.Horizontal {
				x, y = p.X.Norm(v), p.Y.Norm(iv.Pos[i])
			}
			boxes = append(boxes, plot.GlyphBox{X: x, Y: y, Rectangle: r})
		}
	}
	return boxes
}

func (iv *intervals) Thumbnail(c *draw.Canvas) {
	x, y := c.Center().X, c.Center().Y
	h := (c.Max.Y - c.Min.Y) / 2
	c.StrokeLine2(iv.Style, x, y-h, x, y+h)
	c.StrokeLine2(iv.Style, x-iv.Cap/2, y-h, x+iv.Cap/2, y-h)
	c.StrokeLine2(iv.Style, x-iv.Cap/2, y+h, x+iv.Cap/2, y+h)
}

// band fills the horizontal strip Lo <= y <= Hi across the data area; its
// legend thumbnail is a filled box.
type band struct {
	Lo, Hi float64
	Fill   color.Color
}

func (b band) Plot(c draw.Canvas, p *plot.Plot) {
	_, ty := p.Transforms(&c)
	lo, hi := max(ty(b.Lo), c.Min.Y), min(ty(b.Hi), c.Max.Y)
	if hi < lo {
		return
	}
	if hi-lo < vg.Points(1) {
		mid := (lo + hi) / 2
		lo, hi = mid-vg.Points(0.5), mid+vg.Points(0.5)
	}
	c.SetColor(b.Fill)
	c.Fill(vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: lo}, Max: vg.Point{X: c.Max.X, Y: hi}}.Path())
}

func (b band) DataRange() (xmin, xmax, ymin, ymax float64) {
	inf := math.Inf(1)
	return inf, -inf, b.Lo, b.Hi
}

func (b band) Thumbnail(c *draw.Canvas) {
	c.SetColor(b.Fill)
	c.Fill(c.Rectangle.Path())
}
