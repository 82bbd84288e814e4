package experiment

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// Quantities of the calibration study.
const (
	QuantitySite   = "site_value"
	QuantityRobust = "robust_value"
)

// coverageMethods are the fixed policies the calibration study evaluates:
// the behaviour fallback (the data's most frequent action, no regression)
// and Algorithm 1 solved on each replicate.
var coverageMethods = []solve.Method{solve.Behaviour, solve.Sitewise}

// CoverageResult is one (policy, quantity)'s calibration over the
// replicates: how often the reported interval (or, for a value flagged as
// not identified, the bounds' interval) contains the exact value.
type CoverageResult struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	Quantity string `json:"quantity"`
	// Estimator (fqe, pdwis, wdr, observed), Sample (in: eval on the
	// training rows; cross: validate's cross-fit) and Headline (the
	// estimate eval and validate print first) are the clinical study's;
	// the other scenarios' studies evaluate fitted-Q in sample only and
	// leave them empty.
	Estimator string `json:"estimator,omitempty"`
	Sample    string `json:"sample,omitempty"`
	Headline  bool   `json:"headline,omitempty"`
	// Cells counts (site, replicate) pairs for site values, replicates for
	// the robust value.
	Cells int `json:"cells"`
	// Covered counts cells whose interval contains the exact value: the
	// bootstrap interval when the value is identified (or the map has no
	// bounds), the bounds' interval when it is not.
	Covered  int    `json:"covered"`
	Coverage Number `json:"coverage"`
	// Flagged counts misses that carried a warning (eval's interval
	// warnings) or identified: false; SilentMisses the misses with
	// neither.
	Flagged      int `json:"flagged"`
	SilentMisses int `json:"silent_misses"`
	// FlaggedBy counts the flagged misses by the kind of warning that
	// flagged them (clinical study; a miss may carry several).
	FlaggedBy map[string]int `json:"flagged_by,omitempty"`
	// NotIdentified counts cells flagged as not identified, Warned the
	// cells with an interval warning (missed or not).
	NotIdentified int `json:"not_identified"`
	Warned        int `json:"warned"`
	// MeanBias is the mean of estimate minus exact value over the cells;
	// MeanWidth the mean width of the interval used for coverage.
	MeanBias  Number `json:"mean_bias"`
	MeanWidth Number `json:"mean_width"`
}

// CoverageCell is one evaluated value of one replicate.
type CoverageCell struct {
	Rep      int    `json:"rep"`
	Policy   string `json:"policy"`
	Quantity string `json:"quantity"`
	// Estimator, Sample and Headline: see CoverageResult.
	Estimator string `json:"estimator,omitempty"`
	Sample    string `json:"sample,omitempty"`
	Headline  bool   `json:"headline,omitempty"`
	// Site is "" for the robust value.
	Site  string `json:"site,omitempty"`
	Exact Number `json:"exact"`
	// ExactSE is the exact value's Monte Carlo standard error (clinical
	// study; 0 where the exact value is computed exactly).
	ExactSE    Number `json:"exact_se,omitempty"`
	Estimate   Number `json:"estimate"`
	CILow      Number `json:"ci_low"`
	CIHigh     Number `json:"ci_high"`
	Bias       Number `json:"bias"`
	Lower      Number `json:"lower"`
	Upper      Number `json:"upper"`
	Identified bool   `json:"identified"`
	Warned     bool   `json:"warned"`
	Covered    bool   `json:"covered"`
	// Flags names the warnings printed about the value (clinical study).
	Flags []string `json:"flags,omitempty"`
}

// cellOf scores one value against its exact value.
func cellOf(rep int, policy, quantity, site string, exact, est, lo, hi, bias, lower, upper, blo, bhi float64, identified bool) CoverageCell {
	c := CoverageCell{Rep: rep, Policy: policy, Quantity: quantity, Site: site, Exact: Number(exact), Estimate: Number(est),
		CILow: Number(lo), CIHigh: Number(hi), Bias: Number(bias), Lower: Number(lower), Upper: Number(upper), Identified: identified}
	// eval warns about bounds wider than the interval only for identified
	// values (the others carry the not-identified warning).
	if identified {
		c.Warned = eval.IntervalWarned(est, lo, hi, bias, lower, upper)
	} else {
		c.Warned = eval.IntervalWarned(est, lo, hi, bias, math.NaN(), math.NaN())
	}
	if !identified {
		lo, hi = blo, bhi
		c.CILow, c.CIHigh = Number(lo), Number(hi)
	}
	c.Covered = lo <= exact && exact <= hi
	return c
}

// coverageTrial is one replicate's cells.
type coverageTrial struct {
	cells []CoverageCell
	seeds TrialSeeds
}

func (c Config) coverageParams(seed uint64) sim.Params {
	p := sim.Params{Seed: seed, Trajectories: c.Trajectories}
	if c.evalSamples > 0 && c.Scenario == sim.ScenarioBenchmark {
		spec := sim.DefaultBenchmarkSpec()
		spec.EvalSamples = c.evalSamples
		p.Benchmark = &spec
	}
	if c.evalSamples > 0 && c.Scenario == sim.ScenarioClinical {
		spec := sim.DefaultClinicalSpec()
		spec.EvalEpisodes = c.evalSamples
		p.Clinical = &spec
	}
	return p
}

func runCoverage(ctx context.Context, cfg Config) (*Summary, error) {
	if cfg.Scenario == sim.ScenarioClinical {
		return runClinicalCoverage(ctx, cfg)
	}
	if _, err := sim.New(cfg.Scenario, cfg.coverageParams(0)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	trials := make([]coverageTrial, cfg.Reps)
	err := forEach(ctx, cfg.Workers, cfg.Reps, cfg.Progress, func(ctx context.Context, r int) error {
		seeds := TrialSeeds{Rep: r, Model: Derive(cfg.Seed, uint64(r), tagModel), Data: []uint64{Derive(cfg.Seed, uint64(r), tagData, 0)}, Eval: Derive(cfg.Seed, uint64(r), tagEval)}
		cells, err := coverageRun(ctx, cfg, r, seeds)
		if err != nil {
			return fmt.Errorf("trial %d: %w", r, err)
		}
		trials[r] = coverageTrial{cells: cells, seeds: seeds}
		return nil
	})
	if err != nil {
		return nil, err
	}
	m, _ := sim.New(cfg.Scenario, cfg.coverageParams(trials[0].seeds.Model))
	fm := m.Map()
	p := m.Params()
	var spec any = p.Formulary
	if p.Benchmark != nil {
		spec = p.Benchmark
	}
	s := &Summary{
		Experiment: Coverage, Paper: "none: calibration of grmdp eval's intervals and flags", Command: cfg.Command, Reps: cfg.Reps, Seed: cfg.Seed,
		Settings: Settings{
			Scenario: cfg.Scenario, Features: fm.Kind.String(), Sites: len(m.Sites()), Actions: fm.A, Horizon: m.Horizon(), D: fm.Dim(),
			Trajectories: m.Trajectories(), Lambda: Number(cfg.Lambda), Xi: Number(cfg.Xi), C: numbers(cfg.C),
			Fallback: string(solve.FallbackBehaviour), Sampler: "trajectories", Spec: spec, Level: Level, Bootstrap: cfg.Bootstrap,
			Model: "redrawn per replicate from its model seed",
		},
	}
	for _, meth := range coverageMethods {
		s.Settings.Methods = append(s.Settings.Methods, string(meth))
	}
	for _, meth := range coverageMethods {
		for _, q := range []string{QuantitySite, QuantityRobust} {
			res := CoverageResult{Scenario: cfg.Scenario, Policy: string(meth), Quantity: q}
			bias, width := 0.0, 0.0
			for _, t := range trials {
				for _, c := range t.cells {
					if c.Policy != string(meth) || c.Quantity != q {
						continue
					}
					res.Cells++
					bias += float64(c.Estimate - c.Exact)
					width += float64(c.CIHigh - c.CILow)
					if !c.Identified {
						res.NotIdentified++
					}
					if c.Warned {
						res.Warned++
					}
					switch {
					case c.Covered:
						res.Covered++
					case c.Warned || !c.Identified:
						res.Flagged++
					default:
						res.SilentMisses++
					}
				}
			}
			n := float64(res.Cells)
			res.Coverage, res.MeanBias, res.MeanWidth = Number(float64(res.Covered)/n), Number(bias/n), Number(width/n)
			s.Coverage = append(s.Coverage, res)
		}
	}
	for _, t := range trials {
		s.Seeds = append(s.Seeds, t.seeds)
		s.Cells = append(s.Cells, t.cells...)
	}
	s.Notes = []string{
		fmt.Sprintf("each replicate draws a %s model and one data set from its seeds (the scenario's default sizes unless --trajectories says otherwise), solves the policies on the data with grmdp solve's defaults (lambda %g, c %g, xi %g, the behaviour fallback) and evaluates each with grmdp eval's estimator: %d bootstrap replicates, %g%% basic intervals, identification bounds for indicator maps", cfg.Scenario, cfg.Lambda, cfg.C[0], cfg.Xi, cfg.Bootstrap, 100*Level),
		"exact values: a site's own value under the model averaged over the site's own initial-state law (eval.Model.ExactSites); the robust value under the model averaged over the data's initial-state law, each site's law weighted by its number of trajectories (eval.Model.ExactRobustAtData), which is what the robust estimate averages over",
		"covered: the bootstrap interval contains the exact value, or, for a value flagged as not identified, the bounds' interval (the lower bound's lower end to the upper bound's upper end) does",
		"flagged: misses that carried an interval warning (the interval misses its estimate, the bootstrap bias exceeds half its width, or the identification bounds are wider than the interval) or identified: false; silent_misses: misses with neither",
		"mean_bias: mean of estimate minus exact value; mean_width: mean width of the interval used for coverage",
	}
	return s, nil
}

// coverageRun draws replicate r's model and data, solves and evaluates
// every policy and scores each value against the model's.
func coverageRun(ctx context.Context, cfg Config, r int, seeds TrialSeeds) ([]CoverageCell, error) {
	m, err := sim.New(cfg.Scenario, cfg.coverageParams(seeds.Model))
	if err != nil {
		return nil, err
	}
	t, err := m.Sample(seeds.Data[0])
	if err != nil {
		return nil, err
	}
	fm := m.Map()
	st, err := solve.NewStats(ctx, t, fm, fm.Blocks(), 1)
	if err != nil {
		return nil, err
	}
	settings := solve.Settings{Lambda: cfg.Lambda, C: cfg.C[0], Xi: cfg.Xi, Workers: 1, Fallback: solve.FallbackBehaviour}
	sv := solve.NewSolver(st, settings)
	me := eval.NewModel(m)
	var out []CoverageCell
	for _, meth := range coverageMethods {
		p, err := sv.Solve(ctx, solve.Problem{Method: meth})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", meth, err)
		}
		rep, err := eval.FromData(ctx, solve.NewSolver(st, settings), p, settings, eval.Options{Bootstrap: cfg.Bootstrap, Seed: seeds.Eval, Workers: 1})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", meth, err)
		}
		exact, err := me.ExactSites(p)
		if err != nil {
			return nil, err
		}
		robust, err := me.ExactRobustAtData(p, t.Trajectories)
		if err != nil {
			return nil, err
		}
		name := string(meth)
		for k, sv := range rep.Sites {
			out = append(out, cellOf(r, name, QuantitySite, sv.Site, exact[k], sv.Value, sv.CILow, sv.CIHigh, sv.Bias,
				sv.Lower, sv.Upper, sv.BoundsCILow, sv.BoundsCIHigh, sv.Identified))
		}
		out = append(out, cellOf(r, name, QuantityRobust, "", robust, rep.PolicyValue, rep.ValueCILow, rep.ValueCIHigh, rep.ValueBias,
			rep.Lower, rep.Upper, rep.BoundsCILow, rep.BoundsCIHigh, rep.Identified))
	}
	return out, nil
}

// coverageTable writes table.md and returns table.csv's rows.
func (s *Summary) coverageTable(b *strings.Builder) [][]string {
	if len(s.Coverage) > 0 && s.Coverage[0].Estimator != "" {
		return s.clinicalTable(b)
	}
	st := s.Settings
	fmt.Fprintf(b, "# Calibration of the evaluation's intervals: %s scenario\n\n", st.Scenario)
	fmt.Fprintf(b, "Reproduce with `%s`. R = %d replicates, seed %d; replicate r's seeds are derived from (seed, r) alone and listed in summary.json.\n\n", s.Command, s.Reps, s.Seed)
	fmt.Fprintf(b, "Settings: K = %d sites of sizes %s, A = %d actions, H = %d, %s features (d = %d); lambda = %s, xi = %s, c = %s; %d bootstrap replicates, %g%% intervals.\n\n",
		st.Sites, joinInts(st.Trajectories), st.Actions, st.Horizon, st.Features, st.D, num(st.Lambda), num(st.Xi), num(st.C[0]), st.Bootstrap, 100*st.Level)
	b.WriteString("| policy | quantity | cells | covered | coverage | flagged misses | silent misses | not identified | warned | mean bias | mean width |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	rows := [][]string{{"scenario", "policy", "quantity", "cells", "covered", "coverage", "flagged", "silent_misses", "not_identified", "warned", "mean_bias", "mean_width"}}
	for _, c := range s.Coverage {
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %d | %d | %d | %d | %s | %s |\n", c.Policy, c.Quantity, c.Cells, c.Covered, num(c.Coverage), c.Flagged, c.SilentMisses, c.NotIdentified, c.Warned, num(c.MeanBias), num(c.MeanWidth))
		rows = append(rows, []string{c.Scenario, c.Policy, c.Quantity, strconv.Itoa(c.Cells), strconv.Itoa(c.Covered), csvNum(c.Coverage), strconv.Itoa(c.Flagged),
			strconv.Itoa(c.SilentMisses), strconv.Itoa(c.NotIdentified), strconv.Itoa(c.Warned), csvNum(c.MeanBias), csvNum(c.MeanWidth)})
	}
	s.notes(b)
	return rows
}
