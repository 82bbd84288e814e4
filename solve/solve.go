package solve

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/traj"
)

// Method names a way of solving.
type Method string

// The methods. Sitewise, Cluster and Pooled are Algorithm 1 with different
// groupings (one code path); the PEVI methods are the baselines of the
// paper's section 4.1; Behaviour clones the data's most frequent action.
const (
	Sitewise   Method = "sitewise"
	Cluster    Method = "cluster"
	Pooled     Method = "pooled"
	PEVIPooled Method = "pevi-pooled"
	PEVIAvg    Method = "pevi-avg"
	PEVIMin    Method = "pevi-min"
	Behaviour  Method = "behaviour"
)

// Methods lists every method in the order reports show them.
var Methods = []Method{Sitewise, Cluster, Pooled, PEVIPooled, PEVIAvg, PEVIMin, Behaviour}

// ParseMethod returns the method named s.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Methods))
	for i, m := range Methods {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown method %q (want one of %s)", s, strings.Join(names, ", "))
}

// Fallback is the rule for decisions without evidence: every action's Qhat
// is 0.
type Fallback string

const (
	// FallbackBehaviour recommends the action the training data took most
	// often at that (step, state) — at that step for continuous maps — with
	// ties to the lowest action.
	FallbackBehaviour Fallback = "behaviour"
	// FallbackLowest is the paper's rule: the lowest action.
	FallbackLowest Fallback = "lowest"
)

// Settings are the solver's tuning parameters. The zero value is not the
// paper's: start from [DefaultSettings].
type Settings struct {
	// Lambda is the ridge parameter (default 1); it must be positive.
	Lambda float64
	// C scales the penalty: beta = C d H sqrt(zeta) (default 5e-4).
	C float64
	// Xi is the confidence parameter in (0,1) (default 0.05).
	Xi float64
	// Beta, when BetaSet, is used as beta directly, ignoring C and Xi.
	Beta    float64
	BetaSet bool
	// Workers bounds parallelism; 0 means GOMAXPROCS. Results do not depend
	// on it.
	Workers int
	// Stationary asserts that transitions and rewards do not depend on the
	// step: each group's regression then uses the transitions of every step
	// (one Lambda per group), the right-hand side of round h taking
	// Vhat_{h+1} at every transition's next state. Off by default.
	Stationary bool
	// Fallback is the rule for decisions without evidence (default
	// behaviour).
	Fallback Fallback
}

// DefaultSettings are the paper's simulation settings with the behaviour
// fallback.
var DefaultSettings = Settings{Lambda: 1, C: 5e-4, Xi: 0.05, Fallback: FallbackBehaviour}

func workersOr(w int) int {
	if w <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return w
}

// Beta returns c * d * H * sqrt(zeta) with zeta = log(2 d G H Nmax / xi).
func Beta(c float64, d, G, H int, nmax float64, xi float64) float64 {
	zeta := math.Log(2 * float64(d) * float64(G) * float64(H) * nmax / xi)
	return c * float64(d) * float64(H) * math.Sqrt(zeta)
}

// Group is a set of sites solved as one (a site, a cluster, or all sites).
type Group struct {
	Name  string   `json:"name"`
	Sites []string `json:"sites"`
	// Trajectories is the number of trajectories in the group.
	Trajectories int `json:"trajectories"`
	idx          []int
}

// Problem says which groups a method uses. Groups (site indices) is needed
// only for the Cluster method; names default to c1..cM.
type Problem struct {
	Method     Method
	Groups     [][]int
	GroupNames []string
}

// Solver holds the statistics of one table and solves any method from them
// without reading the data again. Factorisations are cached per grouping
// and step, so a penalty path or a comparison of methods factorises each
// (group, step) once.
type Solver struct {
	st       *Stats
	settings Settings
	factors  map[string][]*Factor // key: grouping; [h-1*G+g]
	// runs caches backward passes by grouping, penalty and beta: pevi-avg
	// and pevi-min share their per-site runs.
	runs     map[string]*Run
	beh      [][]int32 // behaviour table per step
	behCount [][]int32
	evc      [][]float64 // evidence counts per step (see Policy.EvidenceCounts)
	Warnings []string
}

// NewSolver returns a Solver over st.
func NewSolver(st *Stats, s Settings) *Solver {
	return &Solver{st: st, settings: s, factors: map[string][]*Factor{}}
}

// Stats returns the solver's statistics.
func (sv *Solver) Stats() *Stats { return sv.st }

func groupingKey(groups [][]int, inverse, stationary bool) string {
	var b strings.Builder
	fmt.Fprint(&b, inverse, stationary, groups)
	return b.String()
}

// factorsFor returns the factor of every (group, step), building it once.
func (sv *Solver) factorsFor(ctx context.Context, groups [][]int, inverse bool) ([]*Factor, error) {
	key := groupingKey(groups, inverse, sv.settings.Stationary)
	if f, ok := sv.factors[key]; ok {
		return f, nil
	}
	st := sv.st
	H, G := st.Table.H, len(groups)
	steps := H
	if sv.settings.Stationary {
		steps = 1
	}
	out := make([]*Factor, steps*G)
	// cells[h-1] holds step h's Grams while factors use them: every
	// step's when NewStats kept them or transitions are stationary (each
	// factor sums every step's Gram then), or else one step at a time, so
	// that no more than one step's Grams are held.
	cells := make([][]Gram, H)
	byStep := st.Cells == nil && !sv.settings.Stationary
	if !byStep {
		for h := 1; h <= H; h++ {
			var err error
			if cells[h-1], err = st.StepGrams(ctx, h); err != nil {
				return nil, err
			}
		}
	}
	build := func(g *errgroup.Group, ctx context.Context, h int) {
		for gi, members := range groups {
			g.Go(func() error {
				if err := ctx.Err(); err != nil {
					return err
				}
				var grams []*Gram
				for _, k := range members {
					if sv.settings.Stationary {
						// Every step's Gram, in step order.
						for hh := 1; hh <= H; hh++ {
							grams = append(grams, &cells[hh-1][k])
						}
						continue
					}
					grams = append(grams, &cells[h-1][k])
				}
				f, err := NewFactor(&st.Layout, grams, sv.settings.Lambda, inverse)
				if err != nil {
					return fmt.Errorf("step %d, group %d: %w", h, gi, err)
				}
				out[(h-1)*G+gi] = f
				return nil
			})
		}
	}
	if byStep {
		for h := 1; h <= steps; h++ {
			var err error
			if cells[h-1], err = st.StepGrams(ctx, h); err != nil {
				return nil, err
			}
			g, gctx := errgroup.WithContext(ctx)
			g.SetLimit(workersOr(sv.settings.Workers))
			build(g, gctx, h)
			if err := g.Wait(); err != nil {
				return nil, err
			}
			cells[h-1] = nil
		}
	} else {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(workersOr(sv.settings.Workers))
		for h := 1; h <= steps; h++ {
			build(g, gctx, h)
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	sv.factors[key] = out
	return out, nil
}

// factorCacheBytes bounds the factors a Solver keeps for every (group,
// step): above it, each round builds its own (see Solver.passes).
var factorCacheBytes int64 = 64 << 20

// factorBytes estimates the memory of the factors of every (group, step)
// that specs need.
func (sv *Solver) factorBytes(specs []passSpec) int64 {
	l := &sv.st.Layout
	d, packed := int64(len(l.Blocks.Of)), int64(l.Size())
	H, K := int64(sv.st.Table.H), int64(len(sv.st.Table.Sites))
	var total int64
	// Each grouping's factors once, and none already cached: passes
	// share them (an evaluation's robust value and lower bound, say).
	seen := map[string]bool{}
	add := func(groups [][]int, inverse bool, per int64) {
		key := groupingKey(groups, inverse, sv.settings.Stationary)
		if _, cached := sv.factors[key]; cached || seen[key] {
			return
		}
		seen[key] = true
		total += H * int64(len(groups)) * per
	}
	for _, spec := range specs {
		per := 8 * (2*d + packed) // S, inv1, the blocks' factors
		if spec.kind == pevi {
			per += 8 * packed // Linv
		}
		add(spec.groups, spec.kind == pevi, per)
		if spec.siteNu {
			add(singletons(int(K)), false, 8*(2*d+packed))
		}
	}
	return total
}

// roundFactors builds step h's factors of every pass in ps, each distinct
// (grouping, inverse) once, in parallel, as factorsFor builds them.
func (sv *Solver) roundFactors(ctx context.Context, ps []*passState, h int) error {
	st := sv.st
	K := len(st.Table.Sites)
	type want struct {
		groups  [][]int
		inverse bool
		out     []*Factor // the step's factor per group
	}
	var wants []*want
	byKey := map[string]*want{}
	need := func(groups [][]int, inverse bool) *want {
		key := groupingKey(groups, inverse, false)
		w := byKey[key]
		if w == nil {
			w = &want{groups: groups, inverse: inverse, out: make([]*Factor, len(groups))}
			byKey[key] = w
			wants = append(wants, w)
		}
		return w
	}
	type use struct {
		dst []*Factor
		w   *want
	}
	var uses []use
	for _, p := range ps {
		uses = append(uses, use{p.factors[(h-1)*len(p.groups) : h*len(p.groups)], need(p.groups, p.kind == pevi)})
		if p.siteNu {
			uses = append(uses, use{p.siteFactors[(h-1)*K : h*K], need(singletons(K), false)})
		}
	}
	cells, err := st.StepGrams(ctx, h)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workersOr(sv.settings.Workers))
	for _, w := range wants {
		for gi, members := range w.groups {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				grams := make([]*Gram, len(members))
				for i, k := range members {
					grams[i] = &cells[k]
				}
				f, err := NewFactor(&st.Layout, grams, sv.settings.Lambda, w.inverse)
				if err != nil {
					return fmt.Errorf("step %d, group %d: %w", h, gi, err)
				}
				w.out[gi] = f
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, u := range uses {
		copy(u.dst, u.w.out)
	}
	return nil
}

// penalty kinds
type penalty int

const (
	featurewise penalty = iota // Algorithm 1: beta phi^T m
	pevi                       // PEVI: beta sqrt(phi^T Lambda^-1 phi)
)

// StepCoef holds what one step of a policy needs to evaluate Qhat.
type StepCoef struct {
	// W and M are Algorithm 1's w_h (row-min of nu) and m_h (row-max of
	// sqrt diag Lambda^{-1}); for a PEVI run, W is nu_h and M is empty.
	W, M []float64
	// Linv is Lambda_h^{-1} block by block (packed lower triangles), for PEVI.
	Linv []float64
	// Nu holds each group's nu_h (Algorithm 1 only; not stored in the
	// policy artifact): the Delta_h diagnostics use it.
	Nu [][]float64 `json:"-"`
	// SiteNu holds each site's own nu_h at the same Vhat_{h+1} (Delta_h
	// diagnostics only).
	SiteNu [][]float64 `json:"-"`
	// NoEvidence counts the step's data rows whose decision had no
	// evidence (every Qhat 0), weighted.
	NoEvidence float64 `json:"-"`
	// NoEvidenceBySite is NoEvidence per site; Penalty sums beta phi^T m
	// over the step's rows and actions, PenaltyTerms counts the terms.
	NoEvidenceBySite []float64 `json:"-"`
	Penalty          float64   `json:"-"`
	PenaltyTerms     float64   `json:"-"`
	// Cond holds each group's condition number of Lambda_h^g (see
	// [Factor.Cond]), a diagnostic (condition.go).
	Cond []float64 `json:"-"`

	// comb holds W - beta M for beta = combBeta, set by setPenalized
	// before any concurrent use.
	comb     []float64
	combBeta float64
}

// setPenalized stores W - beta M, the coefficient of Qbar: Qbar_h(s,a) =
// phi(s,a)^T (W - beta M), one dot product per action. A policy read back
// from its artifact computes the same bits.
func (c *StepCoef) setPenalized(beta float64) {
	c.comb = make([]float64, len(c.W))
	for i := range c.W {
		c.comb[i] = c.W[i] - beta*c.M[i]
	}
	c.combBeta = beta
}

// penalized returns W - beta M, from the cache when it holds this beta.
func (c *StepCoef) penalized(beta float64) []float64 {
	if c.comb != nil && c.combBeta == beta {
		return c.comb
	}
	comb := make([]float64, len(c.W))
	for i := range c.W {
		comb[i] = c.W[i] - beta*c.M[i]
	}
	return comb
}

// Run is one backward pass: a grouping, a penalty and its beta.
type Run struct {
	Beta  float64
	Steps []StepCoef
	// V1 holds Vhat_1 at each step-1 row of the run's sites (other rows 0).
	V1 []float64
	// Rows is the number of step-1 rows in the run (weighted).
	Rows float64
	// V[h-1] holds Vhat_h at every row of step h (only when asked for).
	V [][]float64
}

func singletons(K int) [][]int {
	g := make([][]int, K)
	for k := range g {
		g[k] = []int{k}
	}
	return g
}

// backward runs the pessimistic backward recursion for groups with the
// given penalty. It is Algorithm 1 for featurewise penalties and PEVI (one
// group) otherwise.
func (sv *Solver) backward(ctx context.Context, groups [][]int, kind penalty, beta float64) (*Run, error) {
	key := sv.runKey(groups, kind, beta)
	if r, ok := sv.runs[key]; ok {
		return r, nil
	}
	r, err := sv.pass(ctx, passSpec{groups: groups, kind: kind, beta: beta})
	if err != nil {
		return nil, err
	}
	if sv.runs == nil {
		sv.runs = map[string]*Run{}
	}
	sv.runs[key] = r
	return r, nil
}

// runKey is the key of a backward pass in the solver's cache.
func (sv *Solver) runKey(groups [][]int, kind penalty, beta float64) string {
	return fmt.Sprint(groupingKey(groups, kind == pevi, sv.settings.Stationary), beta)
}

// passSpec describes one backward pass.
type passSpec struct {
	groups [][]int
	kind   penalty
	beta   float64
	// follow, when set, evaluates that policy: Vhat_h(s) is this pass's
	// Qhat_h(s, a) at the action follow recommends, instead of the max.
	follow *Policy
	// siteNu also solves each site's own regression at the same V (for
	// Delta_h); keepV keeps Vhat_h at every step's rows.
	siteNu, keepV bool
}

func (sv *Solver) pass(ctx context.Context, ps passSpec) (*Run, error) {
	runs, err := sv.passes(ctx, []passSpec{ps})
	if err != nil {
		return nil, err
	}
	return runs[0], nil
}

// passState is one pass's working state in [Solver.passes].
type passState struct {
	passSpec
	factors, siteFactors []*Factor
	inRun                []bool
	run                  *Run
	// vals[u] holds Vhat_{h+1} at the rows of step u during round h (nil
	// for u = H+1): round h needs step h+1, or every step when stationary.
	vals [][]float64
	// rhs holds the round's right-hand side per site (nil outside the run).
	rhs [][]float64
}

// passes runs several backward passes in lockstep, round h of every pass
// before round h-1 of any: each round reads the step's rows once for all
// of them. Every pass computes exactly what it would alone.
func (sv *Solver) passes(ctx context.Context, specs []passSpec) ([]*Run, error) {
	st := sv.st
	t := st.Table
	H := t.H
	K := len(t.Sites)
	stationary := sv.settings.Stationary
	ps := make([]*passState, len(specs))
	// The factors of every (group, step) are built once and kept for
	// later passes (compare's methods, the penalty path), unless they
	// would take more than factorCacheBytes: then each round builds its
	// step's factors, shared by the round's passes, and drops them after
	// (the statistics of large tabular maps are O(G d) instead of
	// O(G H d)). The factors are the same either way.
	perRound := !stationary && sv.factorBytes(specs) > factorCacheBytes
	// Per round, each round times its own factors.
	stopFactors := func() {}
	if !perRound {
		stopFactors = timing.Start(ctx, "solve: factors")
	}
	for i, spec := range specs {
		if spec.kind == pevi && len(spec.groups) != 1 {
			panic("solve: a PEVI run has one group")
		}
		p := newPassState(spec, K, H)
		switch {
		case perRound:
			p.factors = make([]*Factor, H*len(spec.groups))
			if spec.siteNu {
				p.siteFactors = make([]*Factor, H*K)
			}
		default:
			var err error
			if p.factors, err = sv.factorsFor(ctx, spec.groups, spec.kind == pevi); err != nil {
				stopFactors()
				return nil, err
			}
			if spec.siteNu {
				if p.siteFactors, err = sv.factorsFor(ctx, singletons(K), false); err != nil {
					stopFactors()
					return nil, err
				}
			}
		}
		ps[i] = p
	}
	stopFactors()
	// fi is the index of group gi's factor at step h: one per (step, group),
	// or one per group when transitions are stationary.
	fi := func(h, gi, G int) int {
		if stationary {
			return gi
		}
		return (h-1)*G + gi
	}
	for h := H; h >= 1; h-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if perRound {
			stop := timing.Start(ctx, "solve: factors")
			err := sv.roundFactors(ctx, ps, h)
			stop()
			if err != nil {
				return nil, err
			}
		}
		stop := timing.Start(ctx, "solve: right-hand sides")
		err := sv.rhsRound(ctx, ps, h)
		stop()
		if err != nil {
			return nil, err
		}
		stop = timing.Start(ctx, "solve: coefficients")
		for _, p := range ps {
			sv.coefficients(p, h, fi)
		}
		stop()
		// Vhat_h at every row of step h in each run (at every step's rows
		// when stationary: they are the next states of round h-1).
		next := make([][][]float64, len(ps))
		for i := range ps {
			next[i] = make([][]float64, H+2)
		}
		for tt := 1; tt <= H; tt++ {
			if tt != h && (!stationary || tt == 1 && h != 1) {
				continue
			}
			vs := make([]valSpec, len(ps))
			for i, p := range ps {
				vs[i] = valSpec{inRun: p.inRun, kind: p.kind, coef: &p.run.Steps[h-1], beta: p.beta, follow: p.follow}
			}
			stop := timing.Start(ctx, "solve: values")
			outs, err := sv.values(ctx, &t.Steps[tt-1], h, vs)
			stop()
			if err != nil {
				return nil, err
			}
			for i, p := range ps {
				o := outs[i]
				next[i][tt] = o.v
				if tt == h {
					coef := &p.run.Steps[h-1]
					coef.NoEvidenceBySite, coef.Penalty, coef.PenaltyTerms = o.noev, o.pen, o.npen
					for _, x := range o.noev {
						coef.NoEvidence += x
					}
					if p.keepV {
						p.run.V[h-1] = o.v
					}
				}
			}
		}
		for i, p := range ps {
			if h == 1 {
				p.run.V1 = next[i][1]
			}
			p.vals = next[i]
			if perRound {
				clear(p.factors)
				clear(p.siteFactors)
			}
		}
	}
	s1 := &t.Steps[0]
	runs := make([]*Run, len(ps))
	for i, p := range ps {
		p.run.Rows = runRows(s1, p.inRun)
		runs[i] = p.run
	}
	return runs, nil
}

// runRows returns the weighted number of step's rows whose site is in the
// run: site by site, which adds the rows in their order (unweighted, an
// exact count).
func runRows(step *traj.Step, inRun []bool) float64 {
	rows := 0.0
	for k, in := range inRun {
		if !in {
			continue
		}
		lo, hi := int(step.SiteStart[k]), int(step.SiteStart[k+1])
		if step.Weight == nil {
			rows += float64(hi - lo)
			continue
		}
		for _, w := range step.Weight[lo:hi] {
			rows += w
		}
	}
	return rows
}

// rhsRound sets every pass's right-hand side of round h, one per (pass,
// site), each summed serially (over steps in order when stationary); one
// task per site serves every pass that site is in.
func (sv *Solver) rhsRound(ctx context.Context, ps []*passState, h int) error {
	t := sv.st.Table
	st := sv.st
	H, K := t.H, len(t.Sites)
	d := st.Map.Dim()
	stationary := sv.settings.Stationary
	workers := workersOr(sv.settings.Workers)
	// Right-hand sides, one per (pass, site), each summed serially
	// (over steps in order when stationary); one task per site
	// serves every pass that site is in.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, p := range ps {
		p.rhs = make([][]float64, K)
	}
	for k := range t.Sites {
		var in []*passState
		for _, p := range ps {
			if p.inRun[k] {
				in = append(in, p)
			}
		}
		if len(in) == 0 {
			continue
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			for tt := 1; tt <= H; tt++ {
				if !stationary && tt != h {
					continue
				}
				vnexts := make([][]float64, len(in))
				for i, p := range in {
					vnexts[i] = p.vals[tt+1]
				}
				step := &t.Steps[tt-1]
				outs := st.rhsMulti(tt, int(step.SiteStart[k]), int(step.SiteStart[k+1]), vnexts)
				for i, p := range in {
					if p.rhs[k] == nil {
						if !stationary {
							p.rhs[k] = outs[i]
							continue
						}
						p.rhs[k] = make([]float64, d)
					}
					for x, v := range outs[i] {
						p.rhs[k][x] += v
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// coefficients solves round h's regressions of one pass from its
// right-hand sides and sets the step's coefficients.
func (sv *Solver) coefficients(p *passState, h int, fi func(h, gi, G int) int) {
	d := sv.st.Map.Dim()
	G := len(p.groups)
	// nu per group, then the row-min and row-max.
	nu := make([][]float64, G)
	for gi, members := range p.groups {
		sum := make([]float64, d)
		for _, k := range members {
			for i, v := range p.rhs[k] {
				sum[i] += v
			}
		}
		nu[gi] = make([]float64, d)
		p.factors[fi(h, gi, G)].SolveTo(nu[gi], sum)
	}
	coef := &p.run.Steps[h-1]
	coef.Cond = factorConds(p.factors, h, G, fi)
	if p.siteNu {
		K := len(p.rhs)
		coef.SiteNu = make([][]float64, K)
		for k := 0; k < K; k++ {
			if p.rhs[k] == nil {
				continue
			}
			coef.SiteNu[k] = make([]float64, d)
			p.siteFactors[fi(h, k, K)].SolveTo(coef.SiteNu[k], p.rhs[k])
		}
	}
	if p.kind == featurewise {
		coef.W = slices.Clone(nu[0])
		coef.M = slices.Clone(p.factors[fi(h, 0, G)].S)
		for gi := 1; gi < G; gi++ {
			s := p.factors[fi(h, gi, G)].S
			for i := 0; i < d; i++ {
				coef.W[i] = min(coef.W[i], nu[gi][i])
				coef.M[i] = max(coef.M[i], s[i])
			}
		}
		coef.Nu = nu
		coef.setPenalized(p.beta)
	} else {
		coef.W = nu[0]
		coef.Linv = p.factors[fi(h, 0, G)].Linv
	}
}

// valSpec is one pass's part of a [Solver.values] sweep.
type valSpec struct {
	inRun  []bool
	kind   penalty
	coef   *StepCoef
	beta   float64
	follow *Policy
}

// valOut is one pass's result of a [Solver.values] sweep: Vhat_h at the
// step's rows (0 outside the run), the weighted count per site of rows
// whose decision has no evidence and, for featurewise passes that follow no
// policy, the sum over rows and actions of the penalty beta phi^T m with
// its number of terms.
type valOut struct {
	v, noev   []float64
	pen, npen float64
}

// followOneDot lets a followed policy decide once per row and a
// featurewise pass compute only the followed action's Qhat; tests turn it
// off to compare with the general path (every action's Qhat, a decision
// per pass).
var followOneDot = true

// valueChunks is the number of row ranges a values sweep is split into;
// fixed, so that the diagnostic sums do not depend on the workers.
const valueChunks = 32

// values sweeps the rows of one step once and returns, for each pass,
// Vhat_h at every row and its diagnostics (see [valOut]). With follow,
// Vhat_h is the pass's Qhat_h at the action follow recommends.
func (sv *Solver) values(ctx context.Context, step *traj.Step, h int, specs []valSpec) ([]valOut, error) {
	t := sv.st.Table
	m := &sv.st.Map
	K := len(t.Sites)
	top := float64(t.H - h + 1)
	outs := make([]valOut, len(specs))
	for i := range outs {
		outs[i].v = make([]float64, step.Len())
	}
	// active[k] lists the passes that site k's rows belong to.
	active := make([][]int, K)
	for i := range specs {
		for k := range active {
			if specs[i].inRun[k] {
				active[k] = append(active[k], i)
			}
		}
	}
	chunks := chunkRanges(step.Len(), valueChunks)
	noevChunk := make([][][]float64, len(chunks)) // [chunk][spec][site]
	penChunk := make([][][2]float64, len(chunks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workersOr(sv.settings.Workers))
	for ci, c := range chunks {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			q := make([]float64, t.A)
			scratch := make([]float64, t.A)
			fq := make([]float64, t.A)
			ne := make([][]float64, len(specs))
			for i := range ne {
				ne[i] = make([]float64, K)
			}
			pen := make([][2]float64, len(specs))
			var row blockRow
			var lr lazyRuns // for a followed PEVI policy
			k := step.Site(c[0])
			for j := c[0]; j < c[1]; j++ {
				for int32(j) >= step.SiteStart[k+1] {
					k++
				}
				wt := 1.0
				if step.Weight != nil {
					wt = step.Weight[j]
				}
				state := step.State[j*t.W : (j+1)*t.W]
				prepared, fast := false, false
				// The followed policy's decision at this row (fol's),
				// made once for every pass that follows it.
				var fol *Policy
				var fa int
				var fev bool
				for _, i := range active[k] {
					sp := &specs[i]
					if !prepared {
						fast, prepared = row.init(m, state), true
					}
					var best float64
					noEvidence := false
					switch {
					case sp.kind == pevi && sp.follow == nil && fast:
						best = row.peviBest(&sv.st.Layout, sp.coef.W, sp.coef.Linv, sp.beta, top, q)
						noEvidence = best == 0
					case sp.kind == featurewise && sp.follow == nil && fast:
						// clip is monotone: the max of the clipped values
						// is the clipped max, bit for bit.
						row.dots(sp.coef.penalized(sp.beta), q)
						best = clippedMax(q, top)
						noEvidence = best == 0
					case sp.kind == featurewise && sp.follow != nil && followOneDot:
						// Only the followed action's Qhat is needed: one
						// dot product, the bits of qValues' (DotAll and
						// blockRow.dot sum as Map.Dot does).
						if sp.follow != fol {
							fa, _, fev = sp.follow.actLazy(h, state, fq, &row, &lr)
							fol = sp.follow
							// actLazy may have prepared row for the
							// policy's map: prepare it again.
							prepared = false
						}
						if !prepared {
							fast, prepared = row.init(m, state), true
						}
						w := sp.coef.penalized(sp.beta)
						if fast {
							best = clip(row.dot(w, fa), top)
						} else {
							best = clip(m.Dot(state, fa, w), top)
						}
						noEvidence = !fev
					default:
						sv.qValues(sp.kind, sp.coef, sp.beta, h, state, q)
						for _, x := range q {
							best = max(best, x)
						}
						noEvidence = best == 0
						if sp.follow != nil {
							a, _, ev := sp.follow.actLazy(h, state, fq, &row, &lr)
							best, noEvidence = q[a], !ev
							// follow.act may have prepared row for
							// another state layout: prepare again.
							prepared = false
						}
					}
					// The penalty's scale is a diagnostic of a solved
					// policy: every 8th row estimates it well at an eighth
					// of the cost. A pass that follows a policy (an
					// evaluation) reports only its values.
					if sp.kind == featurewise && sp.follow == nil && j%8 == 0 {
						if fast && prepared {
							row.dots(sp.coef.M, scratch)
							for _, x := range scratch {
								pen[i][0] += wt * sp.beta * x
							}
						} else {
							m.DotAll(scratch, state, sp.coef.M)
							for _, x := range scratch {
								pen[i][0] += wt * sp.beta * x
							}
						}
						pen[i][1] += wt * float64(t.A)
					}
					outs[i].v[j] = best
					if noEvidence {
						ne[i][k] += wt
					}
				}
			}
			noevChunk[ci], penChunk[ci] = ne, pen
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i := range outs {
		outs[i].noev = make([]float64, K)
		for ci := range chunks {
			for k, x := range noevChunk[ci][i] {
				outs[i].noev[k] += x
			}
			outs[i].pen += penChunk[ci][i][0]
			outs[i].npen += penChunk[ci][i][1]
		}
	}
	return outs, nil
}

// chunkRanges splits 0..n into about parts contiguous ranges.
func chunkRanges(n, parts int) [][2]int {
	if n == 0 {
		return nil
	}
	size := max(1, (n+parts-1)/parts)
	var out [][2]int
	for s := 0; s < n; s += size {
		out = append(out, [2]int{s, min(n, s+size)})
	}
	return out
}

// rhs returns sum over site k's rows at step h of w * phi * (r + Vnext(s')).
func (sv *Solver) rhs(h, k int, vnext []float64) []float64 {
	step := &sv.st.Table.Steps[h-1]
	return sv.st.rhsSeq(h, span(int(step.SiteStart[k]), int(step.SiteStart[k+1])), vnext)
}

// qValues fills q[a] = Qhat_h(state, a) for one run's step coefficients.
func (sv *Solver) qValues(kind penalty, coef *StepCoef, beta float64, h int, state []float64, q []float64) {
	m := &sv.st.Map
	top := float64(sv.st.Table.H - h + 1)
	if kind == featurewise {
		m.DotAll(q, state, coef.penalized(beta))
		for a := range q {
			q[a] = clip(q[a], top)
		}
		return
	}
	var r blockRow
	peviQ(m, &sv.st.Layout, state, coef.W, coef.Linv, beta, top, q, &r)
}

// clippedMax returns clip(max(q), top) for nonempty q and top >= 0 (as
// clip requires), with the bits of the comparison scan `if y > x || y !=
// y { x = y }` followed by clip.
//
// The scan's comparisons jump on the data, and the processor mispredicts
// about one in four of them. Without NaN the clipped maximum depends only
// on the largest value if it is positive (clip gives +0 otherwise), and
// nonnegative doubles order as their bits do as integers, while every
// value with the sign bit set is a negative integer: so the largest bits,
// taken with conditional moves, clip to the same result. With a NaN the
// scan runs instead, keeping its NaN.
func clippedMax(q []float64, top float64) float64 {
	xb := int64(math.Float64bits(q[0]))
	nan := 0
	for _, y := range q {
		if b := int64(math.Float64bits(y)); b > xb {
			xb = b
		}
		if y != y {
			nan = 1
		}
	}
	if nan == 0 {
		return clip(math.Float64frombits(uint64(xb)), top)
	}
	x := q[0]
	for _, y := range q[1:] {
		if y > x || y != y {
			x = y
		}
	}
	return clip(x, top)
}

// clip returns min{x, top}^+.
func clip(x, top float64) float64 {
	// Comparisons instead of min and max, whose NaN and signed-zero rules
	// cost branches: the same bits for top >= 1 (NaN stays NaN, -0 and
	// negatives give +0).
	switch {
	case x > top:
		return top
	case x > 0:
		return x
	case x != x:
		return x
	}
	return 0
}

// nonneg returns max(x, 0) with the bits of the built-in max: x when
// positive or NaN, +0 otherwise.
func nonneg(x float64) float64 {
	if x > 0 || x != x {
		return x
	}
	return 0
}

// quadForm returns phi(s,a)^T Lambda^{-1} phi(s,a) from the packed
// block inverse.
func quadForm(m *features.Map, l *Layout, linv []float64, state []float64, a int) float64 {
	var ibuf [16]int32
	var vbuf [16]float64
	idx, val := ibuf[:], vbuf[:]
	if nz := m.MaxNonzeros(); nz > len(ibuf) {
		idx, val = make([]int32, nz), make([]float64, nz)
	}
	n := m.Phi(state, a, idx, val)
	_, quad := sparseTerms(l, idx[:n], val[:n], nil, linv)
	return quad
}

// sparseTerms returns phi^T w (when w is not nil) and phi^T Lambda^{-1} phi
// for the nonzeros (idx, val) of phi; the dot product sums in the order of
// [features.Map.Dot], so the two agree bit for bit.
func sparseTerms(l *Layout, idx []int32, val []float64, w, linv []float64) (dot, quad float64) {
	bl := &l.Blocks
	var pbuf, obuf [16]int
	var bbuf [16]int32
	pos, off, blk := pbuf[:], obuf[:], bbuf[:]
	if len(idx) > len(pbuf) {
		pos, off, blk = make([]int, len(idx)), make([]int, len(idx)), make([]int32, len(idx))
	}
	for x, i := range idx {
		if w != nil {
			dot += val[x] * w[i]
		}
		blk[x] = bl.Of[i]
		pos[x] = int(bl.Pos[i])
		off[x] = l.Off[blk[x]]
	}
	for x := range idx {
		px, bx, base := pos[x], blk[x], off[x]
		for y := range idx {
			if blk[y] != bx {
				continue
			}
			r, c := px, pos[y]
			if c > r {
				r, c = c, r
			}
			quad += val[x] * val[y] * linv[base+r*(r+1)/2+c]
		}
	}
	return dot, max(quad, 0)
}

// peviQ sets q[a] = min{phi^T nu - beta sqrt(phi^T Lambda^{-1} phi), top}^+.
func peviQ(m *features.Map, l *Layout, state []float64, nu, linv []float64, beta, top float64, q []float64, r *blockRow) {
	var dbuf, qbuf [32]float64
	dots, quads := dbuf[:], qbuf[:]
	if len(q) > len(dbuf) {
		dots, quads = make([]float64, len(q)), make([]float64, len(q))
	}
	peviTerms(m, l, state, nu, linv, dots, quads, r)
	for a := range q {
		q[a] = clip(dots[a]-beta*math.Sqrt(quads[a]), top)
	}
}

// peviTerms sets dots[a] = phi(s,a)^T w and quads[a] = phi(s,a)^T
// Lambda^{-1} phi(s,a) for every action a, with the arithmetic of
// [sparseTerms]. For action-block maps phi(s,.) is the normalised state in
// block a: its products and packed positions are computed once per row.
func peviTerms(m *features.Map, l *Layout, state []float64, w, linv []float64, dots, quads []float64, r *blockRow) {
	if !r.init(m, state) {
		var ibuf [16]int32
		var vbuf [16]float64
		idx, val := ibuf[:], vbuf[:]
		if nz := m.MaxNonzeros(); nz > len(ibuf) {
			idx, val = make([]int32, nz), make([]float64, nz)
		}
		for a := 0; a < m.A; a++ {
			n := m.Phi(state, a, idx, val)
			dots[a], quads[a] = sparseTerms(l, idx[:n], val[:n], w, linv)
		}
		return
	}
	r.terms(l, w, linv, dots, quads)
}

// terms sets dots and quads as [peviTerms] does, for a prepared row.
func (r *blockRow) terms(l *Layout, w, linv []float64, dots, quads []float64) {
	for a := 0; a < r.a; a++ {
		dots[a] = r.dot(w, a)
		quads[a] = r.quad(linv, l.Off[a])
	}
}

// peviBest returns max_a Qhat(s,a), Qhat = min{phi^T nu - beta
// sqrt(phi^T Lambda^{-1} phi), top}^+, bit for bit the maximum of
// [peviQ]'s values. For action-block maps it skips the quadratic form of
// every action whose phi^T nu does not exceed the best so far: with beta
// >= 0 such an action's Qhat cannot, since rounding is monotone.
func peviBest(m *features.Map, l *Layout, state []float64, nu, linv []float64, beta, top float64, q []float64, r *blockRow) float64 {
	if !r.init(m, state) {
		peviQ(m, l, state, nu, linv, beta, top, q, r)
		best := 0.0
		for _, x := range q {
			best = max(best, x)
		}
		return best
	}
	return r.peviBest(l, nu, linv, beta, top, q)
}

// peviBest is [peviBest] for a prepared row; q is scratch of length A.
func (r *blockRow) peviBest(l *Layout, nu, linv []float64, beta, top float64, q []float64) float64 {
	if beta < 0 {
		best := 0.0
		for a := 0; a < r.a; a++ {
			best = max(best, clip(r.dot(nu, a)-beta*math.Sqrt(r.quad(linv, l.Off[a])), top))
		}
		return best
	}
	// Visit the action with the largest phi^T nu first: it sets a bar
	// that most others do not pass.
	r.dots(nu, q)
	first := 0
	for a := 1; a < r.a; a++ {
		if q[a] > q[first] {
			first = a
		}
	}
	best := 0.0
	for i, a := 0, first; i < r.a; i, a = i+1, a+1 {
		if a == r.a {
			a = 0
		}
		if !(q[a] > best) {
			continue
		}
		// best >= 0 and v >= 0 or NaN: the built-in max's bits.
		if v := clip(q[a]-beta*math.Sqrt(r.quad(linv, l.Off[a])), top); v > best || v != v {
			best = v
		}
	}
	return best
}

// blockRow holds one row's normalised action-block feature (phi(s,0); phi(s,a)
// is the same in block a) with its pairwise products and packed positions,
// so that every action's terms cost a few multiplications.
type blockRow struct {
	n, p, a int
	paired  bool // vv and tp hold this row's products
	idx     [8]int
	val     [8]float64
	vv      [64]float64
	tp      [64]int
}

// init prepares r for state and reports whether the fast path applies
// (action-block maps with p <= 8).
func (r *blockRow) init(m *features.Map, state []float64) bool {
	if m.Kind != features.ActionBlock || m.P > len(r.idx) {
		return false
	}
	var ibuf [8]int32
	r.n = m.Phi(state, 0, ibuf[:], r.val[:])
	r.p, r.a = m.P, m.A
	for x := 0; x < r.n; x++ {
		r.idx[x] = int(ibuf[x])
	}
	r.paired = false
	return true
}

// pair computes the pairwise products and packed positions that
// [blockRow.quad] needs, once per row.
func (r *blockRow) pair() {
	r.paired = true
	if r.n == 3 && r.p == 3 {
		// quad's fixed positions need no tp; the products are the loop's
		// below, bit for bit (multiplication commutes exactly).
		v0, v1, v2 := r.val[0], r.val[1], r.val[2]
		r.vv[0], r.vv[1], r.vv[2] = v0*v0, v0*v1, v0*v2
		r.vv[3], r.vv[4], r.vv[5] = r.vv[1], v1*v1, v1*v2
		r.vv[6], r.vv[7], r.vv[8] = r.vv[2], r.vv[5], v2*v2
		return
	}
	k := 0
	for x := 0; x < r.n; x++ {
		for y := 0; y < r.n; y++ {
			rr, c := r.idx[x], r.idx[y]
			if c > rr {
				rr, c = c, rr
			}
			r.vv[k] = r.val[x] * r.val[y]
			r.tp[k] = rr*(rr+1)/2 + c
			k++
		}
	}
}

// dots sets out[a] = phi(s,a)^T w for every action, as [blockRow.dot]
// does, in one call.
func (r *blockRow) dots(w []float64, out []float64) {
	p := r.p
	if r.n == 3 && p == 3 {
		// Every coordinate nonzero: idx is 0, 1, 2.
		v0, v1, v2 := r.val[0], r.val[1], r.val[2]
		w, out := w[:3*r.a], out[:r.a]
		for a := range out {
			k := 3 * a
			dot := 0.0
			dot += v0 * w[k]
			dot += v1 * w[k+1]
			dot += v2 * w[k+2]
			out[a] = dot
		}
		return
	}
	if r.n == 3 {
		v0, v1, v2 := r.val[0], r.val[1], r.val[2]
		i0, i1, i2 := r.idx[0], r.idx[1], r.idx[2]
		for a := 0; a < r.a; a++ {
			wb := w[a*p : a*p+p]
			dot := 0.0
			dot += v0 * wb[i0]
			dot += v1 * wb[i1]
			dot += v2 * wb[i2]
			out[a] = dot
		}
		return
	}
	for a := 0; a < r.a; a++ {
		out[a] = r.dot(w, a)
	}
}

// dot returns phi(s,a)^T w, summed in the order of [features.Map.Dot].
func (r *blockRow) dot(w []float64, a int) float64 {
	wb := w[a*r.p : (a+1)*r.p]
	dot := 0.0
	if r.n == 3 {
		dot += r.val[0] * wb[r.idx[0]]
		dot += r.val[1] * wb[r.idx[1]]
		dot += r.val[2] * wb[r.idx[2]]
		return dot
	}
	for x := 0; x < r.n; x++ {
		dot += r.val[x] * wb[r.idx[x]]
	}
	return dot
}

// quad returns phi(s,a)^T Lambda^{-1} phi(s,a) (clamped at 0) for the
// block whose packed inverse starts at off, summed in the order of
// [sparseTerms].
func (r *blockRow) quad(linv []float64, off int) float64 {
	if !r.paired {
		r.pair()
	}
	quad := 0.0
	if r.n == 3 && r.p == 3 {
		// Every coordinate nonzero: the packed positions of the pairs
		// (x, y) are fixed.
		lb := linv[off : off+6 : off+6]
		vv := &r.vv
		quad += vv[0] * lb[0]
		quad += vv[1] * lb[1]
		quad += vv[2] * lb[3]
		quad += vv[3] * lb[1]
		quad += vv[4] * lb[2]
		quad += vv[5] * lb[4]
		quad += vv[6] * lb[3]
		quad += vv[7] * lb[4]
		quad += vv[8] * lb[5]
		return nonneg(quad)
	}
	lb := linv[off : off+r.p*(r.p+1)/2]
	if r.n == 3 {
		vv, tp := &r.vv, &r.tp
		quad += vv[0] * lb[tp[0]]
		quad += vv[1] * lb[tp[1]]
		quad += vv[2] * lb[tp[2]]
		quad += vv[3] * lb[tp[3]]
		quad += vv[4] * lb[tp[4]]
		quad += vv[5] * lb[tp[5]]
		quad += vv[6] * lb[tp[6]]
		quad += vv[7] * lb[tp[7]]
		quad += vv[8] * lb[tp[8]]
		return nonneg(quad)
	}
	for k := 0; k < r.n*r.n; k++ {
		quad += r.vv[k] * lb[r.tp[k]]
	}
	return nonneg(quad)
}

// WithPenalty returns a solver over the same statistics whose penalty
// settings (C, Xi, Beta) are those of s. It shares the factorisations,
// which do not depend on the penalty, so a penalty path costs one
// backward pass per point and no refactorisation.
func (sv *Solver) WithPenalty(s Settings) *Solver {
	c := *sv
	c.settings.C, c.settings.Xi, c.settings.Beta, c.settings.BetaSet = s.C, s.Xi, s.Beta, s.BetaSet
	c.runs = nil
	return &c
}

// SampleRows is the number of data rows above which diagnostics of
// combined policies (pevi-avg, pevi-min, policies read from files) and the
// disagreement between methods are computed on a systematic sample: every
// ceil(rows/SampleRows)-th row in step order. Shares estimated from 200,000
// rows are within about 0.2 percentage points.
const SampleRows = 200_000

// sampleRows is SampleRows; tests lower it to exercise the sample.
var sampleRows = SampleRows

// strideFor returns the stride of the systematic sample of rows rows.
func strideFor(rows int) int {
	return max(1, (rows+sampleRows-1)/sampleRows)
}

// SampleStride returns the stride of the systematic sample of t's rows.
func SampleStride(t *traj.Table) int {
	return strideFor(t.Rows)
}

// ActAll returns p's recommended action and whether it has evidence at
// every stride-th row of t, rows in step order (step 1's rows, then step
// 2's, ...), computed in parallel; the result does not depend on workers.
func ActAll(ctx context.Context, p *Policy, t *traj.Table, workers, stride int) ([]int32, []bool, error) {
	acts, evs, err := ActAllMany(ctx, []*Policy{p}, t, workers, stride)
	if err != nil {
		return nil, nil, err
	}
	return acts[0], evs[0], nil
}

// ActAllMany is [ActAll] for several policies in one sweep: pevi-avg and
// pevi-min policies over the same runs share each run's terms at each row,
// and PEVI policies compute the Qhat of only the actions that could be
// chosen (see decideLazy).
func ActAllMany(ctx context.Context, ps []*Policy, t *traj.Table, workers, stride int) ([][]int32, [][]bool, error) {
	stride = max(stride, 1)
	off := make([]int, t.H+1)
	for h := 1; h <= t.H; h++ {
		off[h] = off[h-1] + t.Steps[h-1].Len()
	}
	n := (off[t.H] + stride - 1) / stride
	actions := make([][]int32, len(ps))
	evidence := make([][]bool, len(ps))
	// share[i] is the earlier policy whose runs policy i combines too, or -1.
	share := make([]int, len(ps))
	for i, p := range ps {
		actions[i], evidence[i] = make([]int32, n), make([]bool, n)
		share[i] = -1
		for j := 0; j < i && combinesRuns(p); j++ {
			if combinesRuns(ps[j]) && sameRuns(p, ps[j]) {
				share[i] = j
				break
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workersOr(workers))
	for h := 1; h <= t.H; h++ {
		step := &t.Steps[h-1]
		for _, c := range chunkRanges(step.Len(), 16) {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				q := make([]float64, t.A)
				// PEVI policies decide lazily (decideLazy) from lrs[i],
				// prepared at each row when lazy[i]; a policy over the
				// same runs as an earlier one uses that one's.
				lrs := make([]lazyRuns, len(ps))
				lazy := make([]bool, len(ps))
				var row blockRow
				// The first global row index >= off+c[0] that is a multiple
				// of stride.
				first := (off[h-1] + c[0] + stride - 1) / stride * stride
				for gj := first; gj < off[h-1]+c[1]; gj += stride {
					j := gj - off[h-1]
					state := step.State[j*t.W : (j+1)*t.W]
					for i, p := range ps {
						var a int
						var ev, done bool
						if p.penalty() == pevi {
							src := i
							if share[i] >= 0 {
								src = share[i]
								// A policy in between may have prepared
								// the row for another map: the shared
								// terms need it as src prepared it.
								if lazy[src] {
									row.init(&ps[src].Map, state)
								}
							} else {
								lazy[i] = row.init(&p.Map, state) && lrs[i].init(p, h, &row)
							}
							if lazy[src] {
								a, _, ev, done = p.decideLazy(h, state, &lrs[src])
							}
						}
						if !done {
							a, _, ev = p.act(h, state, q, &row)
						}
						actions[i][gj/stride], evidence[i][gj/stride] = int32(a), ev
					}
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return actions, evidence, nil
}

// combinesRuns reports whether p combines several PEVI runs.
func combinesRuns(p *Policy) bool {
	return p.Method == PEVIAvg || p.Method == PEVIMin
}

// sameRuns reports whether p and o hold the same runs (the same
// coefficients, shared by a solver's cache, and the same betas).
func sameRuns(p, o *Policy) bool {
	if len(p.Runs) != len(o.Runs) || p.H != o.H || p.Map.Kind != o.Map.Kind {
		return false
	}
	for r := range p.Runs {
		a, b := &p.Runs[r], &o.Runs[r]
		if a.Beta != b.Beta || len(a.Steps) == 0 || len(a.Steps) != len(b.Steps) || &a.Steps[0] != &b.Steps[0] {
			return false
		}
	}
	return true
}
