package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/grmdp/grmdp/eval/report"
	"github.com/grmdp/grmdp/io/fileio"
)

// Write writes the summary's files to dir (created if missing):
// summary.json, table.md, table.csv and the plots (each as .png and
// .svg). Every file is written atomically, and the bytes depend only on
// the summary.
func (s *Summary) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := writeBytes(filepath.Join(dir, "summary.json"), append(js, '\n')); err != nil {
		return err
	}
	var md strings.Builder
	var rows [][]string
	switch s.Experiment {
	case Benchmark:
		rows = s.benchmarkTable(&md)
		if err := s.benchmarkPlots(dir); err != nil {
			return err
		}
	case Convergence:
		rows = s.convergenceTable(&md)
		if err := s.convergencePlots(dir); err != nil {
			return err
		}
	case Coverage:
		rows = s.coverageTable(&md)
	case Pessimism:
		rows = s.pessimismTable(&md)
		if err := s.pessimismPlots(dir); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: unknown experiment %q", ErrConfig, s.Experiment)
	}
	if err := writeBytes(filepath.Join(dir, "table.md"), []byte(md.String())); err != nil {
		return err
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return writeBytes(filepath.Join(dir, "table.csv"), buf.Bytes())
}

func writeBytes(path string, b []byte) error {
	return fileio.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// num prints a number for a table: 4 significant digits, "n/a" for NaN.
func num(x Number) string {
	f := float64(x)
	if !finite(f) {
		return "n/a"
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}

// csvNum prints a number for a CSV file at full precision, empty for NaN.
func csvNum(x Number) string {
	f := float64(x)
	if !finite(f) {
		return ""
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// fixed3 prints a slope, an interval end or R^2 with three decimals.
func fixed3(x Number) string {
	if !finite(float64(x)) {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", float64(x))
}

func ci(e Estimate) string { return "[" + num(e.CILow) + ", " + num(e.CIHigh) + "]" }

// slopePM formats a slope as "-0.45 ± 0.03".
func slopePM(f Fit) string {
	if !finite(float64(f.Slope)) {
		return "n/a"
	}
	if !finite(float64(f.CILow)) {
		return fmt.Sprintf("%.2f", float64(f.Slope))
	}
	return fmt.Sprintf("%.2f ± %.2f", float64(f.Slope), (float64(f.CIHigh)-float64(f.CILow))/2)
}

func paperPM(p *PaperFit) string {
	if p == nil {
		return "not reported"
	}
	s := fmt.Sprintf("%.2f ± %.2f", p.Slope, p.HalfWidth)
	if p.R2 != nil {
		s += fmt.Sprintf(" (R² = %.3f)", *p.R2)
	}
	return s + ", " + p.Range
}

func (s *Summary) header(b *strings.Builder, title string) {
	fmt.Fprintf(b, "# %s (paper %s)\n\n", title, s.Paper)
	fmt.Fprintf(b, "Reproduce with `%s`. R = %d trials, seed %d; trial r's seeds are derived from (seed, r) alone and listed in summary.json.\n\n", s.Command, s.Reps, s.Seed)
	st := s.Settings
	cs := make([]string, len(st.C))
	for i, c := range st.C {
		cs[i] = num(c)
	}
	fmt.Fprintf(b, "Settings: scenario %s, K = %d sites, A = %d actions, H = %d, %s features (d = %d); lambda = %s, xi = %s, c = %s; ties and decisions without evidence go to the lowest action (the paper's rule); %s sampler.\n\n",
		st.Scenario, st.Sites, st.Actions, st.Horizon, st.Features, st.D, num(st.Lambda), num(st.Xi), strings.Join(cs, ", "), st.Sampler)
}

func (s *Summary) notes(b *strings.Builder) {
	b.WriteString("\nNotes:\n\n")
	for _, n := range s.Notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
}

func (s *Summary) fitTable(b *strings.Builder, fits []Fit, byC bool) {
	if byC {
		b.WriteString("| c | slope ± 95% half-width | 95% CI | R² | points fitted | left out | paper |\n|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| metric | slope ± 95% half-width | 95% CI | R² | points fitted | left out | paper |\n|---|---|---|---|---|---|---|\n")
	}
	for _, f := range fits {
		first := f.Metric
		if byC {
			first = num(f.C)
		}
		left := "none"
		if len(f.Skipped) > 0 {
			left = "N_min = " + joinInts(f.Skipped) + " (mean 0)"
		}
		fmt.Fprintf(b, "| %s | %s | [%s, %s] | %s | %d | %s | %s |\n", first, slopePM(f), fixed3(f.CILow), fixed3(f.CIHigh), fixed3(f.R2), len(f.NMin), left, paperPM(f.Paper))
	}
}

// Benchmark.

func (s *Summary) benchmarkTable(b *strings.Builder) [][]string {
	s.header(b, "Multi-site benchmark")
	fmt.Fprintf(b, "Site sizes N = %s. Model: %s.\n\n", joinInts(s.Settings.Trajectories), s.Settings.Model)
	b.WriteString("Mean robust suboptimality over the trials (each trial: the mean over its initial states).\n\n")
	b.WriteString("| method | mean | 95% CI | sd | median | min | max |\n|---|---|---|---|---|---|---|\n")
	rows := [][]string{{"method", "mean", "ci_low", "ci_high", "sd", "median", "min", "max", "reps"}}
	for _, m := range s.Methods {
		lo, hi := minMax(m.Values)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Method, num(m.Mean), ci(m.Estimate), num(m.SD), num(m.Median), num(lo), num(hi))
		rows = append(rows, []string{m.Method, csvNum(m.Mean), csvNum(m.CILow), csvNum(m.CIHigh), csvNum(m.SD), csvNum(m.Median), csvNum(lo), csvNum(hi), strconv.Itoa(len(m.Values))})
	}
	b.WriteString("\nThe paper reports no numbers for this experiment; its text says Sitewise achieves significantly lower suboptimality than the three baselines, with remarkably lower variance across runs.\n\n")
	b.WriteString("![Panel A: distribution over the trials](suboptimality-box.png)\n\n![Panel B: mean and 95% CI](suboptimality-mean.png)\n")
	s.notes(b)
	return rows
}

func minMax(x []Number) (Number, Number) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range x {
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	return Number(lo), Number(hi)
}

func (s *Summary) benchmarkPlots(dir string) error {
	var groups []report.BoxGroup
	for _, m := range s.Methods {
		v := make([]float64, len(m.Values))
		for i, x := range m.Values {
			v[i] = float64(x)
		}
		groups = append(groups, report.BoxGroup{Name: m.Method, Values: v})
	}
	title := fmt.Sprintf("(A) Robust suboptimality over %d trials", s.Reps)
	if err := report.BoxPlot(filepath.Join(dir, "suboptimality-box"), title, "mean robust suboptimality", groups); err != nil {
		return err
	}
	return meanCIPlot(filepath.Join(dir, "suboptimality-mean"), fmt.Sprintf("(B) Mean and 95%% CI over %d trials", s.Reps), "mean robust suboptimality", s.Methods)
}

// Convergence.

func (s *Summary) convergenceTable(b *strings.Builder) [][]string {
	s.header(b, "Convergence rate on the hard instance")
	b.WriteString("Means over the trials with 95% t-intervals; \"optimal\" counts the trials whose policy picks b_1 at s0 (suboptimality exactly 0).\n\n")
	b.WriteString("| N_min | N_k | suboptimality | 95% CI | optimal | value gap | 95% CI |\n|---|---|---|---|---|---|---|\n")
	rows := [][]string{{"metric", "c", "n_min", "trajectories", "mean", "ci_low", "ci_high", "sd", "zeros", "reps"}}
	for _, p := range s.Points {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %d/%d | %s | %s |\n", p.NMin, joinInts(p.Trajectories), num(p.Suboptimality.Mean), ci(p.Suboptimality), p.Suboptimality.Zeros, len(p.Suboptimality.Values), num(p.ValueGap.Mean), ci(*p.ValueGap))
	}
	for _, metric := range []string{MetricSuboptimality, MetricValueGap} {
		for _, p := range s.Points {
			e := p.Suboptimality
			if metric == MetricValueGap {
				e = *p.ValueGap
			}
			rows = append(rows, estimateRow(metric, p, e))
		}
	}
	b.WriteString("\nLog-log fits of the mean on N_min:\n\n")
	s.fitTable(b, s.Fits, false)
	b.WriteString("\n![Suboptimality against N_min](suboptimality.png)\n\n![Value gap against N_min](value-gap.png)\n")
	if truncated(s.Points, func(p Point) Estimate { return p.Suboptimality }) || truncated(s.Points, func(p Point) Estimate { return *p.ValueGap }) {
		b.WriteString(truncNote)
	}
	s.notes(b)
	return rows
}

func estimateRow(metric string, p Point, e Estimate) []string {
	return []string{metric, csvNum(p.C), strconv.Itoa(p.NMin), joinInts(p.Trajectories), csvNum(e.Mean), csvNum(e.CILow), csvNum(e.CIHigh), csvNum(e.SD), strconv.Itoa(e.Zeros), strconv.Itoa(len(e.Values))}
}

// logLow returns the lower end of e's interval as drawn on a log axis: a
// lower end at or below 0 cannot be drawn there and is truncated to floor,
// the bottom of the plot (see truncated).
func logLow(e Estimate, floor float64) float64 {
	if lo := float64(e.CILow); !(lo <= 0) || !(e.Mean > 0) {
		return lo
	}
	return floor
}

// logFloor returns half the smallest positive mean or interval end of
// the points: the bottom of a log-scale plot of them.
func logFloor(pts []Point, get func(Point) Estimate) float64 {
	floor := math.Inf(1)
	for _, p := range pts {
		e := get(p)
		for _, v := range []Number{e.Mean, e.CILow} {
			if v > 0 {
				floor = min(floor, float64(v))
			}
		}
	}
	return floor / 2
}

// truncated reports whether some point's interval is drawn truncated.
func truncated(pts []Point, get func(Point) Estimate) bool {
	for _, p := range pts {
		if e := get(p); e.Mean > 0 && e.CILow <= 0 {
			return true
		}
	}
	return false
}

const truncNote = "\nOn the log-scale plots, an interval whose lower end is at or below 0 is drawn truncated at the bottom of the plot.\n"

// series returns the points' means with their intervals, and the dashed
// fitted power law over the fitted range.
func fitSeries(name string, pts []Point, get func(Point) Estimate, f Fit, floor float64) []report.Series {
	data := report.Series{Name: name}
	for _, p := range pts {
		e := get(p)
		data.X = append(data.X, float64(p.NMin))
		data.Y = append(data.Y, float64(e.Mean))
		data.Lo = append(data.Lo, logLow(e, floor))
		data.Hi = append(data.Hi, float64(e.CIHigh))
	}
	out := []report.Series{data}
	if len(f.NMin) >= 2 && finite(float64(f.Slope)) {
		fit := report.Series{Name: "fit: slope " + slopePM(f), Dashed: true}
		for _, n := range f.NMin {
			fit.X = append(fit.X, float64(n))
			fit.Y = append(fit.Y, math.Exp(float64(f.Intercept))*math.Pow(float64(n), float64(f.Slope)))
		}
		out = append(out, fit)
	}
	return out
}

func (s *Summary) convergencePlots(dir string) error {
	sub := func(p Point) Estimate { return p.Suboptimality }
	gap := func(p Point) Estimate { return *p.ValueGap }
	for _, pl := range []struct {
		file, title, ylabel string
		get                 func(Point) Estimate
		fit                 Fit
	}{
		{"suboptimality", "(A) Suboptimality at s0", "suboptimality", sub, s.Fits[0]},
		{"value-gap", "(B) Value gap V*_1(s0) - Vhat_1(s0)", "value gap", gap, s.Fits[1]},
	} {
		title := fmt.Sprintf("%s: slope %s, R² = %s", pl.title, slopePM(pl.fit), fixed3(pl.fit.R2))
		series := fitSeries("mean ± 95% CI", s.Points, pl.get, pl.fit, logFloor(s.Points, pl.get))
		if err := report.LinePlot(filepath.Join(dir, pl.file), title, "N_min", pl.ylabel, series, true, true); err != nil {
			return err
		}
	}
	return nil
}

// Pessimism.

func (s *Summary) pessimismTable(b *strings.Builder) [][]string {
	s.header(b, "The necessity of the pessimism penalty")
	b.WriteString("Mean suboptimality over the trials with 95% t-intervals; \"optimal\" counts the trials whose policy is optimal at every evaluation state.\n\n")
	b.WriteString("| c | N_min | N_k | suboptimality | 95% CI | optimal |\n|---|---|---|---|---|---|\n")
	rows := [][]string{{"metric", "c", "n_min", "trajectories", "mean", "ci_low", "ci_high", "sd", "zeros", "reps"}}
	for _, p := range s.Points {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %d/%d |\n", num(p.C), p.NMin, joinInts(p.Trajectories), num(p.Suboptimality.Mean), ci(p.Suboptimality), p.Suboptimality.Zeros, len(p.Suboptimality.Values))
		rows = append(rows, estimateRow(MetricSuboptimality, p, p.Suboptimality))
	}
	b.WriteString("\nLog-log fits of the mean suboptimality on N_min, every point with a positive mean:\n\n")
	s.fitTable(b, s.Fits, true)
	if len(s.RangeFits) > 0 {
		fmt.Fprintf(b, "\nThe same fits on the %s only (the range the paper fitted for c = 1e-3, whose curve is exactly 0 at its largest N_min):\n\n", s.RangeFits[0].Range)
		s.fitTable(b, s.RangeFits, true)
	}
	b.WriteString("\n![Suboptimality against N_min for each c](suboptimality.png)\n")
	if truncated(s.Points, func(p Point) Estimate { return p.Suboptimality }) {
		b.WriteString(truncNote)
	}
	s.notes(b)
	return rows
}

func (s *Summary) pessimismPlots(dir string) error {
	var series []report.Series
	sub := func(p Point) Estimate { return p.Suboptimality }
	floor := logFloor(s.Points, sub)
	for _, f := range s.Fits {
		var pts []Point
		for _, p := range s.Points {
			if p.C == f.C {
				pts = append(pts, p)
			}
		}
		ss := fitSeries("c = "+num(f.C), pts, sub, f, floor)
		if len(ss) > 1 {
			ss[1].Name = fmt.Sprintf("c = %s fit: slope %s", num(f.C), slopePM(f))
		}
		series = append(series, ss...)
	}
	return report.LinePlot(filepath.Join(dir, "suboptimality"), "Suboptimality with and without the pessimism penalty", "N_min", "mean suboptimality", series, true, true)
}

// WriteHeadline writes the experiment's headline numbers as a table: each
// method's mean suboptimality (benchmark), each fitted slope (convergence,
// pessimism) or each coverage row (coverage study).
func (s *Summary) WriteHeadline(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	switch {
	case len(s.Coverage) > 0 && s.Coverage[0].Estimator != "":
		fmt.Fprintln(tw, "estimator\tsample\theadline\tquantity\tcells\tcoverage\tflagged\tflagged by\tsilent misses\tmean bias\tmean width\t")
		for _, r := range s.Coverage {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%d\t%.3f\t%d\t%s\t%d\t%.4g\t%.4g\t\n", r.Estimator, r.Sample, r.Headline, r.Quantity, r.Cells, float64(r.Coverage),
				r.Flagged, flaggedBy(r.FlaggedBy), r.SilentMisses, float64(r.MeanBias), float64(r.MeanWidth))
		}
	case len(s.Coverage) > 0:
		fmt.Fprintln(tw, "policy\tquantity\tcells\tcoverage\tflagged\tsilent misses\tmean bias\t")
		for _, r := range s.Coverage {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%d\t%d\t%.4g\t\n", r.Policy, r.Quantity, r.Cells, float64(r.Coverage), r.Flagged, r.SilentMisses, float64(r.MeanBias))
		}
	case len(s.Methods) > 0:
		fmt.Fprintln(tw, "method\tmean suboptimality\t95% CI\t")
		for _, m := range s.Methods {
			fmt.Fprintf(tw, "%s\t%.4g\t[%.4g, %.4g]\t\n", m.Method, float64(m.Mean), float64(m.CILow), float64(m.CIHigh))
		}
	default:
		fmt.Fprintln(tw, "metric\tc\tslope\t95% CI\tR^2\tpoints\t")
		for _, f := range s.Fits {
			fmt.Fprintf(tw, "%s\t%g\t%.3f\t[%.3f, %.3f]\t%.3f\t%d\t\n", f.Metric, float64(f.C), float64(f.Slope), float64(f.CILow), float64(f.CIHigh), float64(f.R2), len(f.NMin))
		}
	}
	return tw.Flush()
}
