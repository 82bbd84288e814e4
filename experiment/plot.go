package experiment

import (
	"fmt"
	"image/color"
	"io"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/grmdp/grmdp/io/fileio"
)

// The shared helpers of eval/report draw lines on numeric axes and box
// plots; panel B of Figure 1 (a mean with its interval per method, on a
// categorical axis) is the one plot they do not cover, so it is drawn
// here in the same fonts, colours and sizes.

var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: stdfont.WeightBold}
	blue     = color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}
	gridGrey = color.Gray{Y: 0xE0}
)

const (
	plotWidth  = 6.5 * vg.Inch
	plotHeight = 4.5 * vg.Inch
	plotDPI    = 150
)

// ciBars are the points of a mean ± interval plot: YErrors hold the
// offsets of the interval's ends below and above the mean.
type ciBars struct {
	plotter.XYs
	plotter.YErrors
}

// meanCIPlot writes path+".png" and path+".svg": each method's mean as a
// point with its 95% interval as an error bar, methods along the x axis.
func meanCIPlot(path, title, ylabel string, methods []MethodResult) error {
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
	p.Y.Label.Text = ylabel
	g := plotter.NewGrid()
	g.Vertical.Width = 0
	g.Horizontal.Color = gridGrey
	g.Horizontal.Width = vg.Points(0.5)
	p.Add(g)
	var bars ciBars
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.Method
		mean := float64(m.Mean)
		lo, hi := float64(m.CILow), float64(m.CIHigh)
		if !finite(lo) || !finite(hi) {
			lo, hi = mean, mean
		}
		bars.XYs = append(bars.XYs, plotter.XY{X: float64(i), Y: mean})
		bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{mean - lo, hi - mean})
	}
	eb, err := plotter.NewYErrorBars(bars)
	if err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	eb.LineStyle = draw.LineStyle{Color: blue, Width: vg.Points(1.5)}
	eb.CapWidth = vg.Points(10)
	sc, err := plotter.NewScatter(bars.XYs)
	if err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: blue, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
	p.Add(eb, sc)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(methods))-0.5
	// Start at 0 and leave room above the highest interval, so that no
	// cap touches the frame.
	if p.Y.Min > 0 {
		p.Y.Min = 0
	}
	p.Y.Max += 0.06 * (p.Y.Max - p.Y.Min)
	for _, format := range []string{"png", "svg"} {
		var c interface {
			vg.CanvasSizer
			io.WriterTo
		}
		switch format {
		case "png":
			img := vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(plotDPI))
			p.Draw(draw.New(img))
			c = vgimg.PngCanvas{Canvas: img}
		default:
			svg := vgsvg.New(plotWidth, plotHeight)
			p.Draw(draw.New(svg))
			c = svg
		}
		if err := fileio.WriteAtomic(path+"."+format, func(w io.Writer) error {
			_, err := c.WriteTo(w)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
