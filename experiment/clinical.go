package experiment

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Quantities of the clinical calibration study, beside QuantitySite.
const (
	QuantityWorst    = "worst_site"
	QuantityObserved = "observed_care"
)

// Samples of the clinical study: the policy evaluated on the rows it was
// learned from (grmdp eval), or cross-fitted (grmdp validate).
const (
	SampleIn    = "in"
	SampleCross = "cross"
)

// EstimatorObserved names the observed care's estimator (the mean
// realised return of the uncensored episodes).
const EstimatorObserved = "observed"

// Reasons a miss is flagged, as CoverageCell.Flags and
// CoverageResult.FlaggedBy name them.
const (
	// FlagInterval: eval's interval warnings (the interval misses its
	// estimate, or the bootstrap bias exceeds half its width), which eval
	// prints for the headline site values, and validate for the held-out
	// headline site values, the observed care and the worst sites.
	FlagInterval = "interval"
	// FlagDisagreement: eval's (in sample) or validate's (cross-fitted)
	// warning that FQE and WDR disagree at the site (the paired
	// difference's interval excludes 0, eval.Disagree). It says FQE's
	// model may be misspecified and to read WDR, so it flags FQE's values
	// (and PDWIS's and WDR's when it adds that WDR's ESS is too low to be
	// read).
	FlagDisagreement = "disagreement"
	// FlagLowESS: the site's effective sample size is below
	// eval.LowESS, where PDWIS's and WDR's intervals are not to be
	// trusted: printed beside them by eval, a warning of validate's.
	FlagLowESS = "low_ess"
	// FlagValidate: another warning of grmdp validate that names the
	// site.
	FlagValidate = "validate"
)

// clinicalFolds is the number of folds of the study's cross-fit
// (grmdp validate's default).
const clinicalFolds = dataset.DefaultFolds

// clinicalMCZ is the number of Monte Carlo standard errors of the exact
// value by which an interval is widened on each side when coverage is
// judged.
const clinicalMCZ = 2

// clinicalTrial is one replicate of the clinical study.
type clinicalTrial struct {
	cells []CoverageCell
	seeds TrialSeeds
	// censored is the share of the replicate's episodes --nulls truncate
	// censored.
	censored float64
}

// runClinicalCoverage runs the clinical calibration study: per
// replicate, a clinical data set written as a hospital export (NULL
// lactate included), read with --nulls truncate, solved through the
// soft-binned map, evaluated in sample (grmdp eval) and cross-fitted
// (grmdp validate), every estimate scored against the simulator's Monte
// Carlo value.
func runClinicalCoverage(ctx context.Context, cfg Config) (*Summary, error) {
	if _, err := sim.New(sim.ScenarioClinical, cfg.coverageParams(0)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	dir, err := os.MkdirTemp("", "grmdp-coverage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	trials := make([]clinicalTrial, cfg.Reps)
	err = forEach(ctx, cfg.Workers, cfg.Reps, cfg.Progress, func(ctx context.Context, r int) error {
		seeds := TrialSeeds{Rep: r, Model: Derive(cfg.Seed, uint64(r), tagModel), Data: []uint64{Derive(cfg.Seed, uint64(r), tagData, 0)}, Eval: Derive(cfg.Seed, uint64(r), tagEval)}
		t, err := clinicalRun(ctx, cfg, r, seeds, filepath.Join(dir, fmt.Sprintf("rep%d.parquet", r)))
		if err != nil {
			return fmt.Errorf("trial %d: %w", r, err)
		}
		t.seeds = seeds
		trials[r] = *t
		return nil
	})
	if err != nil {
		return nil, err
	}
	m, _ := sim.New(sim.ScenarioClinical, cfg.coverageParams(trials[0].seeds.Model))
	fm := m.Map()
	p := m.Params()
	s := &Summary{
		Experiment: Coverage, Paper: "none: calibration of grmdp eval's and grmdp validate's estimators, intervals and flags on a misspecified model", Command: cfg.Command, Reps: cfg.Reps, Seed: cfg.Seed,
		Settings: Settings{
			Scenario: cfg.Scenario, Features: fm.Kind.String(), Sites: len(m.Sites()), Actions: fm.A, Horizon: m.Horizon(), D: fm.Dim(),
			Trajectories: m.Trajectories(), Lambda: Number(cfg.Lambda), Xi: Number(cfg.Xi), C: numbers(cfg.C), Methods: []string{string(solve.Sitewise)},
			Fallback: string(solve.FallbackBehaviour), Sampler: "trajectories", Spec: p.Clinical, Level: Level, Bootstrap: cfg.Bootstrap,
			Model: "redrawn per replicate from its model seed",
		},
	}
	var all []CoverageCell
	cens := 0.0
	for _, t := range trials {
		s.Seeds = append(s.Seeds, t.seeds)
		all = append(all, t.cells...)
		cens += t.censored
	}
	s.Cells = all
	s.Coverage = clinicalResults(cfg.Scenario, all)
	maxSE := 0.0
	for _, c := range all {
		maxSE = max(maxSE, float64(c.ExactSE))
	}
	s.Notes = []string{
		fmt.Sprintf("each replicate draws a clinical model (five hospitals differing in case-mix, formulary and NULL lactate) and one data set from its seeds, writes the data as a Parquet export with its NULLs and reads it as grmdp does with --features soft-binned (the scenario's cut points) and --nulls truncate (%.1f%% of episodes censored on average); it solves the site-wise policy with grmdp solve's defaults (lambda %g, c %g, xi %g, the behaviour fallback)", 100*cens/float64(len(trials)), cfg.Lambda, cfg.C[0], cfg.Xi),
		fmt.Sprintf("sample in: grmdp eval on the same rows (dataset.Data.Evaluate, --return-range 0,1, %d bootstrap replicates, %g%% basic intervals); sample cross: grmdp validate (dataset.Data.Validate, %d folds, %d bootstrap replicates per fold)", cfg.Bootstrap, 100*Level, clinicalFolds, cfg.Bootstrap),
		"exact values: the simulator's Monte Carlo value (sim.Clinical.Value, common random numbers across policies) of the in-sample policy at each hospital; for the cross-fit, the folds' policies' values weighted by the share of the hospital's trajectories each fold holds out (what the cross-fit estimates); the worst site's exact value is the minimum over hospitals; observed care's is the clinicians' own value (sim.Clinical.BehaviourValue)",
		fmt.Sprintf("covered: the interval, widened on each side by %d Monte Carlo standard errors of the exact value (at most %.4f here), contains the exact value's Monte Carlo estimate", clinicalMCZ, maxSE),
		"headline: the estimate eval and validate print first (the estimator their reports name for the site values, the worst site and the observed care)",
		"flagged: a miss that carries a warning eval or validate print about it (flagged_by counts each kind: interval, eval's and validate's interval warnings on the headline site values (validate's also on the observed care and the worst site); disagreement, eval's or validate's warning that FQE and WDR disagree at the site (the basic interval of their paired difference excludes 0), which flags FQE's values, and PDWIS's and WDR's when it adds that WDR's effective sample size is too low; low_ess, an effective sample size below 30, printed beside PDWIS's and WDR's values by eval and a warning of validate's; validate, another warning of grmdp validate naming the site); silent_misses: misses without one. The in-sample note (eval on a policy's training rows) flags nothing: it is printed for every in-sample evaluation",
		"a 95% interval misses about 5% of its cells by design, and nothing can flag those misses: silent misses near 5% of the cells are the intervals' level; more are misses the warnings do not see",
		"mean_bias: mean of estimate minus exact value; mean_width: mean width of the interval",
	}
	return s, nil
}

// clinicalResults aggregates the cells by (estimator, sample, quantity),
// in a fixed order.
func clinicalResults(scenario string, cells []CoverageCell) []CoverageResult {
	type key struct{ est, sample, q string }
	order := []key{}
	for _, sample := range []string{SampleIn, SampleCross} {
		for _, q := range []string{QuantitySite, QuantityWorst} {
			for _, e := range eval.Estimators {
				order = append(order, key{e, sample, q})
			}
		}
		order = append(order, key{EstimatorObserved, sample, QuantityObserved})
	}
	var out []CoverageResult
	for _, k := range order {
		res := CoverageResult{Scenario: scenario, Policy: string(solve.Sitewise), Quantity: k.q, Estimator: k.est, Sample: k.sample, FlaggedBy: map[string]int{}}
		bias, width := 0.0, 0.0
		for _, c := range cells {
			if c.Estimator != k.est || c.Sample != k.sample || c.Quantity != k.q {
				continue
			}
			res.Cells++
			res.Headline = res.Headline || c.Headline
			bias += float64(c.Estimate - c.Exact)
			width += float64(c.CIHigh - c.CILow)
			if c.Warned {
				res.Warned++
			}
			switch {
			case c.Covered:
				res.Covered++
			case c.Warned:
				res.Flagged++
				for _, f := range c.Flags {
					res.FlaggedBy[f]++
				}
			default:
				res.SilentMisses++
			}
		}
		if res.Cells == 0 {
			continue
		}
		n := float64(res.Cells)
		res.Coverage, res.MeanBias, res.MeanWidth = Number(float64(res.Covered)/n), Number(bias/n), Number(width/n)
		out = append(out, res)
	}
	return out
}

// clinicalCell scores one estimate against its exact value (with the
// exact value's Monte Carlo standard error se); flags are the warnings
// eval or validate print about it.
func clinicalCell(rep int, est, sample, q, site string, headline bool, exact, se float64, e eval.Estimate, flags []string) CoverageCell {
	c := CoverageCell{Rep: rep, Policy: string(solve.Sitewise), Quantity: q, Site: site, Estimator: est, Sample: sample, Headline: headline,
		Exact: Number(exact), ExactSE: Number(se), Estimate: Number(e.Value), CILow: Number(e.CILow), CIHigh: Number(e.CIHigh),
		Bias: Number(math.NaN()), Lower: Number(math.NaN()), Upper: Number(math.NaN()), Identified: true, Flags: flags}
	c.Warned = len(flags) > 0
	// An interval that cannot be computed (NaN: an estimator undefined at
	// the site) covers nothing.
	c.Covered = e.CILow-clinicalMCZ*se <= exact && exact <= e.CIHigh+clinicalMCZ*se
	return c
}

// clinicalSiteFlags returns, for one estimator at one site of an
// in-sample report, the warnings eval prints that concern it.
func clinicalSiteFlags(rep *eval.Report, k int, est string) []string {
	s := &rep.Sites[k]
	var flags []string
	if est == s.Estimator && eval.IntervalWarned(s.Value, s.CILow, s.CIHigh, s.Bias, math.NaN(), math.NaN()) {
		flags = append(flags, FlagInterval)
	}
	disagree := rep.Disagree(k)
	lowESS := s.ESS < eval.LowESS
	if disagree && (est == eval.FQE || lowESS) {
		flags = append(flags, FlagDisagreement)
	}
	if lowESS && (est == eval.PDWIS || est == eval.WDR) {
		flags = append(flags, FlagLowESS)
	}
	return flags
}

// crossSiteFlags returns, for one estimator (EstimatorObserved for the
// observed care) at site k of a cross-fit, the warnings validate prints
// that concern it: its interval warnings on the policy's headline value
// and on the observed care, which flag that value (FlagInterval), its
// disagreement and low-ESS warnings, which flag the estimators as eval's
// do (clinicalSiteFlags), and any other warning that names the site
// (FlagValidate), which flags every value of the site; an interval
// warning on cloning's value flags none of them.
func crossSiteFlags(v *dataset.Validation, k int, est string) []string {
	s := &v.Sites[k]
	disagreement := eval.DisagreementWarning(s.Site, s.Policy.Estimates[eval.FQE], s.Policy.Estimates[eval.WDR], s.ESS)
	lowESS := eval.LowESSWarning(s.Site, s.ESS)
	var interval, disagree, low, other bool
	for _, w := range v.Warnings {
		switch {
		case w == disagreement:
			disagree = true
		case w == lowESS:
			low = true
		case strings.Contains(w, "site "+s.Site+"'s held-out value of the policy "):
			interval = interval || est == s.Policy.Estimator
		case strings.Contains(w, "site "+s.Site+"'s held-out observed care "):
			interval = interval || est == EstimatorObserved
		case strings.Contains(w, "site "+s.Site+"'s held-out value of cloning "):
		case strings.Contains(w, "site "+s.Site+" ") || strings.Contains(w, "site "+s.Site+":") || strings.Contains(w, "site "+s.Site+"'s"):
			other = true
		}
	}
	var flags []string
	if interval {
		flags = append(flags, FlagInterval)
	}
	if disagree && (est == eval.FQE || low && est != EstimatorObserved) {
		flags = append(flags, FlagDisagreement)
	}
	if low && (est == eval.PDWIS || est == eval.WDR) {
		flags = append(flags, FlagLowESS)
	}
	if other {
		flags = append(flags, FlagValidate)
	}
	return flags
}

// clinicalPolicy turns a solved policy into the simulator's policy (safe
// for concurrent use).
func clinicalPolicy(p *solve.Policy) sim.ClinicalPolicy {
	pool := sync.Pool{New: func() any { q := make([]float64, p.A); return &q }}
	return func(_, h int, v []float64) int {
		q := pool.Get().(*[]float64)
		a, _, _ := p.Act(h, v, *q)
		pool.Put(q)
		return a
	}
}

// clinicalRun runs replicate r: it draws the model and the data, writes
// the data to path, and evaluates the site-wise policy as the commands
// do.
// clinicalFit is one replicate's data, policy, in-sample evaluation and
// cross-fit.
type clinicalFit struct {
	m   *sim.Clinical
	d   *dataset.Data
	p   *solve.Policy
	rep *eval.Report
	v   *dataset.Validation
}

// fitClinical simulates replicate data from seeds, writes them at path
// (removed on return), opens them through the soft-binned map with
// --nulls truncate, solves the site-wise policy, evaluates it in sample
// and cross-fits it.
func fitClinical(ctx context.Context, cfg Config, seeds TrialSeeds, path string) (*clinicalFit, error) {
	mm, err := sim.New(sim.ScenarioClinical, cfg.coverageParams(seeds.Model))
	if err != nil {
		return nil, err
	}
	m := mm.(*sim.Clinical)
	rows, err := m.SampleRows(seeds.Data[0])
	if err != nil {
		return nil, err
	}
	fm := m.Map()
	if err := parquetio.WriteChunks(path, rows, parquetio.WriteOptions{StateColumns: fm.StateColumns, IntSites: true, NullNaN: true}); err != nil {
		return nil, err
	}
	defer os.Remove(path)
	d, err := dataset.Open(ctx, []string{path}, dataset.Options{
		Map:     features.Spec{Kind: features.SoftBinned, StateColumns: fm.StateColumns, Bins: fm.Bins},
		Horizon: m.Horizon(), Actions: fm.A, Workers: 1, Nulls: traj.NullsTruncate, MaxMemory: "0",
		InMemory: "the coverage study evaluates and cross-fits",
	})
	if err != nil {
		return nil, err
	}
	settings := solve.DefaultSettings
	settings.Lambda, settings.C, settings.Xi, settings.Workers = cfg.Lambda, cfg.C[0], cfg.Xi, 1
	prob := solve.Problem{Method: solve.Sitewise}
	solved, err := d.Solve(ctx, settings, prob)
	if err != nil {
		return nil, err
	}
	p := solved.Policy
	rep, err := d.Evaluate(ctx, p, dataset.EvalSettings(p, 1), eval.Options{Bootstrap: cfg.Bootstrap, Seed: seeds.Eval, Workers: 1, ReturnRange: eval.Range{Lo: 0, Hi: 1}})
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	v, err := d.Validate(ctx, dataset.ValidateOptions{Settings: settings, Problem: prob, Folds: clinicalFolds, Seed: seeds.Eval, Bootstrap: cfg.Bootstrap})
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	return &clinicalFit{m: m, d: d, p: p, rep: rep, v: v}, nil
}

func clinicalRun(ctx context.Context, cfg Config, r int, seeds TrialSeeds, path string) (*clinicalTrial, error) {
	fit, err := fitClinical(ctx, cfg, seeds, path)
	if err != nil {
		return nil, err
	}
	m, d, p, rep, v := fit.m, fit.d, fit.p, fit.rep, fit.v
	// The exact values, with common random numbers: the in-sample
	// policy, each fold's policy and the clinicians.
	mc := Derive(seeds.Eval, 1)
	episodes := m.Params().Clinical.EvalEpisodes
	inExact := m.Value(clinicalPolicy(p), episodes, mc)
	folds := make([][]sim.ClinicalValue, len(v.Fits))
	for f, ff := range v.Fits {
		folds[f] = m.Value(clinicalPolicy(ff.Policy), episodes, mc)
	}
	obsExact := m.BehaviourValue(episodes, mc)

	out := &clinicalTrial{}
	if cc := d.Table().CensoredCount(); cc != nil {
		n, c := 0, 0
		for k := range cc {
			c += cc[k]
			n += d.Table().Trajectories[k]
		}
		out.censored = float64(c) / float64(n)
	}
	add := func(c CoverageCell) { out.cells = append(out.cells, c) }
	inSampleCells(add, r, rep, inExact, obsExact)
	crossFittedCells(add, r, v, folds, obsExact)
	return out, nil
}

// inSampleCells adds the in-sample cells: every estimator's site values
// and worst site, and the observed care, against the exact values.
func inSampleCells(add func(CoverageCell), r int, rep *eval.Report, inExact, obsExact []sim.ClinicalValue) {
	K := len(rep.Sites)
	for k := 0; k < K; k++ {
		s := &rep.Sites[k]
		for _, e := range eval.Estimators {
			add(clinicalCell(r, e, SampleIn, QuantitySite, s.Site, e == s.Estimator, inExact[k].Value, inExact[k].StdErr, s.Estimates[e], clinicalSiteFlags(rep, k, e)))
		}
		o := rep.Observed[k]
		add(clinicalCell(r, EstimatorObserved, SampleIn, QuantityObserved, o.Site, true, obsExact[k].Value, obsExact[k].StdErr,
			eval.Estimate{Value: o.Value, CILow: o.CILow, CIHigh: o.CIHigh}, nil))
	}
	worstIn, wk := minValue(inExact)
	if rep.Worst != nil {
		for _, e := range eval.Estimators {
			w := rep.Worst.Estimates[e]
			var flags []string
			if at := slices.IndexFunc(rep.Sites, func(s eval.SiteValue) bool { return s.Site == w.Site }); at >= 0 {
				flags = slices.DeleteFunc(clinicalSiteFlags(rep, at, e), func(f string) bool { return f == FlagInterval })
			}
			add(clinicalCell(r, e, SampleIn, QuantityWorst, w.Site, e == rep.Worst.Estimator, worstIn, inExact[wk].StdErr, w.Estimate, flags))
		}
	}
}

// crossFittedCells adds the cross-fitted cells: the exact value of the
// fold policies a site's held-out trajectories met (weighted by the
// trajectories each fold holds out), against every estimator's site
// value, the observed care and validate's worst site.
func crossFittedCells(add func(CoverageCell), r int, v *dataset.Validation, folds [][]sim.ClinicalValue, obsExact []sim.ClinicalValue) {
	K := len(v.Sites)
	crossExact := make([]sim.ClinicalValue, K)
	for k := 0; k < K; k++ {
		s := &v.Sites[k]
		for f := range folds {
			w := float64(s.FoldSizes[f]) / float64(s.Trajectories)
			crossExact[k].Value += w * folds[f][k].Value
			// Common random numbers correlate the folds' errors
			// positively: the weighted sum of standard errors bounds
			// the mixture's.
			crossExact[k].StdErr += w * folds[f][k].StdErr
		}
		for _, e := range eval.Estimators {
			add(clinicalCell(r, e, SampleCross, QuantitySite, s.Site, e == s.Policy.Estimator, crossExact[k].Value, crossExact[k].StdErr, s.Policy.Estimates[e], crossSiteFlags(v, k, e)))
		}
		add(clinicalCell(r, EstimatorObserved, SampleCross, QuantityObserved, s.Site, true, obsExact[k].Value, obsExact[k].StdErr,
			eval.Estimate{Value: s.Observed.Value, CILow: s.Observed.CILow, CIHigh: s.Observed.CIHigh}, crossSiteFlags(v, k, EstimatorObserved)))
	}
	// validate gives the worst site's interval (of the minimum over
	// sites) for its headline estimator only.
	worstX, xk := minValue(crossExact)
	w := v.WorstSite
	var flags []string
	if at := slices.IndexFunc(v.Sites, func(s dataset.ValidatedSite) bool { return s.Site == w.Site }); at >= 0 {
		// The site's own interval warning is not about the minimum's
		// interval; validate warns about that one on its own.
		flags = slices.DeleteFunc(crossSiteFlags(v, at, w.Estimator), func(f string) bool { return f == FlagInterval })
	}
	if slices.ContainsFunc(v.Warnings, func(s string) bool {
		return strings.Contains(s, "of the minimum over sites of the policy's held-out values (worst site "+w.Site+")")
	}) {
		flags = append([]string{FlagInterval}, flags...)
	}
	add(clinicalCell(r, w.Estimator, SampleCross, QuantityWorst, w.Site, true, worstX, crossExact[xk].StdErr,
		eval.Estimate{Value: w.Value, CILow: w.CILow, CIHigh: w.CIHigh}, flags))
}

// minValue returns the smallest value and its index.
func minValue(x []sim.ClinicalValue) (float64, int) {
	at := 0
	for k := range x {
		if x[k].Value < x[at].Value {
			at = k
		}
	}
	return x[at].Value, at
}

// flaggedBy formats a result's flagged misses by kind, "disagreement 3,
// low_ess 1" in the kinds' sorted order, "-" for none.
func flaggedBy(by map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		if by[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, by[k]))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// clinicalTable writes the clinical study's table.md and returns
// table.csv's rows.
func (s *Summary) clinicalTable(b *strings.Builder) [][]string {
	st := s.Settings
	fmt.Fprintf(b, "# Calibration of eval's and validate's estimators: %s scenario\n\n", st.Scenario)
	fmt.Fprintf(b, "Reproduce with `%s`. R = %d replicates, seed %d; replicate r's seeds are derived from (seed, r) alone and listed in summary.json.\n\n", s.Command, s.Reps, s.Seed)
	fmt.Fprintf(b, "Settings: K = %d hospitals of sizes %s, A = %d treatments, H = %d, %s features (d = %d); lambda = %s, xi = %s, c = %s; %d bootstrap replicates, %g%% intervals; %d folds.\n\n",
		st.Sites, joinInts(st.Trajectories), st.Actions, st.Horizon, st.Features, st.D, num(st.Lambda), num(st.Xi), num(st.C[0]), st.Bootstrap, 100*st.Level, clinicalFolds)
	b.WriteString("| estimator | sample | headline | quantity | cells | covered | coverage | flagged misses | flagged by | silent misses | mean bias | mean width |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	rows := [][]string{{"scenario", "policy", "estimator", "sample", "headline", "quantity", "cells", "covered", "coverage", "flagged", "flagged_by", "silent_misses", "mean_bias", "mean_width"}}
	for _, c := range s.Coverage {
		head := ""
		if c.Headline {
			head = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %d | %s | %d | %s | %d | %s | %s |\n", c.Estimator, c.Sample, head, c.Quantity, c.Cells, c.Covered, num(c.Coverage),
			c.Flagged, flaggedBy(c.FlaggedBy), c.SilentMisses, num(c.MeanBias), num(c.MeanWidth))
		rows = append(rows, []string{c.Scenario, c.Policy, c.Estimator, c.Sample, strconv.FormatBool(c.Headline), c.Quantity, strconv.Itoa(c.Cells), strconv.Itoa(c.Covered),
			csvNum(c.Coverage), strconv.Itoa(c.Flagged), flaggedBy(c.FlaggedBy), strconv.Itoa(c.SilentMisses), csvNum(c.MeanBias), csvNum(c.MeanWidth)})
	}
	s.notes(b)
	return rows
}
