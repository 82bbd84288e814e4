package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/grmdp/grmdp/io/fileio"
)

// dpi is the resolution of the PNG files.
const dpi = 150

// Every text on a figure is set in Liberation Sans, which gonum/plot embeds
// (so the PNG bytes do not depend on the fonts installed) and which is
// metric-compatible with Arial and Helvetica (so an SVG viewer that does not
// have it substitutes a font of the same widths).
var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: stdfont.WeightBold}
)

// Colours: the Okabe-Ito palette, which stays distinguishable under the
// common colour-vision deficiencies, ordered so that the first few are the
// most distinct on white.
var seriesColors = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
}

var (
	black    = color.Black
	grey     = color.Gray{Y: 0x60}
	gridGrey = color.Gray{Y: 0xE0}
	red      = color.RGBA{R: 0xD7, G: 0x19, B: 0x1C, A: 0xFF}
)

// seriesShapes vary with the colour, so that series stay apart in grey
// print; together with the colours they give 7*4 distinct styles before
// repeating, and the dash patterns of LinePlot add more.
var seriesShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{},
}

// dashes are the line patterns; the first is solid.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)},
}

// seriesStyle returns the line and glyph style of the i-th series.
func seriesStyle(i int) (draw.LineStyle, draw.GlyphStyle) {
	c := seriesColors[i%len(seriesColors)]
	ls := draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: dashes[(i/len(seriesColors))%len(dashes)]}
	gs := draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: seriesShapes[i%len(seriesShapes)]}
	return ls, gs
}

var dashed = []vg.Length{vg.Points(6), vg.Points(3)}

// newPlot returns a plot with the package's fonts, a light grid and the
// given labels.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = color.White
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansBold, 13)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 9)
		a.Padding = vg.Points(4)
	}
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Legend.TextStyle.Font = font.From(sans, 9)
	return p
}

// addGrid adds grid lines at the major ticks, behind whatever is added
// later; vertical and horizontal say which lines to draw.
func addGrid(p *plot.Plot, vertical, horizontal bool) {
	g := plotter.NewGrid()
	g.Vertical.Color = gridGrey
	g.Horizontal.Color = gridGrey
	g.Vertical.Width = vg.Points(0.5)
	g.Horizontal.Width = vg.Points(0.5)
	if !vertical {
		g.Vertical.Width = 0
	}
	if !horizontal {
		g.Horizontal.Width = 0
	}
	p.Add(g)
}

// newLegend returns an empty legend in the package's font, to be drawn
// beside the plot rather than over its data.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(sans, 9)
	l.Top = true
	l.Left = true
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(24)
	return l
}

// figure is a plot, optionally with a legend or a second plot (a colour
// bar) in a strip at its right.
type figure struct {
	plot *plot.Plot
	// legend is drawn at the top of the right strip when it has entries.
	legend    plot.Legend
	hasLegend bool
	// side, when not nil, fills the right strip (sideWidth wide).
	side      *plot.Plot
	sideWidth vg.Length
	// w and h are the size of the main plot; the strip adds to w and the
	// caption to h.
	w, h vg.Length
	// caption, when not empty, is printed under the plot across the whole
	// figure, wrapped to its width.
	caption string
}

const (
	stripGap = vg.Length(8) // between the plot and the strip
	margin   = vg.Length(6) // around the figure
)

// strip returns the width of the right strip.
func (f *figure) strip() vg.Length {
	var right vg.Length
	if f.hasLegend {
		r := f.legend.Rectangle(draw.Canvas{})
		right = r.Max.X - r.Min.X + 2*stripGap
	}
	if f.side != nil {
		right = max(right, f.sideWidth)
	}
	return right
}

// captionStyle is the text style of a figure's caption.
func captionStyle() text.Style {
	return text.Style{Color: black, Font: font.From(sans, 9), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YTop}
}

// captionLines wraps f.caption to the figure's width.
func (f *figure) captionLines() []string {
	if f.caption == "" {
		return nil
	}
	sty := captionStyle()
	return wrapText(f.caption, f.w+f.strip()-2*margin, func(s string) vg.Length { return sty.Width(s) })
}

// captionHeight is the height the caption adds below the plot.
func (f *figure) captionHeight() vg.Length {
	lines := f.captionLines()
	if len(lines) == 0 {
		return 0
	}
	sty := captionStyle()
	return vg.Length(len(lines))*sty.Handler.Extents(sty.Font).Height*1.2 + margin
}

// wrapText breaks s into lines no wider than width (a single word wider
// than width keeps a line of its own); a newline in s breaks a line.
func wrapText(s string, width vg.Length, measure func(string) vg.Length) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			try := w
			if line != "" {
				try = line + " " + w
			}
			if line != "" && measure(try) > width {
				lines = append(lines, line)
				try = w
			}
			line = try
		}
		lines = append(lines, line)
	}
	return lines
}

// drawCaption prints lines at the bottom of c and returns the rest of c.
func drawCaption(c draw.Canvas, lines []string) draw.Canvas {
	if len(lines) == 0 {
		return c
	}
	sty := captionStyle()
	lh := sty.Handler.Extents(sty.Font).Height * 1.2
	ch := vg.Length(len(lines))*lh + margin
	y := c.Min.Y + ch - margin
	for _, l := range lines {
		c.FillText(sty, vg.Point{X: c.Min.X, Y: y}, l)
		y -= lh
	}
	return draw.Crop(c, 0, 0, ch, 0)
}

// draw renders f onto c, which is f.w+f.strip() wide and f.h plus the
// caption's height high.
func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, margin, -margin, margin, -margin)
	c = drawCaption(c, f.captionLines())
	right := f.strip()
	main := draw.Crop(c, 0, -right, 0, 0)
	f.plot.Draw(main)
	if right == 0 {
		return
	}
	data := f.plot.DataCanvas(main)
	strip := draw.Crop(c, c.Max.X-c.Min.X-right+stripGap, 0, 0, 0)
	if f.side != nil {
		// Line the side plot's data area up with the main one's.
		sc := strip
		sc.Min.Y, sc.Max.Y = data.Min.Y, data.Max.Y
		f.side.Draw(sc)
	}
	if f.hasLegend {
		lc := strip
		lc.Max.Y = data.Max.Y
		f.legend.Draw(lc)
	}
}

// save writes base+".png" and base+".svg", each atomically.
func (f *figure) save(base string) error {
	return saveDrawing(base, f.w+f.strip()+2*margin, f.h+f.captionHeight(), f.draw)
}

// saveDrawing writes base+".png" and base+".svg" of a w by h drawing, each
// atomically.
func saveDrawing(base string, w, h vg.Length, drawTo func(draw.Canvas)) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	drawTo(draw.New(img))
	if err := writeTo(base+".png", vgimg.PngCanvas{Canvas: img}); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	drawTo(draw.New(svg))
	var buf bytes.Buffer
	if _, err := svg.WriteTo(&buf); err != nil {
		return fmt.Errorf("report: rendering %s.svg: %w", base, err)
	}
	// The SVG names the font without a fallback; add the metric-compatible
	// ones, and a generic family, for viewers that do not have it.
	out := bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte(svgFonts))
	return writeTo(base+".svg", bytes.NewReader(out))
}

const svgFonts = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// writeTo writes wt to path atomically. fileio's errors name the file.
func writeTo(path string, wt io.WriterTo) error {
	return fileio.WriteAtomic(path, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	})
}

// intTicks marks integer positions only (steps, indices), at most about
// eight labelled ones.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	lo, hi = math.Ceil(lo), math.Floor(hi)
	if hi < lo {
		return nil
	}
	step := 1.0
search:
	for mag := 1.0; ; mag *= 10 {
		for _, s := range []float64{1, 2, 5} {
			if (hi-lo)/(s*mag) <= 8 {
				step = s * mag
				break search
			}
		}
	}
	start := math.Ceil(lo/step) * step
	var ticks []plot.Tick
	for v := start; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
	}
	return ticks
}

// logTicks labels powers of ten, and also 2 and 5 times them when the range
// spans less than two decades. Unlike plot.LogTicks it does not extend the
// range and formats labels compactly (%g).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	dense := math.Log10(hi/lo) < 2
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := base * float64(m)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || dense && (m == 2 || m == 5) {
				t.Label = fmt.Sprintf("%g", v)
			}
			ticks = append(ticks, t)
		}
	}
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled < 2 {
		// A narrow range: label its ends.
		ticks = append(ticks,
			plot.Tick{Value: lo, Label: fmt.Sprintf("%.3g", lo)},
			plot.Tick{Value: hi, Label: fmt.Sprintf("%.3g", hi)})
	}
	return ticks
}
