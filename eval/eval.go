package eval

import (
	"context"
	"fmt"
	"math"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/quantile"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Options configures evaluation from data.
type Options struct {
	// Bootstrap is the number of bootstrap replicates for the confidence
	// intervals (0: no intervals).
	Bootstrap int
	// Permutations is the number of permutations per cluster for the
	// Delta_h p-values (0: no p-values).
	Permutations int
	// Seed seeds the bootstrap and the permutations: replicate b's count
	// of trajectory i is a function of (Seed, b, i) alone, permutation i
	// uses a stream derived from (Seed, i) alone.
	Seed uint64
	// Level is the confidence level of the intervals (default 0.95).
	Level float64
	// Workers bounds parallelism; results do not depend on it.
	Workers int
	// ReturnRange is the range of an episode's total reward (the zero
	// Range: [0, H RewardMax]). The identification bounds count a cell
	// without data as worth at most min((H-h+1) RewardMax, Hi) from step h
	// on; every interval and bound is clipped into it; a value is
	// identified when its bounds are narrower than IdentifiedShare of it.
	ReturnRange Range
	// DecideOn, when set, evaluates the policy through another feature
	// map than its own: it holds the states the policy decides on, the
	// rows of the solver's table in the same order with the state columns
	// of the policy's map ([solve.EvaluateOptions].DecideOn). The
	// solver's map (the evaluation's) then fits fitted-Q, the behaviour
	// propensities of PDWIS and WDR, and the identification bounds; the
	// policy's own map makes its decisions at every row and successor
	// state. nil: the policy decides on the solver's rows through the
	// solver's map, which must be its own.
	DecideOn *traj.Table
	// Behaviour, when set, keeps the behaviour models FromData fits to
	// the data's rows, so that the evaluations of several policies on the
	// same table fit them once (nil: fitted for each evaluation).
	Behaviour *BehaviourModels
	// EstimatesOnly computes only the per-site value estimates (fitted-Q,
	// PDWIS and WDR, with their bootstrap intervals and replicates), the
	// observed returns with theirs, and the worst site: the robust
	// value's interval and bias, the pessimistic value, the support and
	// the identification bounds (with their intervals) are left NaN and
	// HasBounds false, so that no value is flagged as not identified. For
	// cross-fitting, which reads the held-out estimates alone.
	EstimatesOnly bool
	// Decisions, when set, are the policy's actions at every row of the
	// solver's table and Evidence whether each has evidence, the rows in
	// step order, as [solve.ActAllMany] returns them: the evaluation's
	// sweep reads them instead of asking the policy at every row
	// ([solve.EvaluateOptions].Decisions). They must be the policy's own
	// decisions; the report is then the same bits. For several
	// evaluations whose decisions are made together.
	Decisions []int32
	Evidence  []bool
	// Progress, when not nil, is told the number of replicate-steps of the
	// bootstrap (replicates times the horizon: [FromData] advances every
	// replicate one step per round of its backward sweep) or of
	// permutation-steps ([Delta]), and then of each one finished.
	// eval prints nothing; the command line draws a bar from it.
	Progress Progress
}

// Progress receives progress counts: SetTotal once, then Add as work
// finishes. Implementations must be safe for concurrent use.
type Progress interface {
	SetTotal(n int64)
	Add(n int64)
}

// progressOf returns p, or a Progress that discards its counts.
func progressOf(p Progress) Progress {
	if p == nil {
		return silent{}
	}
	return p
}

type silent struct{}

func (silent) SetTotal(int64) {}
func (silent) Add(int64)      {}

// SiteValue is one site's own value of the policy with its interval.
type SiteValue struct {
	Site   string  `json:"site"`
	Value  float64 `json:"value"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Bias is the bootstrap's estimate of the value's bias: the mean of the
	// replicates minus Value (NaN without a bootstrap).
	Bias float64 `json:"bias"`
	// Exact is the site's own exact value under a known model (see
	// [Model.ExactSites]); NaN without one.
	Exact float64 `json:"exact_value"`
	// Lower and Upper are the identification bounds (indicator maps; NaN
	// for other maps), BoundsCILow and BoundsCIHigh the lower end of the
	// lower bound's interval and the upper end of the upper bound's.
	Lower, Upper              float64
	BoundsCILow, BoundsCIHigh float64
	// Support is the share of the site's visits at which the policy's
	// action has evidence at the site (NaN when not computed).
	Support float64
	// Identified is false when Upper - Lower exceeds IdentifiedShare of
	// the return range (Report.ReturnLo, ReturnHi).
	Identified bool
	// Estimator names the estimate of Value, CILow and CIHigh ([FQE]).
	Estimator string `json:"estimator"`
	// Estimates holds every estimator's value of the site ([Estimators]:
	// fitted-Q, per-decision weighted importance sampling, weighted doubly
	// robust) with its interval.
	Estimates map[string]Estimate `json:"estimates"`
	// ESS is the effective sample size of the importance weights, (sum
	// w)^2 / sum w^2 over the site's trajectories' final weights: the
	// number of trajectories PDWIS and WDR effectively rest on.
	ESS float64 `json:"ess"`
	// OffFormulary is the (weighted) number of the site's trajectories
	// whose weight is 0 because the policy chose an action the site never
	// took at that step (propensity 0: off its formulary), while the
	// trajectory had followed the policy until then.
	OffFormulary float64 `json:"off_formulary"`
	// Censored is the number of the site's censored trajectories
	// (traj.Table.Censored), which no estimate of a return counts (see
	// the package documentation).
	Censored int `json:"censored"`
}

// ObservedValue is one site's observed care: the mean realised return of
// its uncensored trajectories (the sum of rewards per trajectory,
// averaged), with a bootstrap interval; Censored trajectories were left
// out.
type ObservedValue struct {
	Site     string  `json:"site"`
	Value    float64 `json:"value"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	Censored int     `json:"censored"`
}

// DeltaValue is Delta_{h,m} with its permutation p-value.
type DeltaValue struct {
	Step    int     `json:"step"`
	Cluster string  `json:"cluster"`
	Delta   float64 `json:"delta"`
	// PValue is adjusted for multiplicity across every (step, cluster)
	// cell by the max-statistic permutation test (see [Delta]).
	PValue float64 `json:"p_value"`
}

// Report is the evidence behind a policy, from data alone.
type Report struct {
	PolicyValue float64 `json:"policy_value"`
	// PessimisticValue is the paper's pessimistic value: the robust value
	// with the policy's own lambda and its penalty beta phi^T m
	// subtracted at every step. It is no bound of the value, and the
	// identification bounds (Lower, Upper) are another thing.
	PessimisticValue float64 `json:"pessimistic_value"`
	// ValueCI is the bootstrap interval of PolicyValue and ValueBias the
	// bootstrap's estimate of its bias.
	ValueCILow  float64      `json:"value_ci_low"`
	ValueCIHigh float64      `json:"value_ci_high"`
	ValueBias   float64      `json:"bias"`
	Beta        float64      `json:"beta"`
	Sites       []SiteValue  `json:"sites"`
	Delta       []DeltaValue `json:"delta"`
	// DeltaSum is sum_h Delta_h with Delta_h = max_m Delta_{h,m}.
	DeltaSum float64 `json:"delta_sum"`
	// Yardstick is 1/sqrt(N_min) - 1/sqrt(N_min^pool), the paper's scale
	// below which pooling pays.
	Yardstick float64 `json:"yardstick"`
	// Permutations is the number of permutations for the Delta p-values
	// (0: none).
	Permutations int     `json:"permutations"`
	Bootstrap    int     `json:"bootstrap"`
	Seed         uint64  `json:"seed"`
	Level        float64 `json:"level"`
	WorstSite    string  `json:"worst_site"`
	Clustering   string  `json:"clustering,omitempty"`
	// Estimator names the estimator of PolicyValue and its interval: the
	// robust value is fitted-Q's row-min recursion ([FQE]); importance
	// weights have no row-min over sites to follow.
	Estimator string `json:"estimator"`
	// Worst is the worst site by each estimator (nil when not computed).
	Worst *WorstSite `json:"worst"`
	// HasBounds says the map's features are indicators, so that the
	// identification bounds below are computed.
	HasBounds bool
	// Lower and Upper bound the robust value (the row-min recursion) with
	// unobserved cells at their extremes; BoundsCILow and BoundsCIHigh
	// widen them by the bootstrap; Identified is false when they are
	// wider than IdentifiedShare of the return range.
	Lower, Upper              float64
	BoundsCILow, BoundsCIHigh float64
	Identified                bool
	// Support is the share of all visits at which the policy's action has
	// evidence at every site (NaN when not computed).
	Support float64
	// EvaluationFeatures describes the evaluation's feature map when it is
	// not the policy's own ([Options].DecideOn; "" otherwise).
	EvaluationFeatures string `json:"evaluation_features,omitempty"`
	// CellsPoolStates says the map's cells pool several states (binned
	// maps): the identification bounds are then bounds on the cells'
	// values, and a warning says that they assume a cell's value does not
	// depend on the mix of states inside it.
	CellsPoolStates bool
	// H is the horizon.
	H int
	// ReturnLo and ReturnHi are the range of an episode's total reward
	// the report uses (Options.ReturnRange, or [0, H RewardMax] when
	// ReturnRangeStated is false): the bounds and intervals lie inside
	// it, and "identified" is judged against its width.
	ReturnLo, ReturnHi float64
	ReturnRangeStated  bool
	// Notes are statements about the evaluation's settings a reader
	// should act on (a return range to state).
	Notes []string
	// Observed is each site's observed care (mean realised return).
	Observed []ObservedValue
	// Warnings are statements about intervals a reader must not miss: an
	// interval that misses its estimate, a bias over half its width, a
	// value that is not identified.
	Warnings []string

	// reps holds the bootstrap's replicates of what the report estimates
	// (see [Report.Replicates]).
	reps replicates
}

// EvalLambda is the ridge parameter of the evaluation's regressions (the
// robust value, each site's value and their bootstrap replicates): the
// policy's lambda if smaller. The policy's lambda (1 by default) is a
// learning device; in evaluation its shrinkage toward 0 is a bias that no
// bootstrap sees (every replicate is shrunk alike), and it compounds over
// the H steps (on the benchmark scenario, 4% low at every site, outside
// every 95% interval). A lambda this small only keeps the regressions
// defined where a site has no data; observed cells and directions get
// their least-squares fit. The pessimistic value keeps the policy's
// lambda and penalty: it is the paper's.
const EvalLambda = 1e-6

// evalSettings returns the settings of the evaluation's regressions.
func evalSettings(s solve.Settings) solve.Settings {
	s.Lambda = min(s.Lambda, EvalLambda)
	return s
}

// FromData evaluates p on the solver's data: robust fitted-Q value (with
// the ridge parameter [EvalLambda]), its pessimistic value (with the
// solver's lambda),
// each site's own value, the observed return per site, and
// for indicator maps identification bounds and support, with bootstrap
// intervals that resample trajectories within each site (see the package
// documentation for the interval method).
func FromData(ctx context.Context, sv *solve.Solver, p *solve.Policy, settings solve.Settings, opts Options) (*Report, error) {
	if opts.Level == 0 {
		opts.Level = 0.95
	}
	if err := opts.ReturnRange.Check(); err != nil {
		return nil, err
	}
	st := sv.Stats()
	t := st.Table
	beta := sv.SitewiseBeta()
	ope := newOPECollector(t, &st.Map, opts.Bootstrap, opts.Workers)
	ope.models = opts.Behaviour.of(t)
	ev, pess, counts, err := values(ctx, sv, p, beta, settings, opts, ope)
	if err != nil {
		return nil, err
	}
	rep := newReport(t, ev, pess, beta, opts)
	rep.setScale(t, opts.ReturnRange)
	rep.CellsPoolStates = PoolsStates(&st.Map)
	if opts.DecideOn != nil {
		rep.EvaluationFeatures = st.Map.Describe()
	}
	var plan *boundsPlan
	if !opts.EstimatesOnly {
		plan = newBoundsPlan(st, p, opts.DecideOn, evalSettings(settings).Lambda, opts.ReturnRange)
		if err := rep.setBoundsOrSupport(ctx, plan, sv, p, opts.DecideOn, opts.Workers); err != nil {
			return nil, err
		}
	}
	if B := opts.Bootstrap; B > 0 {
		repObs := ope.models.observedReplicates(t, counts, B)
		repBounds, err := replicateBounds(ctx, plan, counts, B, opts.Workers)
		if err != nil {
			return nil, err
		}
		rep.setIntervals(ev.Replicates, repObs, repBounds, plan != nil, opts.Level)
		rep.reps.observed = repObs
	}
	if err := rep.setEstimates(ctx, ope, counts, opts.Bootstrap, ev.Replicates, opts.Level); err != nil {
		return nil, err
	}
	rep.clip()
	rep.flag()
	return rep, nil
}

// values evaluates p: the value, each site's and, with a bootstrap, the
// replicates' in one sweep with the ridge parameter [EvalLambda], and the
// pessimistic value (pess) with the solver's own lambda, one pass more when the
// two differ (pess is nil with [Options].EstimatesOnly). counts are the
// bootstrap's Poisson weights (nil without).
// The sweep hands ope each step's decisions and site values as it goes,
// and the replicates' site coefficients with a bootstrap.
func values(ctx context.Context, sv *solve.Solver, p *solve.Policy, beta float64, settings solve.Settings, opts Options, ope *opeCollector) (ev, pess *solve.Evaluation, counts []uint8, err error) {
	st := sv.Stats()
	t := st.Table
	es := evalSettings(settings)
	esv := sv
	if es.Lambda != sv.Settings().Lambda {
		esv = solve.NewSolver(st, es)
	}
	eo := solve.EvaluateOptions{NoLowerBound: esv != sv || opts.EstimatesOnly, DecideOn: opts.DecideOn, Decisions: opts.Decisions, Evidence: opts.Evidence}
	ope.hook(&eo)
	if B := opts.Bootstrap; B > 0 {
		counts = ope.models.poissonCounts(t, opts.Seed, B, opts.Workers)
		eo.Replicates = &solve.Replicates{B: B, Counts: counts, SitesOnly: opts.EstimatesOnly}
		progress := progressOf(opts.Progress)
		progress.SetTotal(int64(B) * int64(t.H))
		eo.OnRound = func(n int) { progress.Add(int64(n)) }
	}
	ev, err = esv.Evaluate(ctx, p, beta, eo)
	if err != nil {
		return nil, nil, nil, err
	}
	if opts.EstimatesOnly {
		return ev, nil, counts, nil
	}
	pess = ev
	if esv != sv {
		if pess, err = sv.Evaluate(ctx, p, beta, solve.EvaluateOptions{LowerBoundOnly: true, DecideOn: opts.DecideOn}); err != nil {
			return nil, nil, nil, err
		}
	}
	return ev, pess, counts, nil
}

// newReport returns the Report of the point estimates (the value and
// pessimistic value, each site's value, the worst site and each site's observed
// return), with every interval, bound and support not yet known NaN (and
// the pessimistic value NaN when pess is nil).
func newReport(t *traj.Table, ev, pess *solve.Evaluation, beta float64, opts Options) *Report {
	nan := math.NaN()
	pv := nan
	if pess != nil {
		pv = pess.LowerBound
	}
	rep := &Report{PolicyValue: ev.Value, PessimisticValue: pv, Beta: beta, Bootstrap: opts.Bootstrap, Permutations: opts.Permutations, Seed: opts.Seed, Level: opts.Level,
		ValueCILow: nan, ValueCIHigh: nan, ValueBias: nan, Lower: nan, Upper: nan, BoundsCILow: nan, BoundsCIHigh: nan, Support: nan, H: t.H}
	K := len(t.Sites)
	for k := 0; k < K; k++ {
		rep.Sites = append(rep.Sites, SiteValue{Site: t.Sites[k], Value: ev.Sites[k], CILow: nan, CIHigh: nan, Bias: nan, Exact: nan,
			Lower: nan, Upper: nan, BoundsCILow: nan, BoundsCIHigh: nan, Support: nan})
	}
	worst := 0
	for k := range rep.Sites {
		if rep.Sites[k].Value < rep.Sites[worst].Value {
			worst = k
		}
	}
	if K > 0 {
		rep.WorstSite = t.Sites[worst]
	}
	obs := observedReturns(t)
	cens := t.CensoredCount()
	for k := 0; k < K; k++ {
		rep.Observed = append(rep.Observed, ObservedValue{Site: t.Sites[k], Value: obs[k], CILow: nan, CIHigh: nan})
		if cens != nil {
			rep.Sites[k].Censored, rep.Observed[k].Censored = cens[k], cens[k]
		}
	}
	return rep
}

// setBoundsOrSupport sets the identification bounds and their support when
// the map is an indicator map (plan not nil), and otherwise the support
// from the leverage of the policy's actions.
func (rep *Report) setBoundsOrSupport(ctx context.Context, plan *boundsPlan, sv *solve.Solver, p *solve.Policy, on *traj.Table, nworkers int) error {
	if plan != nil {
		bounds := plan.compute(nil, 0, 0)
		rep.HasBounds = true
		rep.Lower, rep.Upper, rep.Support = bounds.lo, bounds.hi, bounds.support
		for k := range rep.Sites {
			s := &rep.Sites[k]
			s.Lower, s.Upper, s.Support = bounds.siteLo[k], bounds.siteHi[k], bounds.siteSupport[k]
		}
		return nil
	}
	site, all, err := leverageSupport(ctx, sv, p, on, nworkers)
	if err != nil {
		return err
	}
	rep.Support = all
	for k := range site {
		rep.Sites[k].Support = site[k]
	}
	return nil
}

// replicateBounds returns the identification bounds of each of the B
// bootstrap replicates, computed in parallel (zero values when plan is
// nil: there are no bounds).
func replicateBounds(ctx context.Context, plan *boundsPlan, counts []uint8, B, nworkers int) ([]boundsResult, error) {
	repBounds := make([]boundsResult, B)
	if plan == nil {
		return repBounds, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(nworkers))
	for b := range repBounds {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			repBounds[b] = plan.compute(counts, B, b)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return repBounds, nil
}

// setIntervals sets the bootstrap intervals at level from the replicates'
// values (reps), observed returns (repObs) and, with hasBounds, bounds: a
// basic interval for each value, a one-sided one for each bound.
func (rep *Report) setIntervals(reps []solve.ReplicateValue, repObs [][]float64, repBounds []boundsResult, hasBounds bool, level float64) {
	vals := make([]float64, len(reps))
	collect := func(f func(b int) float64) []float64 {
		for b := range vals {
			vals[b] = f(b)
		}
		return vals
	}
	rep.ValueCILow, rep.ValueCIHigh, rep.ValueBias = basicCI(rep.PolicyValue, collect(func(b int) float64 { return reps[b].Value }), level)
	for k := range rep.Sites {
		s := &rep.Sites[k]
		s.CILow, s.CIHigh, s.Bias = basicCI(s.Value, collect(func(b int) float64 { return reps[b].Sites[k] }), level)
		o := &rep.Observed[k]
		o.CILow, o.CIHigh, _ = basicCI(o.Value, collect(func(b int) float64 { return repObs[b][k] }), level)
		if hasBounds {
			s.BoundsCILow = boundsCILow(s.Lower, collect(func(b int) float64 { return repBounds[b].siteLo[k] }), level)
			s.BoundsCIHigh = boundsCIHigh(s.Upper, collect(func(b int) float64 { return repBounds[b].siteHi[k] }), level)
		}
	}
	if hasBounds {
		rep.BoundsCILow = boundsCILow(rep.Lower, collect(func(b int) float64 { return repBounds[b].lo }), level)
		rep.BoundsCIHigh = boundsCIHigh(rep.Upper, collect(func(b int) float64 { return repBounds[b].hi }), level)
	}
}

// decisionState returns the state the policy decides on at row j of step
// h, whose state under the evaluation's map is state: on's when on is not
// nil (see [Options].DecideOn).
func decisionState(on *traj.Table, h, j int, state []float64) []float64 {
	if on == nil {
		return state
	}
	return on.Steps[h-1].State[j*on.W : (j+1)*on.W]
}

// PoolsStates reports whether m's cells pool several states (a binned
// map's cell is a product of bins of continuous columns), so that the
// identification bounds assume a cell's value does not depend on the mix
// of states inside it.
func PoolsStates(m *features.Map) bool { return m.Kind == features.Binned }

// flag sets Identified and collects the warnings.
func (r *Report) flag() {
	width := r.ReturnHi - r.ReturnLo
	if width <= 0 {
		// A Report built by hand, without a range: [0, H].
		width = float64(r.H) * RewardMax
	}
	limit := IdentifiedShare * width
	if r.HasBounds && r.CellsPoolStates {
		r.Warnings = append(r.Warnings, "the identification bounds of a binned map treat each cell (a product of bins, and an action) as one state: "+
			"they assume a cell's value does not depend on the mix of states inside it, which differs between sites and between the data and the policy's visits; "+
			"they are not bounds on the value of states that a cell pools")
	}
	r.Identified = !r.HasBounds || r.Upper-r.Lower <= limit
	if !r.Identified {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the robust value is not identified: its bounds [%.4g, %.4g] are wider than %g%% of the return range (width %g); "+
			"the data never observed the policy's action at some site in cells that matter", r.Lower, r.Upper, 100*IdentifiedShare, width))
	}
	r.Warnings = append(r.Warnings, IntervalWarnings("the robust value", r.PolicyValue, r.ValueCILow, r.ValueCIHigh, r.ValueBias)...)
	if r.Identified {
		r.Warnings = append(r.Warnings, boundsWarnings("the robust value", r.ValueCILow, r.ValueCIHigh, r.Lower, r.Upper, r.BoundsCILow, r.BoundsCIHigh)...)
	}
	for k := range r.Sites {
		s := &r.Sites[k]
		s.Identified = !r.HasBounds || s.Upper-s.Lower <= limit
		if !s.Identified {
			r.Warnings = append(r.Warnings, fmt.Sprintf("site %s's value is not identified: its bounds [%.4g, %.4g] are wider than %g%% of the return range (width %g)",
				s.Site, s.Lower, s.Upper, 100*IdentifiedShare, width))
		}
		r.Warnings = append(r.Warnings, IntervalWarnings("site "+s.Site+"'s value", s.Value, s.CILow, s.CIHigh, s.Bias)...)
		if s.Identified {
			r.Warnings = append(r.Warnings, boundsWarnings("site "+s.Site+"'s value", s.CILow, s.CIHigh, s.Lower, s.Upper, s.BoundsCILow, s.BoundsCIHigh)...)
		}
	}
	r.Warnings = append(r.Warnings, r.estimateWarnings()...)
}

// IntervalWarned reports whether eval warns about an estimate's interval:
// the interval [lo, hi] does not contain the estimate, or the bootstrap's
// bias is more than half the interval's width, or (for a value with
// identification bounds, NaN otherwise) the bounds [lower, upper] are
// wider than the interval (false without an interval).
func IntervalWarned(est, lo, hi, bias, lower, upper float64) bool {
	return len(IntervalWarnings("", est, lo, hi, bias)) > 0 || len(boundsWarnings("", lo, hi, lower, upper, math.NaN(), math.NaN())) > 0
}

// boundsWarnings says when a value's identification bounds are wider than
// its bootstrap interval. The estimate counts cells without data as 0, as
// the identification bounds' lower end does, and the bootstrap resamples only the data's
// cells, so the interval says nothing about what those cells are worth:
// when the bounds are wider than the interval, the cells without data
// can move the value by more than its sampling error, and even an
// identified value (bounds within IdentifiedShare of the range) can lie
// outside its interval. The bounds' interval is then the honest range.
func boundsWarnings(what string, lo, hi, lower, upper, blo, bhi float64) []string {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsNaN(lower) || math.IsNaN(upper) || upper-lower <= hi-lo {
		return nil
	}
	return []string{fmt.Sprintf("the bounds [%.4g, %.4g] of %s are wider than its interval [%.4g, %.4g]: cells without data could move it by more than its sampling error; "+
		"read the bounds' interval [%.4g, %.4g]", lower, upper, what, lo, hi, blo, bhi)}
}

// IntervalWarnings returns the warnings eval gives about the interval
// [lo, hi] of what, an estimate est whose bootstrap bias is bias: when
// the interval misses its estimate, and when the bias is more than half
// the interval's width (none without an interval; a NaN bias is not
// judged). validate warns by the same rule about its held-out values.
func IntervalWarnings(what string, est, lo, hi, bias float64) []string {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsNaN(est) {
		return nil
	}
	var out []string
	if est < lo || est > hi {
		out = append(out, fmt.Sprintf("the interval [%.4g, %.4g] of %s does not contain its estimate %.4g", lo, hi, what, est))
	}
	if math.Abs(bias) > (hi-lo)/2 {
		out = append(out, fmt.Sprintf("the bootstrap bias of %s (%.4g) is more than half its interval's width (%.4g): the estimate is unstable under resampling", what, bias, hi-lo))
	}
	return out
}

// SetExact records each site's exact value under a model: values[i] is
// the value of the site labelled sites[i]. Sites of the report the model
// does not name keep NaN.
func (r *Report) SetExact(sites []string, values []float64) {
	for i, name := range sites {
		for k := range r.Sites {
			if r.Sites[k].Site == name {
				r.Sites[k].Exact = values[i]
			}
		}
	}
}

// basicCI returns the basic (reflected) bootstrap interval of the
// estimate theta from its replicates x, [2 theta - q_hi, 2 theta - q_lo]
// with q the (1-level)/2 and (1+level)/2 quantiles of x, and the
// bootstrap's bias estimate mean(x) - theta. NaN replicates are ignored.
func basicCI(theta float64, x []float64, level float64) (lo, hi, bias float64) {
	qlo, qhi := percentileCI(x, level)
	if math.IsNaN(qlo) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	mean, n := 0.0, 0
	for _, v := range x {
		if !math.IsNaN(v) {
			mean += v
			n++
		}
	}
	return 2*theta - qhi, 2*theta - qlo, mean/float64(n) - theta
}

// boundsCILow and boundsCIHigh are the outer ends of the bounds' interval:
// the lower bound's (1-level)/2 percentile and the upper bound's
// (1+level)/2 percentile, never inside the bounds themselves. Resampling
// can only leave more cells without data, which moves both bounds outward,
// so the percentile method errs wide here; the basic method would reflect
// that outward move inward and narrow the range below what the data's own
// cells allow.
func boundsCILow(lower float64, x []float64, level float64) float64 {
	lo, _ := percentileCI(x, level)
	return min(lower, lo)
}

func boundsCIHigh(upper float64, x []float64, level float64) float64 {
	_, hi := percentileCI(x, level)
	return max(upper, hi)
}

// percentileCI returns the (1-level)/2 and (1+level)/2 quantiles of x
// (type 7, linear interpolation), ignoring NaN.
func percentileCI(x []float64, level float64) (lo, hi float64) {
	v := make([]float64, 0, len(x))
	for _, e := range x {
		if !math.IsNaN(e) {
			v = append(v, e)
		}
	}
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(v)
	return quantile.Type7(v, (1-level)/2), quantile.Type7(v, (1+level)/2)
}
