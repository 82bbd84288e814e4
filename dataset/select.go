package dataset

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/solve"
)

// Choosing the penalty from data (DESIGN.md): the paper's beta = c d H
// sqrt(zeta) is a worst-case constant that on sparse data erases every
// estimate. [Data.Select] chooses c (and lambda, and step pooling) among
// candidates, the behaviour fallback included, by cross-fitting, and
// [Data.SolveSelected] refits the winner on every row.

// DefaultCSteps is the number of decades of the default path of c below
// the given c: c, c/10, ..., c/10^DefaultCSteps, then 0 (from the paper's
// default 5e-4: 5e-4, 5e-5, ..., 5e-10, 0).
const DefaultCSteps = 6

// DefaultSelectLevel is the level of the two-sided basic bootstrap
// interval of the minimum over sites whose lower limit scores a candidate:
// 0.9, nominally a one-sided 95% limit. The score ranks candidates; it
// is not the worst-site interval eval and validate report ([eval.WorstOf])
// and is known to be optimistic for the minimum (see scoreWorst).
const DefaultSelectLevel = 0.9

// DefaultSelectFolds is the number of folds of a cross-fitted choice
// when [SelectOptions].Folds is 0, for maps whose features are not
// indicators of cells (action-block, soft-binned, ...): 2, so that each
// held-out fold holds half of every site's trajectories. Under these maps
// the held-out evaluation, not the learning, limits the choice: fitted-Q
// on a held-out fold is a regression per step with d features, and on a
// fifth of a site's trajectories (40 of 200 at the benchmark's smallest
// site with --min-trajectories 200, about 4 rows per action and step for
// the action-block map's 3 features per action) it is barely determined
// and biased low for the actions the fold rarely took, by amounts that
// differ between candidates. Halves give every held-out regression 2.5
// times the rows of fifths; the candidates, learned on half the rows,
// keep their order.
const DefaultSelectFolds = 2

// DefaultSelectCellFolds is the number of folds of a cross-fitted choice
// when [SelectOptions].Folds is 0, for maps whose features are indicators
// of cells (tabular, indicator, binned): [DefaultFolds]. Under these maps
// a candidate at a small c learned on half the rows acts on most cells
// without evidence, and its held-out gain over the fallback can clear 0
// under both estimators while its exact value is below the fallback's
// (docs/RESULTS.md, the formulary scenario).
const DefaultSelectCellFolds = DefaultFolds

// SelectFolds returns the number of folds of a cross-fitted choice under
// m when none is given: [DefaultSelectCellFolds] for maps whose features
// are indicators of cells, otherwise [DefaultSelectFolds].
func SelectFolds(m *features.Map) int {
	if _, ok := solve.BehaviourCells(m); ok {
		return DefaultSelectCellFolds
	}
	return DefaultSelectFolds
}

// DefaultSelectBootstrap is the number of bootstrap replicates of each
// held-out fold when [SelectOptions].Bootstrap is 0. The replicates are
// most of a choice's cost (each is a held-out evaluation of every
// candidate); 30 place the 90% interval's lower limit near the second
// largest replicate.
const DefaultSelectBootstrap = 30

// DefaultCPath returns the default path of c below c: c/10^k for k = 0 ..
// DefaultCSteps, then 0, from the largest down.
func DefaultCPath(c float64) []float64 {
	var out []float64
	for k := 0; k <= DefaultCSteps && c > 0; k++ {
		out = append(out, c/math.Pow(10, float64(k)))
	}
	return append(out, 0)
}

// DefaultLambdaGrid returns the grid of lambda that --lambda auto tries
// around lambda: lambda/10, lambda, 10 lambda.
func DefaultLambdaGrid(lambda float64) []float64 {
	return []float64{lambda / 10, lambda, lambda * 10}
}

// SelectOptions say which candidates [Data.Select] tries and how it
// cross-fits them.
type SelectOptions struct {
	// Settings are the base settings (workers, xi, fallback rule, ...);
	// each candidate sets C, Lambda and Stationary in them. Beta must not
	// be given.
	Settings solve.Settings
	Problem  solve.Problem
	// Cs is the path of c (nil: DefaultCPath(Settings.C)), Lambdas the
	// grid of lambda (nil: Settings.Lambda alone) and Stationary the
	// step-pooling settings tried (nil: Settings.Stationary alone).
	Cs         []float64
	Lambdas    []float64
	Stationary []bool
	// Folds is the number of folds (0: [SelectFolds] of the map), Seed draws them
	// and the bootstrap, Bootstrap is the number of replicates of each
	// held-out fold (0: DefaultSelectBootstrap) and Level the interval's
	// level (0: DefaultSelectLevel).
	Folds     int
	Seed      uint64
	Bootstrap int
	Level     float64
	// OnFold, when set, is called as each fold's candidates are done.
	OnFold func(done, folds int)
}

// Candidate is one setting [Data.Select] tries: the behaviour fallback
// (cloning: the method behaviour), or the problem under C, Lambda and
// Stationary. A candidate with a Problem of its own ([Data.HeldOut]) is
// that problem under the base settings as given.
type Candidate struct {
	Fallback   bool
	C, Lambda  float64
	Stationary bool
	Problem    *solve.Problem
}

// settings returns base with the candidate's settings.
func (c Candidate) settings(base solve.Settings) solve.Settings {
	s := base
	if !c.Fallback && c.Problem == nil {
		s.C, s.Lambda, s.Stationary, s.BetaSet = c.C, c.Lambda, c.Stationary, false
	}
	return s
}

// problem returns the problem the candidate learns, given the options'.
func (c Candidate) problem(prob solve.Problem) solve.Problem {
	switch {
	case c.Fallback:
		return solve.Problem{Method: solve.Behaviour}
	case c.Problem != nil:
		return *c.Problem
	}
	return prob
}

// Candidates returns the candidates of o from the most pessimistic to the
// least: the behaviour fallback first, then by c from the largest, lambda
// from the largest, without step pooling before with it. [Data.Select]
// breaks ties toward the earlier.
func (o SelectOptions) Candidates() []Candidate {
	cs := slices.Clone(o.Cs)
	if cs == nil {
		cs = DefaultCPath(o.Settings.C)
	}
	ls := slices.Clone(o.Lambdas)
	if ls == nil {
		ls = []float64{o.Settings.Lambda}
	}
	st := slices.Clone(o.Stationary)
	if st == nil {
		st = []bool{o.Settings.Stationary}
	}
	down := func(a, b float64) int { return cmp.Compare(b, a) }
	slices.SortFunc(cs, down)
	slices.SortFunc(ls, down)
	cs, ls = slices.Compact(cs), slices.Compact(ls)
	slices.SortFunc(st, func(a, b bool) int { return cmp.Compare(b2i(a), b2i(b)) })
	st = slices.Compact(st)
	out := []Candidate{{Fallback: true}}
	for _, c := range cs {
		for _, l := range ls {
			for _, s := range st {
				out = append(out, Candidate{C: c, Lambda: l, Stationary: s})
			}
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Selection is the record of a cross-fitted choice of settings: the folds,
// their seed, the interval's level, the choice and every candidate's
// held-out score. JSON keys are the fields' tags; the behaviour fallback
// has c and lambda null, and stationary is present when step pooling was
// a choice.
type Selection struct {
	Folds      int              `json:"folds"`
	Seed       uint64           `json:"seed"`
	Level      float64          `json:"level"`
	Chosen     ChosenSettings   `json:"chosen"`
	Candidates []ScoredSettings `json:"candidates"`
	// Estimator names the held-out estimator of every candidate's values
	// and Bootstrap the replicates per fold; Method is the problem's
	// method.
	Estimator string `json:"-"`
	Bootstrap int    `json:"-"`
	Method    string `json:"-"`
	// Index is the chosen candidate's index in Candidates.
	Index int `json:"-"`
}

// ChosenSettings are the chosen c and lambda (null: the behaviour
// fallback), and whether steps are pooled when that was a choice.
type ChosenSettings struct {
	C          *float64 `json:"c"`
	Lambda     *float64 `json:"lambda"`
	Stationary *bool    `json:"stationary,omitempty"`
}

// ScoredSettings is one candidate's held-out record: its score (the lower
// limit of the basic bootstrap interval of the minimum over sites of the
// held-out values, a ranking score paired across candidates, not the
// worst-site interval validate reports: see scoreWorst), its gain over the behaviour
// fallback (the lower limit of the paired difference of the worst sites'
// held-out values by weighted doubly robust and, for maps of cell
// indicators, the smaller of it and fitted-Q's; null when the fallback is
// not scored with it or a value is missing), the worst site, every site's
// held-out value with its interval, and the share of held-out decisions
// without evidence.
type ScoredSettings struct {
	C               *float64     `json:"c"`
	Lambda          *float64     `json:"lambda"`
	Stationary      *bool        `json:"stationary,omitempty"`
	Score           *float64     `json:"score"`
	Gain            *float64     `json:"gain"`
	WorstSite       string       `json:"worst_site"`
	Sites           []ScoredSite `json:"sites"`
	NoEvidenceShare float64      `json:"no_evidence_share"`
	// Candidate is the setting scored and Worst its worst site's
	// held-out value with the interval of the minimum over sites;
	// worstReps are the bootstrap replicates of that minimum (each
	// replicate's minimum over sites), paired across candidates.
	Candidate Candidate    `json:"-"`
	Worst     WorstHeldOut `json:"-"`
	worstReps []float64
}

// gainEstimators returns the held-out estimators a candidate's gain over
// the fallback must hold under: weighted doubly robust, and for maps whose
// features are indicators of cells (tabular, indicator, binned) also
// fitted-Q. Under such a map a cell the held-out fold does not observe
// has no features with data and counts as 0, both in the fitted-Q value
// and in the model part of the doubly robust one, so neither alone ranks
// policies; the gain must hold under both. Under the other maps the
// held-out fitted-Q value, a regression with a tiny ridge on a fold's few
// trajectories, varies so much across the bootstrap that its interval
// hides differences the doubly robust estimator resolves.
func gainEstimators(m *features.Map) []string {
	if _, ok := solve.BehaviourCells(m); ok {
		return []string{eval.FQE, eval.WDR}
	}
	return []string{eval.WDR}
}

// gain returns the lower limit of the interval of the difference between
// the worst site's value of vals and the fallback's worst site's value,
// paired (each replicate's minima on the same held-out rows and
// resampling); without a bootstrap the difference. NaN when either has no
// value.
func (c *combiner) gain(vals []float64, reps [][]float64, fb *diffOf) float64 {
	worstDiff := func(v, f []float64) float64 {
		a, _ := minOf(v)
		b, _ := minOf(f)
		return a - b
	}
	theta := worstDiff(vals, fb.vals)
	if len(reps) == 0 || math.IsNaN(theta) {
		return theta
	}
	x := make([]float64, len(reps))
	for b := range reps {
		x[b] = worstDiff(reps[b], fb.reps[b])
	}
	lo, _ := eval.BasicCI(theta, x, c.level)
	return lo
}

// ScoredSite is one site's held-out value with its interval (null without
// a bootstrap).
type ScoredSite struct {
	Site   string   `json:"site"`
	Value  *float64 `json:"value"`
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
}

// Eligible reports whether candidate i may be chosen: the fallback
// always; a learned candidate when its gain over the fallback is above 0
// and its score is at least the fallback's. Candidates[0] is the
// fallback.
func (s *Selection) Eligible(i int) bool {
	c, fb := s.Candidates[i], s.Candidates[0]
	if c.Candidate.Fallback {
		return true
	}
	return c.Gain != nil && *c.Gain > 0 && c.Score != nil && (fb.Score == nil || *c.Score >= *fb.Score)
}

// Ties reports whether learned candidate i ties with candidate b: the
// held-out data do not show i's worst site below b's, that is the upper
// limit, at the selection's level, of the paired basic bootstrap interval
// of the difference of their worst sites' held-out values (each
// replicate's minima over sites, on the same held-out rows and
// resampling) is at least 0. The fallback ties with no candidate, and
// without a bootstrap a candidate ties only with itself.
func (s *Selection) Ties(i, b int) bool {
	c, best := s.Candidates[i], s.Candidates[b]
	if i == b {
		return true
	}
	if c.Candidate.Fallback || len(c.worstReps) == 0 || len(c.worstReps) != len(best.worstReps) {
		return false
	}
	theta := c.Worst.Value - best.Worst.Value
	if math.IsNaN(theta) {
		return false
	}
	x := make([]float64, len(c.worstReps))
	for r := range x {
		x[r] = c.worstReps[r] - best.worstReps[r]
	}
	_, hi := eval.BasicCI(theta, x, s.Level)
	return hi >= 0
}

// worstReplicates returns each replicate's minimum over sites (nil
// without replicates).
func worstReplicates(reps [][]float64) []float64 {
	if len(reps) == 0 {
		return nil
	}
	x := make([]float64, len(reps))
	for b := range reps {
		x[b], _ = minOf(reps[b])
	}
	return x
}

// IsFallback reports whether the behaviour fallback was chosen.
func (s *Selection) IsFallback() bool { return s.Candidates[s.Index].Candidate.Fallback }

// Settings returns base under the chosen candidate's settings.
func (s *Selection) Settings(base solve.Settings) solve.Settings {
	return s.Candidates[s.Index].Candidate.settings(base)
}

// Problem returns the problem to refit: prob, or behaviour cloning when
// the fallback was chosen.
func (s *Selection) Problem(prob solve.Problem) solve.Problem {
	return s.Candidates[s.Index].Candidate.problem(prob)
}

// JSON returns the selection as JSON (the policy artifact's record).
func (s *Selection) JSON() (json.RawMessage, error) { return json.Marshal(s) }

// Select cross-fits every candidate of o and chooses one. Each site's
// trajectories are split into K folds ([Folds], as [Data.Validate]; K is
// o.Folds, by default [SelectFolds] of the map); for
// each fold every candidate is learned on the other folds and evaluated on
// the fold by the headline estimator, with the fold's bootstrap seed
// ([FoldSeed]) shared by the candidates, so their replicates are paired.
// The folds' values combine per site as in Validate. A candidate's score
// is the lower limit, at o.Level, of the basic bootstrap interval of its
// worst site's held-out value (the minimum over sites, each replicate's
// minimum giving the interval, as Validate's worst_site); without a
// bootstrap it is the worst site's value. Its gain is the lower limit,
// at o.Level, of the interval of the difference between its worst site's
// held-out value and the fallback's, paired (each replicate's minima on
// the same held-out rows and resampling), by weighted doubly robust and,
// for maps whose features are indicators of cells, also by fitted-Q: the
// smaller of the two.
//
// A learned candidate is eligible when its gain is above 0 (held out, its
// worst site beats the fallback's, at the level) and its score is at
// least the fallback's. The best is the eligible candidate with the
// highest score (the earlier of equal scores; with none eligible, the
// fallback). The choice is the most pessimistic eligible candidate that
// ties with the best (the order of [SelectOptions.Candidates]: the
// fallback first, then the larger c, the larger lambda, no step pooling):
// a learned candidate ties with the best when the held-out data do not
// show its worst site below the best's, the upper limit at o.Level of the
// paired interval of the difference of their worst sites' values by the
// headline estimator reaching 0 ([Selection.Ties]; the fallback ties with
// no learned candidate). A larger c gives up little where the data cannot
// tell the candidates apart, and the held-out differences between
// neighbouring c on a path are mostly noise. The gain is what makes the
// choice honest on sparse data:
// under a map of cell indicators the held-out fitted-Q value of every
// policy is far below the truth (a cell the held-out fold does not
// observe counts as 0), by amounts that differ between policies, so the
// fitted-Q level alone does not rank policies; the doubly robust
// estimator corrects the model with the returns of the logged actions
// (see gainEstimators).
func (d *Data) Select(ctx context.Context, o SelectOptions) (*Selection, error) {
	if err := d.Held("a cross-fitted choice of settings"); err != nil {
		return nil, err
	}
	if d.opts.Disclosure.Active() {
		return nil, optionErr("Disclosure", "", "a cross-fitted choice evaluates each held-out fold with a bootstrap, which needs statistics without disclosure control")
	}
	if o.Settings.BetaSet {
		return nil, optionErr("Beta", fmt.Sprint(o.Settings.Beta), "a cross-fitted choice of c sets beta from c")
	}
	if o.Problem.Method == solve.Behaviour {
		return nil, optionErr("Method", string(o.Problem.Method), "behaviour cloning has no penalty to choose")
	}
	cands := o.Candidates()
	for _, c := range cands {
		if !c.Fallback && (!(c.C >= 0) || !(c.Lambda > 0) || math.IsInf(c.C, 0) || math.IsInf(c.Lambda, 0)) {
			return nil, optionErr("Candidates", fmt.Sprintf("c %g, lambda %g", c.C, c.Lambda), "c must be a nonnegative number and lambda positive")
		}
	}
	sel, err := d.score(ctx, o, cands)
	if err != nil {
		return nil, err
	}
	sel.choose()
	return sel, nil
}

// choose sets Index and Chosen by the rule of [Data.Select]: the best is
// the eligible candidate with the highest score, the earlier on equal
// scores; the choice is the earliest eligible candidate that ties with
// the best ([Selection.Ties]). Candidates[0] is the fallback.
func (s *Selection) choose() {
	score := func(i int) float64 {
		if x := s.Candidates[i].Score; x != nil {
			return *x
		}
		return math.Inf(-1)
	}
	best := 0
	for i := range s.Candidates {
		if s.Eligible(i) && score(i) > score(best) {
			best = i
		}
	}
	for i := range best {
		if s.Eligible(i) && s.Ties(i, best) {
			best = i
			break
		}
	}
	s.Index = best
	s.Chosen = ChosenSettings{C: s.Candidates[best].C, Lambda: s.Candidates[best].Lambda, Stationary: s.Candidates[best].Stationary}
}

// HeldOut scores each problem of probs under o.Settings as given (beta
// included) as [Data.Select] scores its candidates, on the same folds and
// replicates: a method's held-out record for comparing methods out of
// sample (behaviour cloning is the fallback's record). o.Problem, Cs,
// Lambdas and Stationary are not used.
func (d *Data) HeldOut(ctx context.Context, o SelectOptions, probs []solve.Problem) ([]ScoredSettings, error) {
	if err := d.Held("a cross-fitted evaluation"); err != nil {
		return nil, err
	}
	if d.opts.Disclosure.Active() {
		return nil, optionErr("Disclosure", "", "a cross-fitted evaluation evaluates each held-out fold with a bootstrap, which needs statistics without disclosure control")
	}
	var cands []Candidate
	for _, prob := range probs {
		if prob.Method == solve.Behaviour {
			cands = append(cands, Candidate{Fallback: true})
			continue
		}
		c := Candidate{C: o.Settings.C, Lambda: o.Settings.Lambda, Stationary: o.Settings.Stationary, Problem: &prob}
		cands = append(cands, c)
	}
	o.Stationary = nil
	sel, err := d.score(ctx, o, cands)
	if err != nil {
		return nil, err
	}
	return sel.Candidates, nil
}

// score cross-fits cands under o and scores each (see [Data.Select]): the
// selection without a choice.
func (d *Data) score(ctx context.Context, o SelectOptions, cands []Candidate) (*Selection, error) {
	K := cmp.Or(o.Folds, SelectFolds(&d.fmap))
	if K < 2 {
		return nil, optionErr("Folds", fmt.Sprint(o.Folds), "a cross-fit needs at least 2 folds")
	}
	o.Folds = K
	o.Bootstrap = cmp.Or(o.Bootstrap, DefaultSelectBootstrap)
	if o.Bootstrap < 0 {
		o.Bootstrap = 0
	}
	o.Level = cmp.Or(o.Level, DefaultSelectLevel)
	t := d.table
	fold := Folds(t, K, o.Seed)
	reports, noev, err := d.crossFit(ctx, o, cands, fold, K)
	if err != nil {
		return nil, err
	}
	return d.rank(o, cands, fold, reports, noev), nil
}

// rank scores the cross-fitted candidates (see [Data.Select]) from their
// held-out reports.
func (d *Data) rank(o SelectOptions, cands []Candidate, fold []int32, reports [][]*eval.Report, noev []float64) *Selection {
	t, comb := d.table, d.foldCombiner(fold, o.Folds, o)
	nS := len(t.Sites)
	sel := &Selection{Folds: o.Folds, Seed: o.Seed, Level: o.Level, Bootstrap: o.Bootstrap, Method: string(o.Problem.Method),
		Estimator: reports[0][0].Estimator}
	pooling := len(slices.Compact(slices.Clone(o.Stationary))) > 1
	var fb map[string]*diffOf
	if i := slices.IndexFunc(cands, func(c Candidate) bool { return c.Fallback }); i >= 0 {
		fb = map[string]*diffOf{}
		for _, e := range gainEstimators(&d.fmap) {
			v, r := comb.estimate(reports[i], e)
			fb[e] = &diffOf{vals: v, reps: r}
		}
	}
	for i, c := range cands {
		vals, reps := comb.estimate(reports[i], sel.Estimator)
		sc := ScoredSettings{Candidate: c, NoEvidenceShare: noev[i]}
		if !c.Fallback {
			sc.C, sc.Lambda = ptr(c.C), ptr(c.Lambda)
			if pooling {
				sc.Stationary = &c.Stationary
			}
		}
		for k := 0; k < nS; k++ {
			h := comb.heldOut(sel.Estimator, vals, reps, k, nil)
			sc.Sites = append(sc.Sites, ScoredSite{Site: t.Sites[k], Value: finite(h.Value), CILow: finite(h.CILow), CIHigh: finite(h.CIHigh)})
		}
		sc.Worst = comb.scoreWorst(t.Sites, sel.Estimator, vals, reps)
		sc.worstReps = worstReplicates(reps)
		sc.WorstSite = sc.Worst.Site
		score := sc.Worst.CILow
		if o.Bootstrap == 0 {
			score = sc.Worst.Value
		}
		sc.Score = finite(score)
		if fb != nil {
			g := math.Inf(1)
			for _, e := range gainEstimators(&d.fmap) {
				v, r := comb.estimate(reports[i], e)
				g = math.Min(g, comb.gain(v, r, fb[e]))
			}
			sc.Gain = finite(g)
		}
		sel.Candidates = append(sel.Candidates, sc)
	}
	return sel
}

func ptr(x float64) *float64 { return &x }

// crossFit learns every candidate on every fold's training rows
// ([Data.learnCandidates]) and evaluates it on the fold: reports[c][f] is
// candidate c's evaluation on fold f, noev[c] its share of held-out
// decisions without evidence. It is the one seam between the choice and
// the fitting. Each fold's held-out statistics are formed once and shared
// by the candidates' evaluations, with the behaviour models fitted to the
// fold and the factors of the bootstrap replicates' Grams (the candidates
// are evaluated on the same replicates, [solve.Stats.ShareReplicateFactors]).
func (d *Data) crossFit(ctx context.Context, o SelectOptions, cands []Candidate, fold []int32, K int) (reports [][]*eval.Report, noev []float64, err error) {
	t := d.table
	blocks := solve.BlocksFor(t, &d.fmap)
	pols, err := d.learnCandidates(ctx, o, cands, blocks, fold, K)
	if err != nil {
		return nil, nil, err
	}
	reports = make([][]*eval.Report, len(cands))
	noev = make([]float64, len(cands))
	decisions := 0.0
	for f := 0; f < K; f++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		stop := timing.Start(ctx, "selection: held-out evaluation")
		held, err := solve.NewStats(ctx, HeldOutTable(t, fold, int32(f)), d.fmap, blocks, o.Settings.Workers)
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		held.ShareReplicateFactors()
		decisions += float64(held.Table.Rows)
		var evs [][]bool
		evs, err = d.evaluateFold(ctx, o, cands, pols, f, held, reports)
		stop()
		if err != nil {
			return nil, nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		for i, c := range cands {
			if c.Fallback {
				continue
			}
			for _, e := range evs[i] {
				if !e {
					noev[i]++
				}
			}
		}
		if o.OnFold != nil {
			o.OnFold(f+1, K)
		}
	}
	for i := range noev {
		noev[i] /= max(decisions, 1)
	}
	return reports, noev, nil
}

// evaluateFold evaluates every candidate's policy of fold f on the
// fold's held-out statistics held, appending each report to reports[c],
// and returns each candidate's evidence at every held-out row (the rows
// in step order, as [solve.ActAllMany]). The evaluations share the
// fold's behaviour models and bootstrap counts, and the replicates'
// factors through held ([solve.Stats.ShareReplicateFactors]).
//
// A held-out evaluation reads its policy only through the policy's
// decisions at the held-out rows (its action at every row, which is
// every next state the sweep values) and through the ridge parameter of
// the evaluation's regressions (the policy's lambda if below
// [eval.EvalLambda]); with [eval.Options].EstimatesOnly its penalty
// enters no estimate. Candidates whose policies decide alike at every
// row under the same ridge parameter (on sparse data, every c large
// enough that no decision has evidence, and the fallback itself) are
// evaluated once and share the report's estimates, the same bits as
// their own evaluations; each keeps its own Beta. The evaluations' sweeps
// read the decisions made here ([eval.Options].Decisions) instead of
// making them again at every row.
func (d *Data) evaluateFold(ctx context.Context, o SelectOptions, cands []Candidate, pols [][]*solve.Policy, f int, held *solve.Stats, reports [][]*eval.Report) (evs [][]bool, err error) {
	ps := make([]*solve.Policy, len(cands))
	for i := range cands {
		ps[i] = pols[i][f]
	}
	acts, evs, err := solve.ActAllMany(ctx, ps, held.Table, o.Settings.Workers, 1)
	if err != nil {
		return nil, err
	}
	models := &eval.BehaviourModels{}
	opts := eval.Options{Bootstrap: o.Bootstrap, Seed: FoldSeed(o.Seed, f), Level: o.Level, Workers: o.Settings.Workers, Behaviour: models, EstimatesOnly: true}
	for i, c := range cands {
		p := ps[i]
		es := EvalSettings(p, o.Settings.Workers)
		same := -1
		for j := range i {
			if heldOutLambda(ps[j]) == heldOutLambda(p) && slices.Equal(acts[j], acts[i]) {
				same = j
				break
			}
		}
		if same >= 0 {
			r := *reports[same][len(reports[same])-1]
			r.Beta = solve.NewSolver(held, es).SitewiseBeta()
			reports[i] = append(reports[i], &r)
			continue
		}
		opts.Decisions, opts.Evidence = acts[i], evs[i]
		r, err := eval.FromData(ctx, solve.NewSolver(held, es), p, es, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
		reports[i] = append(reports[i], r)
	}
	return evs, nil
}

// heldOutLambda is the ridge parameter of p's held-out evaluation.
func heldOutLambda(p *solve.Policy) float64 { return min(p.Lambda, eval.EvalLambda) }

// learnCandidates learns every candidate on the training rows of every
// fold: pols[c][f] is candidate c learned without fold f's trajectories,
// bit for bit the policy a solve learns from [TrainingTable] (t, fold, f)
// under the candidate's settings. The candidates without step pooling are
// learned together in one backward sweep over every fold
// ([solve.SolveLockstep]: each step's rows read once for all of them,
// Grams shared by the runs of a fold and factors by those with the same
// lambda); those with step pooling, which the sweep does not take, fold
// by fold, each fold's statistics formed once and one solver per lambda
// whose penalty varies ([solve.Solver.WithPenalty]).
func (d *Data) learnCandidates(ctx context.Context, o SelectOptions, cands []Candidate, blocks features.Blocks, fold []int32, K int) (pols [][]*solve.Policy, err error) {
	defer timing.Start(ctx, "selection: learning")()
	t := d.table
	pols = make([][]*solve.Policy, len(cands))
	var runs []solve.RunSpec
	var runOf []int // runOf[r]: the candidate of runs[r]
	var pooled []int
	for i, c := range cands {
		pols[i] = make([]*solve.Policy, K)
		s := c.settings(o.Settings)
		if s.Stationary {
			pooled = append(pooled, i)
			continue
		}
		for f := 0; f < K; f++ {
			runs = append(runs, solve.RunSpec{Holdout: f, Problem: c.problem(o.Problem), Settings: s})
			runOf = append(runOf, i)
		}
	}
	if len(runs) > 0 {
		st := d.stats
		if st == nil || st.Table != t {
			if st, err = solve.NewStats(ctx, t, d.fmap, blocks, o.Settings.Workers); err != nil {
				return nil, err
			}
		}
		out, err := solve.SolveLockstep(ctx, st, solve.Folds{Of: fold, K: K}, runs, o.Settings.Workers)
		if err != nil {
			return nil, err
		}
		for r, p := range out {
			pols[runOf[r]][runs[r].Holdout] = p
		}
	}
	if len(pooled) == 0 {
		return pols, nil
	}
	for f := 0; f < K; f++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		train, err := solve.NewStats(ctx, TrainingTable(t, fold, int32(f)), d.fmap, blocks, o.Settings.Workers)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		// One solver per lambda; the penalty varies on it.
		solvers := map[float64]*solve.Solver{}
		for _, i := range pooled {
			c := cands[i]
			s := c.settings(o.Settings)
			sv := solvers[s.Lambda]
			if sv == nil {
				sv = solve.NewSolver(train, s)
				solvers[s.Lambda] = sv
			}
			if pols[i][f], err = sv.WithPenalty(s).Solve(ctx, c.problem(o.Problem)); err != nil {
				return nil, fmt.Errorf("fold %d, %s: %w", f+1, c, err)
			}
		}
	}
	return pols, nil
}

// String names the candidate in messages.
func (c Candidate) String() string {
	if c.Fallback {
		return "behaviour fallback"
	}
	if c.Problem != nil {
		return string(c.Problem.Method)
	}
	s := fmt.Sprintf("c %g, lambda %g", c.C, c.Lambda)
	if c.Stationary {
		s += ", stationary"
	}
	return s
}

// SolveSelected chooses the settings by [Data.Select] and solves the
// chosen candidate on every row ([Data.Solve]): the problem under the
// chosen settings, or behaviour cloning when no candidate's score is
// above the fallback's. The policy records the selection
// ([solve.Policy].Selection).
func (d *Data) SolveSelected(ctx context.Context, o SelectOptions) (*Solved, *Selection, error) {
	sel, err := d.Select(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	res, err := d.Solve(ctx, sel.Settings(o.Settings), sel.Problem(o.Problem))
	if err != nil {
		return nil, nil, err
	}
	if res.Policy.Selection, err = sel.JSON(); err != nil {
		return nil, nil, err
	}
	return res, sel, nil
}
