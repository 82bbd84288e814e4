package dataset

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// DefaultFolds is the number of folds of a cross-fit when
// [ValidateOptions].Folds is 0.
const DefaultFolds = 5

// ValidateOptions say what [Data.Validate] learns and how it splits and
// resamples the data.
type ValidateOptions struct {
	// Settings and Problem are what is learned on each fold's training
	// rows, as [Data.Solve] learns it on every row.
	Settings solve.Settings
	Problem  solve.Problem
	// Folds is the number of folds K (0: DefaultFolds); it must be at
	// least 2.
	Folds int
	// Seed draws the folds and the bootstrap of each held-out fold.
	Seed uint64
	// Bootstrap is the number of bootstrap replicates of each held-out
	// evaluation (0: no intervals); Level their intervals' level (0:
	// 0.95).
	Bootstrap int
	Level     float64
	// OnFold, when set, is called as each fold is done, with the number
	// done and K.
	OnFold func(done, folds int)
	// Select, when not nil, makes the choice of settings part of what is
	// cross-fitted (--c auto): on each fold, the settings are chosen by
	// [Data.Select] among Select's candidates (Cs, Lambdas, Stationary)
	// with Select's folds, seed and bootstrap, from the fold's training
	// trajectories alone (a nested cross-fit: the held-out fold plays no
	// part in the choice), and the chosen candidate learned on them is
	// the fold's policy. Its Settings and Problem are Settings and
	// Problem. It costs a choice per fold: about K times solve --c auto.
	Select *SelectOptions
}

// Validation is a cross-fitted evaluation: every trajectory's held-out
// contribution, from the policy learned on the other folds, combined per
// site. JSON keys are those of the fields' tags (see [HeldOut] for the
// values' keys).
type Validation struct {
	Folds     int     `json:"folds"`
	Seed      uint64  `json:"seed"`
	Bootstrap int     `json:"bootstrap"`
	Level     float64 `json:"level"`
	Method    string  `json:"method"`
	// Estimator names the headline estimate of the policy's and
	// cloning's values ([eval.Report].Estimator of every fold).
	Estimator string `json:"estimator"`
	// InSample is false: every value is held out.
	InSample bool            `json:"in_sample"`
	Sites    []ValidatedSite `json:"sites"`
	// WorstSite is the policy's worst site; WorstCloning and
	// WorstObserved are cloning's and the observed care's.
	WorstSite     WorstHeldOut `json:"worst_site"`
	WorstCloning  WorstHeldOut `json:"worst_cloning"`
	WorstObserved WorstHeldOut `json:"worst_observed"`
	Warnings      []string     `json:"warnings"`
	// Fits holds each fold's policies and held-out reports, in fold
	// order.
	Fits []FoldFit `json:"-"`
	// Selections are the folds' choices of settings, in fold order, when
	// the choice was cross-fitted ([ValidateOptions].Select; absent
	// otherwise).
	Selections []*Selection `json:"selections,omitempty"`
}

// FoldFit is one fold of a cross-fit: the policy and behaviour cloning
// learned without the fold, and their evaluations on it.
type FoldFit struct {
	Policy, Cloning             *solve.Policy
	PolicyReport, CloningReport *eval.Report
}

// ValidatedSite is one site's held-out values: the learned policy's,
// behaviour cloning's (the method behaviour learned on the same rows), the
// observed care's, and the policy's differences from the latter two, each
// difference's interval from the same (paired) bootstrap replicates.
type ValidatedSite struct {
	Site string `json:"site"`
	// Trajectories is the number of the site's trajectories, each held
	// out once; FoldSizes the number held out in each fold.
	Trajectories int     `json:"trajectories"`
	FoldSizes    []int   `json:"fold_sizes"`
	Policy       HeldOut `json:"policy"`
	Cloning      HeldOut `json:"cloning"`
	Observed     HeldOut `json:"observed"`
	DiffObserved HeldOut `json:"diff_observed"`
	DiffCloning  HeldOut `json:"diff_cloning"`
	// ESS is the effective sample size of the policy's held-out
	// importance weights (PDWIS's and WDR's), the folds' combined:
	// (sum_f n_f)^2 / sum_f n_f^2 / ESS_f, with n_f the site's
	// trajectories fold f holds out and ESS_f its evaluation's
	// ([eval.SiteValue].ESS), the number of equally weighted trajectories
	// whose mean has the variance of the folds' weighted combination (0
	// when a fold's weights are all 0).
	ESS float64 `json:"ess"`
}

// HeldOut is a held-out value with its bootstrap interval (NaN without a
// bootstrap; NaN is written as JSON null) and the estimator that made it
// ("observed" for the observed care). Estimates, for the policy and
// cloning, holds every estimator's held-out value ([eval.Estimators]).
type HeldOut struct {
	Estimator string                   `json:"estimator"`
	Value     float64                  `json:"value"`
	CILow     float64                  `json:"ci_low"`
	CIHigh    float64                  `json:"ci_high"`
	Estimates map[string]eval.Estimate `json:"estimates,omitempty"`
	// bias is the bootstrap's bias estimate of a site's value (NaN
	// without a bootstrap, and for a worst site), which the interval
	// warnings judge ([eval.IntervalWarnings]).
	bias float64
}

// MarshalJSON writes NaN as null.
func (v HeldOut) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Estimator string                   `json:"estimator"`
		Value     *float64                 `json:"value"`
		CILow     *float64                 `json:"ci_low"`
		CIHigh    *float64                 `json:"ci_high"`
		Estimates map[string]eval.Estimate `json:"estimates,omitempty"`
	}{v.Estimator, finite(v.Value), finite(v.CILow), finite(v.CIHigh), v.Estimates})
}

// WorstHeldOut is the site of the lowest held-out value, that value, and
// the interval of the minimum over sites formed from the sites' own
// held-out intervals ([eval.WorstOf]).
type WorstHeldOut struct {
	Site string `json:"site"`
	HeldOut
}

// MarshalJSON writes the site beside the value's keys.
func (w WorstHeldOut) MarshalJSON() ([]byte, error) {
	v, err := w.HeldOut.MarshalJSON()
	if err != nil {
		return nil, err
	}
	site, err := json.Marshal(w.Site)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"site":`), site...), append([]byte(","), v[1:]...)...), nil
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Validate cross-fits o.Problem under o.Settings: it splits each site's
// trajectories into K folds ([Folds]), and for each fold learns the
// policy and behaviour cloning on the other folds (the table with the
// fold's rows weighted 0) and evaluates both on the held-out fold (its
// rows alone, as [Data.Evaluate] evaluates data, with bootstrap seed
// [FoldSeed]). A site's held-out value is the mean of its trajectories'
// held-out contributions: the folds' values weighted by the number of
// the site's trajectories each holds out, and replicate b's value is
// the folds' replicates b combined the same way. The policy, cloning and
// the observed care are evaluated on the same replicates, so their
// differences' intervals are paired.
//
// The K policies and K cloning policies are learned in one backward
// sweep ([solve.SolveLockstep]); the K held-out evaluations follow one
// after another.
func (d *Data) Validate(ctx context.Context, o ValidateOptions) (*Validation, error) {
	K, err := d.checkCrossFit(&o)
	if err != nil {
		return nil, err
	}
	fold := Folds(d.table, K, o.Seed)
	v := &Validation{Folds: K, Seed: o.Seed, Bootstrap: o.Bootstrap, Level: o.Level, Method: string(o.Problem.Method), Warnings: []string{}}
	blocks := solve.BlocksFor(d.table, &d.fmap)
	pols, clones, err := d.fitFolds(ctx, o, blocks, fold, K)
	if err != nil {
		return nil, err
	}
	if o.Select != nil {
		if v.Selections, err = d.selectFolds(ctx, o, blocks, fold, K, pols); err != nil {
			return nil, err
		}
	}
	if v.Fits, err = d.evalFolds(ctx, o, blocks, fold, pols, clones); err != nil {
		return nil, err
	}
	v.combineFolds(d.table, fold, o)
	return v, nil
}

// checkCrossFit returns the number of folds of a cross-fit with o, after
// checking that the data allow one, and sets o's default level.
func (d *Data) checkCrossFit(o *ValidateOptions) (int, error) {
	if err := d.Held("a cross-fit"); err != nil {
		return 0, err
	}
	if d.opts.Disclosure.Active() {
		return 0, optionErr("Disclosure", "", "a cross-fit evaluates each held-out fold with a bootstrap, which needs statistics without disclosure control")
	}
	K := cmp.Or(o.Folds, DefaultFolds)
	if K < 2 {
		return 0, optionErr("Folds", fmt.Sprint(o.Folds), "a cross-fit needs at least 2 folds")
	}
	if o.Level == 0 {
		o.Level = 0.95
	}
	return K, nil
}

// evalFolds evaluates each fold's policy and cloning policy on the fold
// (evalFold), in fold order, telling o.OnFold as each fold is done.
func (d *Data) evalFolds(ctx context.Context, o ValidateOptions, blocks features.Blocks, fold []int32, pols, clones []*solve.Policy) ([]FoldFit, error) {
	K := len(pols)
	var fits []FoldFit
	for f := 0; f < K; f++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, c := pols[f], clones[f]
		rp, rc, err := d.evalFold(ctx, o, blocks, fold, int32(f), p, c)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		fits = append(fits, FoldFit{Policy: p, Cloning: c, PolicyReport: rp, CloningReport: rc})
		if o.OnFold != nil {
			o.OnFold(f+1, K)
		}
	}
	return fits, nil
}

// heldOutCounts returns, at n[f*sites+k], the weight of site k's
// trajectories that fold f holds out, and at sizes[f*sites+k] their
// number.
func heldOutCounts(t *traj.Table, fold []int32, K int) (n []float64, sizes []int) {
	nS := len(t.Sites)
	n, sizes = make([]float64, K*nS), make([]int, K*nS)
	s1 := &t.Steps[0]
	for k := 0; k < nS; k++ {
		for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
			f := int(fold[s1.Traj[j]])
			n[f*nS+k] += rowWeight(s1, j)
			sizes[f*nS+k]++
		}
	}
	return n, sizes
}

// combineFolds sets v's estimator, sites, worst sites and warnings from
// the folds' held-out reports (v.Fits), combined per site (combiner).
func (v *Validation) combineFolds(t *traj.Table, fold []int32, o ValidateOptions) {
	K := v.Folds
	n, sizes := heldOutCounts(t, fold, K)
	var pol, clo []*eval.Report
	for _, fit := range v.Fits {
		pol, clo = append(pol, fit.PolicyReport), append(clo, fit.CloningReport)
	}
	v.Estimator = pol[0].Estimator
	comb := combiner{n: n, K: K, sites: len(t.Sites), B: o.Bootstrap, level: o.Level}
	polV, polR := comb.estimate(pol, v.Estimator)
	cloV, cloR := comb.estimate(clo, v.Estimator)
	obsV, obsR := comb.observed(pol)
	polE, cloE := comb.siteEstimates(pol), comb.siteEstimates(clo)
	fqeV, fqeR := comb.estimate(pol, eval.FQE)
	wdrV, wdrR := comb.estimate(pol, eval.WDR)
	for k := range t.Sites {
		site := ValidatedSite{Site: t.Sites[k], Trajectories: t.Trajectories[k], FoldSizes: make([]int, K)}
		for f := 0; f < K; f++ {
			site.FoldSizes[f] = sizes[f*comb.sites+k]
		}
		site.Policy = comb.heldOut(v.Estimator, polV, polR, k, nil)
		site.Policy.Estimates = polE[k]
		site.Cloning = comb.heldOut(v.Estimator, cloV, cloR, k, nil)
		site.Cloning.Estimates = cloE[k]
		site.Observed = comb.heldOut("observed", obsV, obsR, k, nil)
		site.DiffObserved = comb.heldOut(v.Estimator, polV, polR, k, &diffOf{obsV, obsR})
		site.DiffCloning = comb.heldOut(v.Estimator, polV, polR, k, &diffOf{cloV, cloR})
		site.ESS = comb.ess(pol, k)
		v.Sites = append(v.Sites, site)
		disagree := eval.Disagree(fqeV[k], wdrV[k], fqeR, wdrR, k, o.Level)
		v.Warnings = append(v.Warnings, site.warnings(K, o.Bootstrap, disagree)...)
	}
	v.WorstSite = comb.worst(t.Sites, v.Estimator, polV, polR)
	v.WorstCloning = comb.worst(t.Sites, v.Estimator, cloV, cloR)
	v.WorstObserved = comb.worst(t.Sites, "observed", obsV, obsR)
	for _, x := range []struct {
		what string
		w    WorstHeldOut
	}{{"the policy's held-out values", v.WorstSite}, {"cloning's held-out values", v.WorstCloning}, {"the held-out observed care", v.WorstObserved}} {
		v.Warnings = append(v.Warnings, x.w.intervalWarnings(fmt.Sprintf("the minimum over sites of %s (worst site %s)", x.what, x.w.Site))...)
	}
}

// intervalWarnings returns eval's warnings about the held-out value's
// interval ([eval.IntervalWarnings]), naming it what.
func (v HeldOut) intervalWarnings(what string) []string {
	return eval.IntervalWarnings(what, v.Value, v.CILow, v.CIHigh, v.bias)
}

// warnings returns the site's warnings in a cross-fit with K folds and B
// bootstrap replicates: fewer trajectories than folds, and those eval
// gives at a site, held out: the interval of the policy's, cloning's or
// the observed care's value misses its estimate or its bootstrap bias is
// large ([eval.IntervalWarnings]), FQE and WDR disagree (disagree, from
// their paired combined replicates), and the importance weights'
// effective sample size is too low for PDWIS's and WDR's intervals.
func (site *ValidatedSite) warnings(K, B int, disagree bool) []string {
	var out []string
	if site.Trajectories < K {
		out = append(out, fmt.Sprintf("site %s has %d trajectories, fewer than the %d folds: some folds hold none of its trajectories out", site.Site, site.Trajectories, K))
	}
	out = append(out, site.Policy.intervalWarnings("site "+site.Site+"'s held-out value of the policy")...)
	out = append(out, site.Cloning.intervalWarnings("site "+site.Site+"'s held-out value of cloning")...)
	out = append(out, site.Observed.intervalWarnings("site "+site.Site+"'s held-out observed care")...)
	if disagree {
		out = append(out, eval.DisagreementWarning(site.Site, site.Policy.Estimates[eval.FQE], site.Policy.Estimates[eval.WDR], site.ESS))
	}
	if B > 0 && site.ESS < eval.LowESS {
		out = append(out, eval.LowESSWarning(site.Site, site.ESS))
	}
	return out
}

// Folds returns each trajectory's fold (0..k-1), indexed by the
// trajectory's ordinal in t ([traj.Step].Traj). Within each site the
// trajectories are ordered by a hash of (seed, the site's label, the
// trajectory's rank among the site's trajectories in key order) and dealt
// to the folds in turn, starting at a fold the seed and the site's label
// pick (so that the folds with one trajectory more vary by site): the
// folds split every site's trajectories into parts whose sizes differ by
// at most one, and depend on the data's trajectories alone, not on the
// order of the rows or the number of workers.
func Folds(t *traj.Table, k int, seed uint64) []int32 {
	out := make([]int32, 0, t.Rows)
	type ranked struct {
		key  uint64
		rank int
	}
	for s, label := range t.Sites {
		h := fnv.New64a()
		h.Write([]byte(label))
		sk := mix64(mix64(seed+golden) ^ h.Sum64())
		n := t.Trajectories[s]
		order := make([]ranked, n)
		for i := range order {
			order[i] = ranked{mix64(sk + uint64(i+1)*golden), i}
		}
		slices.SortFunc(order, func(a, b ranked) int {
			return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.rank, b.rank))
		})
		folds := make([]int32, n)
		start := int(sk % uint64(k))
		for p, r := range order {
			folds[r.rank] = int32((start + p) % k)
		}
		out = append(out, folds...)
	}
	return out
}

// FoldSeed is the bootstrap seed of fold f's held-out evaluation in a
// cross-fit seeded with seed: the folds' replicates are independent.
func FoldSeed(seed uint64, f int) uint64 {
	return mix64(mix64(seed+golden) + uint64(f+1)*golden)
}

// golden is 2^64 / phi, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// mix64 is splitmix64's finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func rowWeight(s *traj.Step, j int) float64 {
	if s.Weight == nil {
		return 1
	}
	return s.Weight[j]
}

// TrainingTable returns t with the rows of fold f's trajectories weighted
// 0 (fold[i] is trajectory i's fold): the table a fold's policy is
// learned from. Its Trajectories and Rows count the other folds' (the
// penalty's N_max is the training trajectories'); its trajectory
// ordinals stay t's. Its slices are t's, except the weights.
func TrainingTable(t *traj.Table, fold []int32, f int32) *traj.Table {
	w := *t
	w.Steps = make([]traj.Step, len(t.Steps))
	w.Trajectories = make([]int, len(t.Sites))
	w.Rows = 0
	for h := range t.Steps {
		s := t.Steps[h]
		wt := make([]float64, s.Len())
		for k := range t.Sites {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				if fold[s.Traj[j]] == f {
					continue
				}
				wt[j] = rowWeight(&s, j)
				w.Rows++
				if h == 0 {
					w.Trajectories[k]++
				}
			}
		}
		s.Weight = wt
		w.Steps[h] = s
	}
	return &w
}

// HeldOutTable returns a table of fold f's trajectories alone (fold[i]
// is trajectory i's fold), numbered and ordered as a table read from
// those trajectories' rows would be: every site stays, with the
// trajectories it holds out.
func HeldOutTable(t *traj.Table, fold []int32, f int32) *traj.Table {
	out := *t
	out.Steps = make([]traj.Step, len(t.Steps))
	out.Trajectories = make([]int, len(t.Sites))
	out.Nulls = nil
	out.Rows = 0
	// The new ordinal of every kept trajectory, in (site, key) order.
	ord := make([]int32, len(fold))
	next := int32(0)
	for i, g := range fold {
		ord[i] = -1
		if g == f {
			ord[i] = next
			next++
		}
	}
	// Censored is by ordinal: the kept trajectories' flags, renumbered.
	out.Censored = nil
	if t.Censored != nil {
		out.Censored = make([]bool, next)
		for i, o := range ord {
			if o >= 0 && t.IsCensored(int32(i)) {
				out.Censored[o] = true
			}
		}
	}
	// index[j] is row j's index among step h's kept rows, -1 if dropped;
	// built from the last step back so that Next can be remapped.
	var later []int32
	W := t.W
	for h := len(t.Steps) - 1; h >= 0; h-- {
		s := &t.Steps[h]
		index := make([]int32, s.Len())
		ns := traj.Step{SiteStart: make([]int32, len(t.Sites)+1)}
		for k := range t.Sites {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				i := s.Traj[j]
				if i < 0 || ord[i] < 0 {
					index[j] = -1
					continue
				}
				index[j] = int32(len(ns.Traj))
				ns.Traj = append(ns.Traj, ord[i])
				ns.Action = append(ns.Action, s.Action[j])
				ns.Reward = append(ns.Reward, s.Reward[j])
				ns.State = append(ns.State, s.State[j*W:(j+1)*W]...)
				nx := s.Next[j]
				if nx >= 0 {
					nx = later[nx]
				}
				ns.Next = append(ns.Next, nx)
				if s.Weight != nil {
					ns.Weight = append(ns.Weight, s.Weight[j])
				}
				if h == 0 {
					out.Trajectories[k]++
				}
			}
			ns.SiteStart[k+1] = int32(len(ns.Traj))
		}
		out.Steps[h] = ns
		out.Rows += ns.Len()
		later = index
	}
	return &out
}

// fitFolds learns o.Problem and behaviour cloning on every fold but f,
// for each fold f, all in one backward sweep ([solve.SolveLockstep]):
// each policy is the one a solve learns from [TrainingTable] (t, fold,
// f), bit for bit.
func (d *Data) fitFolds(ctx context.Context, o ValidateOptions, blocks features.Blocks, fold []int32, K int) (pols, clones []*solve.Policy, err error) {
	if o.Settings.Stationary {
		// Lockstep runs pool no steps: one solve per fold.
		for f := 0; f < K; f++ {
			p, c, err := d.fitFold(ctx, o, blocks, fold, int32(f))
			if err != nil {
				return nil, nil, fmt.Errorf("fold %d: %w", f+1, err)
			}
			pols, clones = append(pols, p), append(clones, c)
		}
		return pols, clones, nil
	}
	defer timing.Start(ctx, "cross-fit: learning")()
	st, err := solve.NewStats(ctx, d.table, d.fmap, blocks, o.Settings.Workers)
	if err != nil {
		return nil, nil, err
	}
	clone := solve.Problem{Method: solve.Behaviour}
	runs := make([]solve.RunSpec, 0, 2*K)
	for f := 0; f < K; f++ {
		runs = append(runs, solve.RunSpec{Holdout: f, Problem: o.Problem, Settings: o.Settings},
			solve.RunSpec{Holdout: f, Problem: clone, Settings: o.Settings})
	}
	out, err := solve.SolveLockstep(ctx, st, solve.Folds{Of: fold, K: K}, runs, o.Settings.Workers)
	if err != nil {
		return nil, nil, err
	}
	for f := 0; f < K; f++ {
		pols, clones = append(pols, out[2*f]), append(clones, out[2*f+1])
	}
	return pols, clones, nil
}

// selectFolds replaces each fold's policy in pols by the candidate that
// a choice on the fold's training trajectories alone picks, learned on
// them ([ValidateOptions].Select), and returns the folds' choices.
func (d *Data) selectFolds(ctx context.Context, o ValidateOptions, blocks features.Blocks, fold []int32, K int, pols []*solve.Policy) ([]*Selection, error) {
	defer timing.Start(ctx, "cross-fit: nested choice")()
	sels := make([]*Selection, K)
	in := make([]int32, len(fold))
	for f := 0; f < K; f++ {
		// in[i] is 0 for the trajectories fold f learns from.
		for i, g := range fold {
			in[i] = 0
			if g == int32(f) {
				in[i] = 1
			}
		}
		t := HeldOutTable(d.table, in, 0)
		st, err := solve.NewStats(ctx, t, d.fmap, blocks, o.Settings.Workers)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		train := &Data{opts: d.opts, table: t, fmap: d.fmap, stats: st}
		so := *o.Select
		so.Settings, so.Problem, so.OnFold = o.Settings, o.Problem, nil
		res, sel, err := train.SolveSelected(ctx, so)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		pols[f], sels[f] = res.Policy, sel
	}
	return sels, nil
}

// fitFold learns o.Problem and behaviour cloning on every fold but f.
func (d *Data) fitFold(ctx context.Context, o ValidateOptions, blocks features.Blocks, fold []int32, f int32) (p, c *solve.Policy, err error) {
	defer timing.Start(ctx, "cross-fit: learning")()
	st, err := solve.NewStats(ctx, TrainingTable(d.table, fold, f), d.fmap, blocks, o.Settings.Workers)
	if err != nil {
		return nil, nil, err
	}
	sv := solve.NewSolver(st, o.Settings)
	clone := solve.Problem{Method: solve.Behaviour}
	if err := sv.Prepare(ctx, []solve.Problem{o.Problem, clone}); err != nil {
		return nil, nil, err
	}
	if p, err = sv.Solve(ctx, o.Problem); err != nil {
		return nil, nil, err
	}
	if c, err = sv.Solve(ctx, clone); err != nil {
		return nil, nil, err
	}
	return p, c, nil
}

// evalFold evaluates p and c on fold f's trajectories, as Data.Evaluate
// does on data of those rows alone.
func (d *Data) evalFold(ctx context.Context, o ValidateOptions, blocks features.Blocks, fold []int32, f int32, p, c *solve.Policy) (rp, rc *eval.Report, err error) {
	defer timing.Start(ctx, "cross-fit: held-out evaluation")()
	ht := HeldOutTable(d.table, fold, f)
	st, err := solve.NewStats(ctx, ht, d.fmap, blocks, o.Settings.Workers)
	if err != nil {
		return nil, nil, err
	}
	// The two evaluations share the behaviour models fitted to the fold,
	// the bootstrap's Poisson counts and observed replicates, and the
	// factors of the replicates' Grams (the same replicates of the same
	// rows). They compute only the estimates validation reads.
	st.ShareReplicateFactors()
	opts := eval.Options{Bootstrap: o.Bootstrap, Seed: FoldSeed(o.Seed, int(f)), Level: o.Level, Workers: o.Settings.Workers, Behaviour: &eval.BehaviourModels{}, EstimatesOnly: true}
	es := EvalSettings(p, o.Settings.Workers)
	if rp, err = eval.FromData(ctx, solve.NewSolver(st, es), p, es, opts); err != nil {
		return nil, nil, err
	}
	es = EvalSettings(c, o.Settings.Workers)
	if rc, err = eval.FromData(ctx, solve.NewSolver(st, es), c, es, opts); err != nil {
		return nil, nil, err
	}
	return rp, rc, nil
}

// EvalSettings are the settings a policy is evaluated under: those it was
// learned with (lambda, c, xi, beta), each step on its own.
func EvalSettings(p *solve.Policy, workers int) solve.Settings {
	s := solve.DefaultSettings
	s.Lambda, s.C, s.Xi, s.Workers = p.Lambda, p.C, p.Xi, workers
	if p.BetaGiven {
		s.Beta, s.BetaSet = p.Beta, true
	}
	return s
}

// combiner combines the folds' held-out values per site: n[f*sites+k] is
// the weight of site k's trajectories that fold f holds out.
type combiner struct {
	n           []float64
	K, sites, B int
	level       float64
}

// combine returns the folds' values of one site, weighted by n, skipping
// folds that hold none of its trajectories out (NaN when one of the
// others is NaN, or none holds any).
func (c *combiner) combine(k int, val func(f int) float64) float64 {
	sum, n := 0.0, 0.0
	for f := 0; f < c.K; f++ {
		w := c.n[f*c.sites+k]
		if w == 0 {
			continue
		}
		sum += w * val(f)
		n += w
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / n
}

// estimate returns estimator e's combined values per site and its
// combined replicates, reps[b][k] (nil without a bootstrap).
func (c *combiner) estimate(reports []*eval.Report, e string) (vals []float64, reps [][]float64) {
	fold := make([][][]float64, c.K)
	for f, r := range reports {
		fold[f] = r.Replicates(e)
	}
	vals = make([]float64, c.sites)
	for k := range vals {
		vals[k] = c.combine(k, func(f int) float64 { return reports[f].Sites[k].Estimates[e].Value })
	}
	return vals, c.replicates(fold)
}

// siteEstimates returns each site's held-out value of every estimator
// with its interval.
func (c *combiner) siteEstimates(reports []*eval.Report) []map[string]eval.Estimate {
	out := make([]map[string]eval.Estimate, c.sites)
	for k := range out {
		out[k] = map[string]eval.Estimate{}
	}
	for _, e := range eval.Estimators {
		val, r := c.estimate(reports, e)
		for k := range out {
			h := c.heldOut(e, val, r, k, nil)
			out[k][e] = eval.Estimate{Value: h.Value, CILow: h.CILow, CIHigh: h.CIHigh}
		}
	}
	return out
}

// ess returns site k's combined effective sample size of the reports'
// importance weights (see [ValidatedSite].ESS).
func (c *combiner) ess(reports []*eval.Report, k int) float64 {
	sum, inv := 0.0, 0.0
	for f, r := range reports {
		n := c.n[f*c.sites+k]
		if n == 0 {
			continue
		}
		e := r.Sites[k].ESS
		if e == 0 {
			return 0
		}
		sum += n
		inv += n * n / e
	}
	if inv == 0 {
		return 0
	}
	return sum * sum / inv
}

// observed returns the observed care's combined values and replicates.
func (c *combiner) observed(reports []*eval.Report) (vals []float64, reps [][]float64) {
	fold := make([][][]float64, c.K)
	for f, r := range reports {
		fold[f] = r.ObservedReplicates()
	}
	vals = make([]float64, c.sites)
	for k := range vals {
		vals[k] = c.combine(k, func(f int) float64 { return reports[f].Observed[k].Value })
	}
	return vals, c.replicates(fold)
}

func (c *combiner) replicates(fold [][][]float64) [][]float64 {
	if c.B == 0 {
		return nil
	}
	reps := make([][]float64, c.B)
	for b := range reps {
		reps[b] = make([]float64, c.sites)
		for k := range reps[b] {
			reps[b][k] = c.combine(k, func(f int) float64 {
				if len(fold[f]) <= b {
					return math.NaN()
				}
				return fold[f][b][k]
			})
		}
	}
	return reps
}

// diffOf is the value a difference subtracts, with its replicates.
type diffOf struct {
	vals []float64
	reps [][]float64
}

// heldOut returns site k's value with its interval, or with minus its
// difference from minus.
func (c *combiner) heldOut(estimator string, vals []float64, reps [][]float64, k int, minus *diffOf) HeldOut {
	theta := vals[k]
	x := make([]float64, len(reps))
	for b := range reps {
		x[b] = reps[b][k]
		if minus != nil {
			x[b] -= minus.reps[b][k]
		}
	}
	if minus != nil {
		theta -= minus.vals[k]
	}
	lo, hi, bias := math.NaN(), math.NaN(), math.NaN()
	if len(reps) > 0 && !math.IsNaN(theta) {
		lo, hi, bias = eval.BasicCIBias(theta, x, c.level)
	}
	return HeldOut{Estimator: estimator, Value: theta, CILow: lo, CIHigh: hi, bias: bias}
}

// worst returns the site of the lowest value, the value and the interval
// of the minimum over sites, formed by [eval.WorstOf] from every site's
// interval (heldOut).
func (c *combiner) worst(sites []string, estimator string, vals []float64, reps [][]float64) WorstHeldOut {
	ests := make([]eval.Estimate, len(sites))
	for k := range sites {
		h := c.heldOut(estimator, vals, reps, k, nil)
		ests[k] = eval.Estimate{Value: h.Value, CILow: h.CILow, CIHigh: h.CIHigh}
	}
	e, at := eval.WorstOf(ests)
	w := WorstHeldOut{HeldOut: HeldOut{Estimator: estimator, Value: e.Value, CILow: e.CILow, CIHigh: e.CIHigh, bias: math.NaN()}}
	if at >= 0 {
		w.Site = sites[at]
	}
	return w
}

// scoreWorst returns the site of the lowest value, the value and the basic
// bootstrap interval of the minimum over sites (each replicate's minimum),
// whose low end is a candidate's score in a cross-fitted choice (solve --c
// auto, compare --heldout). The choice uses it deliberately, not worst's
// interval: its replicates are paired across candidates (the same
// held-out rows and bootstrap draws), so the gain over the fallback and
// the ties are paired differences of minima, which worst's interval,
// formed from each site's interval ([eval.WorstOf]), cannot give. It is a
// ranking score, not the reported worst-site interval, and is known to be
// optimistic for the minimum: the replicates' minima sit below the
// estimate and the reflection moves the interval up (eval's package
// documentation, "Intervals").
func (c *combiner) scoreWorst(sites []string, estimator string, vals []float64, reps [][]float64) WorstHeldOut {
	m, at := minOf(vals)
	w := WorstHeldOut{HeldOut: HeldOut{Estimator: estimator, Value: m, CILow: math.NaN(), CIHigh: math.NaN(), bias: math.NaN()}}
	if at >= 0 {
		w.Site = sites[at]
	}
	if len(reps) > 0 && at >= 0 {
		x := make([]float64, len(reps))
		for b := range reps {
			x[b], _ = minOf(reps[b])
		}
		w.CILow, w.CIHigh = eval.BasicCI(m, x, c.level)
	}
	return w
}

// minOf returns the minimum of x ignoring NaN, and its index (NaN and -1
// when every value is NaN).
func minOf(x []float64) (float64, int) {
	m, at := math.NaN(), -1
	for i, v := range x {
		if !math.IsNaN(v) && (at < 0 || v < m) {
			m, at = v, i
		}
	}
	return m, at
}
