package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/io/fileio"
)

// Input is everything a report shows. The caller fills it; nil or empty
// parts are left out of the report.
type Input struct {
	// Title heads the report, e.g. "grmdp evaluation of policy.parquet";
	// empty means "grmdp evaluation report".
	Title string
	// Policy describes the policy's settings.
	Policy PolicyInfo
	// Eval is the evaluation from data: values, intervals and Delta_h.
	Eval *eval.Report
	// Coverage counts observations per site and feature.
	Coverage *Coverage
	// Model holds the values under a known model.
	Model *eval.ExactValues
	// Agreement is the policy's agreement with the data's actions (nil:
	// no section).
	Agreement *eval.Agreement
	// Commands are the exact command lines that produced the inputs, shown
	// so that a reader can rerun them.
	Commands []string
	// Notes are warnings, shown near the top.
	Notes []string
}

// PolicyInfo is the policy's settings as the report shows them. Empty
// strings and zero counts are left out of the settings table.
type PolicyInfo struct {
	// Method is the solver method (sitewise, cluster, pooled, ...).
	Method string
	// Features names the feature map (tabular, action-block, ...).
	Features string
	// H is the horizon, D the feature dimension, A the number of actions.
	H, D, A int
	// Beta is the pessimism coefficient and Lambda the ridge parameter.
	Beta, Lambda float64
	// Groups names the groups of the solve (sites or clusters).
	Groups []string
	// Fallback names the rule used for decisions without evidence.
	Fallback string
}

func (p PolicyInfo) empty() bool {
	return p.Method == "" && p.Features == "" && p.H == 0 && p.D == 0 && p.A == 0 &&
		p.Beta == 0 && p.Lambda == 0 && len(p.Groups) == 0 && p.Fallback == ""
}

// Coverage counts how often each site observes each feature.
type Coverage struct {
	// Sites and Features label the rows and columns of Counts; feature
	// labels are short, e.g. "a3:s1".
	Sites    []string
	Features []string
	// Counts[k][j] is the count of site k for feature j; a zero count is a
	// feature the site never observes.
	Counts [][]float64
	// FeatureAction, when it has one entry per feature, gives the action
	// index of each feature (negative: a feature of no single action), so
	// that the map groups the features by action and names the actions on
	// its axis; nil leaves the features in their order.
	FeatureAction []int
	// Actions names the actions by index (e.g. the data's action labels);
	// an action without a name is shown as "a<index>".
	Actions []string
}

// Names of the files [Write] creates in its directory.
const (
	ReportFile     = "report.md"
	DeltaPlot      = "delta"       // + ".png" and ".svg"
	SiteValuesPlot = "site-values" // + ".png" and ".svg"
	CoveragePlot   = "coverage"    // + ".png" and ".svg"
)

// Write writes the report for in to dir, creating dir if needed:
//
//   - report.md, the report itself;
//   - delta.png and delta.svg, when in.Eval has Delta cells;
//   - site-values.png and site-values.svg, when in.Eval has sites;
//   - coverage.png and coverage.svg, when in.Coverage has sites and
//     features.
//
// Each file is written atomically, the plots before report.md, so a
// report.md that exists links only to plots that exist. Files of an earlier
// report that this one does not write are left alone. The bytes of every
// file depend only on in: writing the same input twice gives identical
// files.
//
// Write returns an error, writing nothing, if in.Coverage.Counts does not
// have one row per site and one column per feature.
func Write(dir string, in Input) error {
	if c := in.Coverage; c != nil {
		if len(c.Counts) != len(c.Sites) {
			return fmt.Errorf("report: coverage has %d sites but %d rows of counts", len(c.Sites), len(c.Counts))
		}
		for k, row := range c.Counts {
			if len(row) != len(c.Features) {
				return fmt.Errorf("report: coverage of site %q has %d counts for %d features", c.Sites[k], len(row), len(c.Features))
			}
		}
		if c.FeatureAction != nil && len(c.FeatureAction) != len(c.Features) {
			return fmt.Errorf("report: coverage has %d features but %d feature actions", len(c.Features), len(c.FeatureAction))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var made plots
	if in.Eval != nil && len(in.Eval.Delta) > 0 {
		if err := deltaFigure(in.Eval).save(filepath.Join(dir, DeltaPlot)); err != nil {
			return err
		}
		made.delta = true
	}
	if in.Eval != nil && len(in.Eval.Sites) > 0 {
		if err := siteFigure(in.Eval, in.Model).save(filepath.Join(dir, SiteValuesPlot)); err != nil {
			return err
		}
		made.sites = true
	}
	if c := in.Coverage; c != nil && len(c.Sites) > 0 && len(c.Features) > 0 {
		if err := coverageFigure(c).save(filepath.Join(dir, CoveragePlot)); err != nil {
			return err
		}
		made.coverage = true
	}
	md := markdown(in, made)
	// fileio's errors name the file already.
	err := fileio.WriteAtomic(filepath.Join(dir, ReportFile), func(w io.Writer) error {
		_, err := io.WriteString(w, md)
		return err
	})
	return err
}

// plots records which figures were written.
type plots struct{ delta, sites, coverage bool }
