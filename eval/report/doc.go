// Package report writes the human-readable evaluation report of
// `grmdp eval --report DIR`, and the plot helpers that other commands
// (`grmdp experiment`) reuse.
//
// # The report
//
// [Write] takes an [Input], plain data the caller fills (the policy's
// settings, an [eval.Report], coverage counts, values under a known model,
// the command lines, warnings), and writes to a directory:
//
//   - report.md: the settings; the headline (the worst site's value and
//     name, with the interval of the minimum over sites), the robust value and its interval, the
//     pessimistic value, each site's value and interval; the
//     Delta_h table with a plain-language reading of sum_h Delta_h against
//     the paper's yardstick 1/sqrt(N_min) - 1/sqrt(N_min^pool) and of the
//     permutation p-values; the features each site never observes; the
//     values under a known model; the commands; links to the plots.
//   - delta.png/.svg: Delta_h,m against h, one line per cluster, the
//     yardstick as a dashed horizontal line, rings around cells whose
//     adjusted p-value is below 0.05, and a caption saying in words what
//     Delta is and which p-values the rings use (max-statistic permutation
//     p-values, adjusted over all steps and clusters).
//   - site-values.png/.svg: sites along the x axis and values on a y axis
//     in expected total reward over H steps: each site's estimate with its
//     bootstrap interval (the worst site in red), the robust value as a
//     line with its interval as a grey band and its pessimistic lower
//     bound dashed, a first column "robust" with the robust value's own
//     marks; with a model the exact values (crosses), with indicator maps
//     the identification bounds (grey bars), and the observed care
//     (triangles). A value that is not identified says so under its name,
//     and the caption ([RobustCaption]) says why the robust value can lie
//     below every site's own value. The report repeats the caption under
//     the plot, naming the values that are not identified.
//   - coverage.png/.svg: a heat map of the rows at which each site
//     observes each feature, sites down and features across, grouped by
//     action with the actions named on the axis when [Coverage] gives each
//     feature's action. Counts fall into fixed classes (0, 1-4, 5-19,
//     20-99, 100 or more) with a legend; a feature a site never observes is
//     a red cell. Small maps print the counts in the cells; with more than
//     600 features, consecutive features of one action are binned and a
//     bin shows its least-observed feature, so a never-observed one stays
//     visible.
//
// [CPathPlot] draws the penalty path of `grmdp solve --c-path`: values
// and shares on two panels over one c axis, the chosen c marked; for a
// policy whose c was chosen by cross-fitting (--c auto), a third panel
// shows the held-out scores the choice ranked and rings the chosen
// candidate.
//
// Parts of the input that are nil or empty are left out, with their plots.
// Numbers are printed with %.4g; a NaN (an interval that was not computed,
// a p-value of a single-site cluster) prints as "n/a".
//
// # Plot helpers
//
// [LinePlot] draws series with optional error bars on linear or log axes;
// [BoxPlot] draws Tukey box plots. Both write path+".png" and path+".svg".
// On a log axis, points with a nonpositive (or non-finite) coordinate are
// dropped and the title says how many; they never cause a panic.
//
// # Determinism and atomicity
//
// The output bytes depend only on the input: the figures carry no dates,
// all text is set in Liberation Sans (embedded in gonum/plot, so a PNG does
// not depend on installed fonts; an SVG names the font, and viewers
// without it substitute the metric-compatible Arial or Helvetica), and
// nothing is iterated in map order. Every file is written to a temporary
// name and renamed when complete ([fileio.WriteAtomic]), so a failed run
// leaves no partial file. PNGs are rendered at 150 dots per inch.
package report
